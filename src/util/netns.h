/*
 * Sockets made in another network namespace. A netlink socket answers for
 * the namespace it was made in, so reading another namespace (a container's
 * TCP sockets or addresses, the host's interfaces from inside a container)
 * means entering it for the socket() call only, then coming back.
 */
#ifndef NODESCOPE_UTIL_NETNS_H
#define NODESCOPE_UTIL_NETNS_H

#include <stdbool.h>

/*
 * Calls open_fn inside the network namespace of ns_path (e.g.
 * "/proc/PID/ns/net") and returns its result, back in the caller's own
 * namespace. When ns_path is the caller's own namespace, open_fn is just
 * called. -errno when the namespace cannot be opened or entered (its
 * processes are gone, or no CAP_SYS_ADMIN).
 */
int netns_socket(const char *ns_path, int (*open_fn)(void));

/* Whether ns_path names the caller's own network namespace (false when it cannot be read). */
bool netns_is_own(const char *ns_path);

#endif
