#include "identity.h"

#include <stdio.h>
#include <string.h>

#include "util/file.h"

#define DMI_PRODUCT_UUID "/sys/devices/virtual/dmi/id/product_uuid"

void node_identity_clean(const char *text, int drop_dashes, char *out, size_t size)
{
	size_t n = 0;

	while (*text == ' ' || *text == '\t' || *text == '\n' || *text == '\r')
		text++;
	for (; *text && *text != '\n' && *text != '\r' && n + 1 < size; text++) {
		if (drop_dashes && *text == '-')
			continue;
		out[n++] = *text;
	}
	while (n && (out[n - 1] == ' ' || out[n - 1] == '\t'))
		n--;
	out[n] = '\0';
}

/* One id file under root into out; 0 when it held something. */
static int read_id(const char *root, const char *path, int drop_dashes, char *out, size_t size)
{
	char full[512], text[NODE_ID_MAX * 2];

	snprintf(full, sizeof(full), "%s%s", root, path);
	if (file_read_small(full, text, sizeof(text)) <= 0)
		return -1;
	node_identity_clean(text, drop_dashes, out, size);
	return out[0] ? 0 : -1;
}

void node_identity_read(const char *root, struct node_identity *out)
{
	*out = (struct node_identity){ 0 };
	read_id(root, DMI_PRODUCT_UUID, 0, out->system_uuid, sizeof(out->system_uuid));
	if (read_id(root, "/etc/machine-id", 0, out->machine_id, sizeof(out->machine_id)) &&
	    read_id(root, "/var/lib/dbus/machine-id", 0, out->machine_id, sizeof(out->machine_id)))
		read_id(root, DMI_PRODUCT_UUID, 1, out->machine_id, sizeof(out->machine_id));
}
