/*
 * node_cloud_info's labels: the cloud provider as Coroot tells it from DMI,
 * what DMI says besides (an EC2 Nitro instance's id), what the provider's
 * metadata service answers (node/cloud_meta.h, asked by node/cloud_fetch.h),
 * and the --provider, --region, --availability-zone, --instance-type and
 * --instance-life-cycle flags, which win as in Coroot.
 */
#ifndef NODESCOPE_NODE_CLOUD_H
#define NODESCOPE_NODE_CLOUD_H

#include <stddef.h>

/* Coroot's label set, in its order. */
enum node_cloud_label {
	NODE_CLOUD_PROVIDER,
	NODE_CLOUD_ACCOUNT_ID,
	NODE_CLOUD_INSTANCE_ID,
	NODE_CLOUD_INSTANCE_TYPE,
	NODE_CLOUD_INSTANCE_LIFE_CYCLE,
	NODE_CLOUD_REGION,
	NODE_CLOUD_AVAILABILITY_ZONE,
	NODE_CLOUD_AVAILABILITY_ZONE_ID,
	NODE_CLOUD_LOCAL_IPV4,
	NODE_CLOUD_PUBLIC_IPV4,
	NODE_CLOUD_LABELS
};

extern const char *const node_cloud_label_names[NODE_CLOUD_LABELS];

#define NODE_DMI_MAX 128

/* The DMI (and Xen) files Coroot looks at, trimmed; "" when absent. */
struct node_dmi {
	char hypervisor_uuid[NODE_DMI_MAX];   /* /sys/hypervisor/uuid (EC2 on Xen) */
	char board_vendor[NODE_DMI_MAX];      /* /sys/class/dmi/id/board_vendor */
	char sys_vendor[NODE_DMI_MAX];	      /* .../sys_vendor */
	char chassis_vendor[NODE_DMI_MAX];    /* .../chassis_vendor */
	char chassis_asset_tag[NODE_DMI_MAX]; /* .../chassis_asset_tag */
	char board_asset_tag[NODE_DMI_MAX];   /* .../board_asset_tag (EC2 Nitro: the instance id) */
};

struct node_cloud_flags {
	const char *provider, *region, *availability_zone, *instance_type, *instance_life_cycle;
};

struct node_cloud {
	char v[NODE_CLOUD_LABELS][NODE_DMI_MAX];
};

/* The labels from dmi and the flags (NULL or "": not given). Pure. */
void node_cloud_detect(const struct node_dmi *dmi, const struct node_cloud_flags *flags,
		       struct node_cloud *out);

/* The provider DMI names ("AWS", ..., "" for none), by Coroot's rules. Pure. */
const char *node_cloud_provider(const struct node_dmi *dmi);

/* The service's non-empty labels over c, then the flags over both. Pure. */
void node_cloud_apply(struct node_cloud *c, const struct node_cloud *service,
		      const struct node_cloud_flags *flags);

/* Reads the DMI files under root ("" for the agent's own view). Returns how many were found. */
int node_dmi_read(const char *root, struct node_dmi *out);

#endif
