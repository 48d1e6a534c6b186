#include "cloud.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "node/identity.h"
#include "util/file.h"

const char *const node_cloud_label_names[NODE_CLOUD_LABELS] = {
	"provider",	      "account_id", "instance_id",	    "instance_type",
	"instance_life_cycle", "region",     "availability_zone", "availability_zone_id",
	"local_ipv4",	      "public_ipv4",
};

/* Coroot's provider names, from the same DMI values it tests, in its order. */
const char *node_cloud_provider(const struct node_dmi *d)
{
	static const struct { const char *board, *sys, *provider; } vendors[] = {
		{ "Amazon EC2", NULL, "AWS" },
		{ "Google", NULL, "GCP" },
		{ "Microsoft Corporation", NULL, "Azure" },
		{ "DigitalOcean", NULL, "DigitalOcean" },
		{ NULL, "Hetzner", "Hetzner" },
		{ NULL, "Alibaba Cloud", "Alibaba" },
		{ NULL, "Scaleway", "Scaleway" },
	};

	if (!strncasecmp(d->hypervisor_uuid, "ec2", 3))
		return "AWS";
	for (size_t i = 0; i < sizeof(vendors) / sizeof(vendors[0]); i++)
		if (vendors[i].board && !strcmp(d->board_vendor, vendors[i].board))
			return vendors[i].provider;
	for (size_t i = 0; i < sizeof(vendors) / sizeof(vendors[0]); i++)
		if (vendors[i].sys && !strcmp(d->sys_vendor, vendors[i].sys))
			return vendors[i].provider;
	if (!strncmp(d->chassis_vendor, "IBM:Cloud Compute Server", 24))
		return "IBM";
	if (!strcmp(d->chassis_asset_tag, "OracleCloud.com"))
		return "Oracle";
	return "";
}

/* An EC2 instance id: "i-" and hex digits. */
static int is_instance_id(const char *s)
{
	if (strncmp(s, "i-", 2) || !s[2])
		return 0;
	for (s += 2; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return 0;
	return 1;
}

static void put(struct node_cloud *out, enum node_cloud_label l, const char *v)
{
	if (v && *v)
		snprintf(out->v[l], sizeof(out->v[l]), "%s", v);
}

void node_cloud_detect(const struct node_dmi *dmi, const struct node_cloud_flags *flags,
		       struct node_cloud *out)
{
	*out = (struct node_cloud){ 0 };
	put(out, NODE_CLOUD_PROVIDER, node_cloud_provider(dmi));
	if (!strcmp(out->v[NODE_CLOUD_PROVIDER], "AWS") && is_instance_id(dmi->board_asset_tag))
		put(out, NODE_CLOUD_INSTANCE_ID, dmi->board_asset_tag);
	node_cloud_apply(out, &(struct node_cloud){ 0 }, flags);
}

void node_cloud_apply(struct node_cloud *c, const struct node_cloud *service,
		      const struct node_cloud_flags *flags)
{
	for (int l = 0; l < NODE_CLOUD_LABELS; l++)
		put(c, l, service->v[l]);
	put(c, NODE_CLOUD_PROVIDER, flags->provider);
	put(c, NODE_CLOUD_REGION, flags->region);
	put(c, NODE_CLOUD_AVAILABILITY_ZONE, flags->availability_zone);
	put(c, NODE_CLOUD_INSTANCE_TYPE, flags->instance_type);
	put(c, NODE_CLOUD_INSTANCE_LIFE_CYCLE, flags->instance_life_cycle);
}

static int read_one(const char *root, const char *path, char *out)
{
	char full[512], text[NODE_DMI_MAX * 2];

	snprintf(full, sizeof(full), "%s%s", root, path);
	if (file_read_small(full, text, sizeof(text)) < 0)
		return 0;
	node_identity_clean(text, 0, out, NODE_DMI_MAX);
	return 1;
}

int node_dmi_read(const char *root, struct node_dmi *out)
{
#define DMI "/sys/class/dmi/id/"
	*out = (struct node_dmi){ 0 };
	return read_one(root, "/sys/hypervisor/uuid", out->hypervisor_uuid) +
	       read_one(root, DMI "board_vendor", out->board_vendor) +
	       read_one(root, DMI "sys_vendor", out->sys_vendor) +
	       read_one(root, DMI "chassis_vendor", out->chassis_vendor) +
	       read_one(root, DMI "chassis_asset_tag", out->chassis_asset_tag) +
	       read_one(root, DMI "board_asset_tag", out->board_asset_tag);
#undef DMI
}
