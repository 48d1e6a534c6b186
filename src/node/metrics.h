/*
 * The node_* families Coroot exports (node_info, node_cloud_info, uptime,
 * CPU, memory, disks, network interfaces), read when /metrics is scraped
 * through a registry collector: no timer, no thread, nothing at rest. A
 * source that is missing or malformed costs a count in
 * nodescope_node_read_errors_total{source} and its families show nothing
 * at that scrape, never a wrong value. node_cloud_info is set at the start
 * from DMI and the flags, and again when the provider's metadata service
 * has answered (asked once, by node/cloud_fetch.h, through the loop).
 */
#ifndef NODESCOPE_NODE_METRICS_H
#define NODESCOPE_NODE_METRICS_H

#include <stdbool.h>

#include "metrics/registry.h"
#include "node/cloud.h"

struct node_metrics;
struct loop;

struct node_metrics_opts {
	struct metric_registry *registry;
	const char *proc_root;	 /* where stat, meminfo, uptime, diskstats are read: "/proc" */
	const char *dmi_root;	 /* where /sys is read for DMI: "" (sysfs is the host's, as Coroot reads it) */
	struct node_cloud_flags cloud;
	struct loop *loop;	 /* where the metadata service's answer arrives; NULL: not asked */
	/* Called with node_cloud_info's zone and region each time they are set ("" when unknown). */
	void (*on_zone)(void *ctx, const char *availability_zone, const char *region);
	void *zone_ctx;
	bool no_net;		 /* tests: no node_net_* (no netlink socket) */
};

/* Registers the families and the collector; 0 or -errno. */
int node_metrics_new(const struct node_metrics_opts *o, struct node_metrics **out);
/* After the registry is gone or will not be written again. NULL-safe. */
void node_metrics_free(struct node_metrics *n);

#endif
