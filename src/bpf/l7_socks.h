/*
 * The agent's side of l7_socks (bpf/sockets.bpf.h): the entries it adds for
 * connections its start-up scan found, counted in the table's filter
 * (bpf/l7_filter.h) as the BPF side counts its own.
 */
#ifndef NODESCOPE_BPF_L7_SOCKS_H
#define NODESCOPE_BPF_L7_SOCKS_H

#include <stdint.h>

struct ns_l7_sock;
struct ns_l7_filter;

/*
 * Adds (tgid, fd)'s entry unless one is there (the BPF side made it since
 * the scan: the fd was closed and reused). 0, or -errno (-EEXIST, -E2BIG).
 */
int l7_socks_adopt(int map_fd, struct ns_l7_filter *filter, uint32_t tgid, int32_t fd,
		   const struct ns_l7_sock *ls);

#endif
