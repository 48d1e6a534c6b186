/*
 * node_info's hostname and kernel release, taken in PID 1's UTS namespace as
 * Coroot does: an agent in a container names the host, not its container.
 */
#ifndef NODESCOPE_NODE_UNAME_H
#define NODESCOPE_NODE_UNAME_H

#define NODE_UNAME_MAX 65 /* __NEW_UTS_LEN + 1 */

struct node_uname {
	char hostname[NODE_UNAME_MAX];
	char kernel_version[NODE_UNAME_MAX];
};

/*
 * Fills out from PID 1's UTS namespace. When it cannot be entered, the
 * agent's own is used and -errno returned (the caller says so).
 */
int node_uname_host(struct node_uname *out);

#endif
