/*
 * Netlink dumps (rtnetlink, sock_diag): the walk over the messages of an
 * answer, and the request-answer exchange, shared by every reader of one.
 * The walk is pure: each message's payload goes to the caller's function.
 */
#ifndef NODESCOPE_UTIL_NETLINK_H
#define NODESCOPE_UTIL_NETLINK_H

#include <stddef.h>
#include <stdint.h>

/* One message of an answer (not DONE or ERROR): 0 to go on, or an error that ends the walk. */
typedef int (*netlink_msg_fn)(void *ctx, uint16_t type, const void *data, size_t len);

/*
 * Walks one datagram of a dump's answer. Returns 1 at NLMSG_DONE, 0 when
 * more follows, -EINVAL for anything malformed (or an NLMSG_ERROR whose
 * error is no errno), the kernel's -errno at NLMSG_ERROR, or what fn
 * returned to stop.
 */
int netlink_walk(const void *buf, size_t len, netlink_msg_fn fn, void *ctx);

/*
 * Sends the dump request req (its nlmsg_seq is set here) on fd and walks
 * the answer to its end. After an error what is left of the answer is read
 * and dropped, so the next dump on fd reads only its own. 0 or -errno.
 */
int netlink_dump(int fd, void *req, size_t req_len, netlink_msg_fn fn, void *ctx);

#endif
