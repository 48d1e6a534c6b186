/*
 * Which interfaces and addresses the node_net_* families show (Coroot's
 * filters, pure), and the rtnetlink socket they are read through, made in
 * the host's network namespace.
 */
#ifndef NODESCOPE_NODE_NET_H
#define NODESCOPE_NODE_NET_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Coroot's interface filter, on the lower-cased name: names starting like
 * physical NICs, bonds and bridges (enp0s3, eth0, eno1, ens5, em1, bond0,
 * p1p1, enx<mac>, br0, vmbr0). Loopback, veths, docker0, cni0 are left out.
 */
bool node_net_name_kept(const char *name);

/* False for link-local unicast (169.254/16, fe80::/10) and multicast (224/4, ff00::/8) addresses. */
bool node_net_ip_kept(int family, const uint8_t *ip);

/*
 * A NETLINK_ROUTE socket in PID 1's network namespace (the host's, when the
 * agent runs in a container with the host's PID namespace), or in the
 * agent's own when that cannot be entered (said on stderr). -errno if none.
 */
int node_net_host_socket(void);

#endif
