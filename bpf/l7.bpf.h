/* What the l7 stream's BPF files share: where a call's buffer is. */
#ifndef NODESCOPE_L7_BPF_H
#define NODESCOPE_L7_BPF_H

#include "common.bpf.h"
#include "sockets.bpf.h"

enum l7_buf_kind {
	L7_BUF_PLAIN = 0, /* read, write, recvfrom, sendto: (fd, buf) */
	L7_BUF_IOV = 1,	  /* readv, writev: (fd, iov) */
	L7_BUF_MSG = 2,	  /* recvmsg, sendmsg: (fd, msghdr) */
	L7_BUF_MMSG = 3,  /* sendmmsg, recvmmsg: (fd, mmsghdr[]) — the first message */
	L7_BUF_NONE = 4,  /* sendfile: bytes moved from a file, nothing to capture */
};


#endif
