/*
 * Sockets made in another network namespace. A netlink socket answers for
 * the namespace it was made in, so reading another namespace (a container's
 * TCP sockets, addresses or conntrack entries, the host's interfaces from
 * inside a container) means entering it for the socket() call only, then
 * coming back. "The host's" is PID 1's: the agent runs with the host's PID
 * namespace but, as Kubernetes DaemonSets run it, in a network namespace of
 * its own.
 */
#ifndef NODESCOPE_UTIL_NETNS_H
#define NODESCOPE_UTIL_NETNS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Calls open_fn inside the network namespace of ns_path (e.g.
 * "/proc/PID/ns/net") and returns its result, back in the caller's own
 * namespace. When ns_path is the caller's own namespace, open_fn is just
 * called. -errno when the namespace cannot be opened or entered (its
 * processes are gone, or no CAP_SYS_ADMIN).
 */
int netns_socket(const char *ns_path, int (*open_fn)(void));
/* The same, only into the namespace whose inode is ino: -ESTALE when ns_path names another. */
int netns_socket_of(const char *ns_path, uint64_t ino, int (*open_fn)(void));
/*
 * open_fn called in the host's (PID 1's) network namespace, or in the
 * agent's own when that cannot be entered (a warning says that `what`
 * shows the agent's own: "node_net_* show").
 */
int netns_host_socket(int (*open_fn)(void), const char *what);

/* Whether ns_path names the caller's own network namespace (false when it cannot be read). */
bool netns_is_own(const char *ns_path);
/* The inode of the namespace ns_path names, 0 when it cannot be read (its process gone). */
uint64_t netns_inode(const char *ns_path);
/* The host's (PID 1's) network namespace's inode; the agent's own when /proc/1 cannot be read. */
uint64_t netns_host_inode(void);

#endif
