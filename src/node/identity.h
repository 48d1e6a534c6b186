/*
 * The node's identity as the Coroot server keys nodes: machine_id and
 * system_uuid, on every series. Read once at start-up.
 */
#ifndef NODESCOPE_NODE_IDENTITY_H
#define NODESCOPE_NODE_IDENTITY_H

#include <stddef.h>

#define NODE_ID_MAX 128

struct node_identity {
	char machine_id[NODE_ID_MAX];  /* "" when none could be read */
	char system_uuid[NODE_ID_MAX]; /* "" on machines without DMI */
};

/*
 * Reads the identity under root ("" for the agent's own view). machine_id:
 * /etc/machine-id, else /var/lib/dbus/machine-id, else the DMI product_uuid
 * with its dashes removed; system_uuid: the DMI product_uuid. Never fails:
 * what cannot be read stays "".
 */
void node_identity_read(const char *root, struct node_identity *out);

/* The text of an id file made into a label value: trimmed, dashes dropped if asked. Pure. */
void node_identity_clean(const char *text, int drop_dashes, char *out, size_t size);

#endif
