#include "metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node/cloud_fetch.h"
#include "node/diskstats.h"
#include "node/meminfo.h"
#include "node/net.h"
#include "node/netlink.h"
#include "node/stat.h"
#include "node/uname.h"
#include "util/file.h"
#include "util/strbuf.h"
#include "util/log.h"

/*
 * The metadata service's whole exchange (AWS: ten requests) within this:
 * Coroot's per-request timeout, once, so a dead service costs 5 s in a
 * thread and not ten times that.
 */
#define CLOUD_DEADLINE_MS 5000

/* A /proc table larger than this is no /proc table. */
#define PROC_FILE_MAX (16u << 20)

enum node_source {
	SRC_STAT,
	SRC_UPTIME,
	SRC_MEMINFO,
	SRC_DISKSTATS,
	SRC_NETLINK,
	SRC_COUNT
};

static const char *const source_names[SRC_COUNT] = {
	"stat", "uptime", "meminfo", "diskstats", "netlink",
};

struct node_metrics {
	struct metric_registry *registry;
	char proc_root[256];
	double user_hz;
	int net_fd; /* -1: no node_net_* */
	struct strbuf text; /* the file being parsed, kept between scrapes */
	struct node_link *links; /* the kept interfaces of the last link dump */
	size_t n_links, cap_links;
	bool links_oom;
	struct node_dmi dmi;
	struct node_cloud_flags flags;
	const char *provider;	   /* DMI's */
	struct cloud_fetch *fetch; /* while the metadata service's answer is awaited */
	void (*on_zone)(void *ctx, const char *availability_zone, const char *region);
	void *zone_ctx;
	struct metric *m_info, *m_cloud, *m_uptime, *m_cpu, *m_cores, *m_mem[NODE_MEM_FIELDS],
		*m_disk_reads, *m_disk_writes, *m_disk_read_bytes, *m_disk_written_bytes,
		*m_disk_read_time, *m_disk_write_time, *m_disk_io_time, *m_rx_bytes, *m_tx_bytes,
		*m_rx_packets, *m_tx_packets, *m_up, *m_ip, *m_errors, *m_cloud_errors;
};

#define T struct node_metrics
#define DEVICE METRIC_LABELS("device")
#define IFACE METRIC_LABELS("interface")
/* Coroot's names, types, labels and help texts (metrics/metrics.go). */
static const struct metric_def node_defs[] = {
	{ "node_info", "Meta information about the node", METRIC_GAUGE,
	  METRIC_LABELS("hostname", "kernel_version"), METRIC_HANDLE(T, m_info) },
	{ "node_cloud_info", "Meta information about the cloud instance", METRIC_GAUGE,
	  METRIC_LABELS("provider", "account_id", "instance_id", "instance_type",
			"instance_life_cycle", "region", "availability_zone", "availability_zone_id",
			"local_ipv4", "public_ipv4"),
	  METRIC_HANDLE(T, m_cloud) },
	{ "node_uptime_seconds", "Uptime of the node in seconds", METRIC_GAUGE,
	  METRIC_HANDLE(T, m_uptime) },
	{ "node_resources_cpu_usage_seconds_total", "The amount of CPU time spent in each mode",
	  METRIC_COUNTER, METRIC_LABELS("mode"), METRIC_HANDLE(T, m_cpu) },
	{ "node_resources_cpu_logical_cores", "The number of logical CPU cores", METRIC_GAUGE,
	  METRIC_HANDLE(T, m_cores) },
	{ "node_resources_memory_total_bytes", "The total amount of physical memory", METRIC_GAUGE,
	  METRIC_HANDLE(T, m_mem[NODE_MEM_TOTAL]) },
	{ "node_resources_memory_free_bytes", "The amount of unassigned memory", METRIC_GAUGE,
	  METRIC_HANDLE(T, m_mem[NODE_MEM_FREE]) },
	{ "node_resources_memory_available_bytes", "The total amount of available memory",
	  METRIC_GAUGE, METRIC_HANDLE(T, m_mem[NODE_MEM_AVAILABLE]) },
	{ "node_resources_memory_cached_bytes", "The amount of memory used as page cache",
	  METRIC_GAUGE, METRIC_HANDLE(T, m_mem[NODE_MEM_CACHED]) },
	{ "node_resources_disk_reads_total", "The total number of reads completed successfully",
	  METRIC_COUNTER, DEVICE, METRIC_HANDLE(T, m_disk_reads) },
	{ "node_resources_disk_writes_total", "The total number of writes completed successfully",
	  METRIC_COUNTER, DEVICE, METRIC_HANDLE(T, m_disk_writes) },
	{ "node_resources_disk_read_bytes_total", "The total number of bytes read from the disk",
	  METRIC_COUNTER, DEVICE, METRIC_HANDLE(T, m_disk_read_bytes) },
	{ "node_resources_disk_written_bytes_total", "The total number of bytes written to the disk",
	  METRIC_COUNTER, DEVICE, METRIC_HANDLE(T, m_disk_written_bytes) },
	{ "node_resources_disk_read_time_seconds_total", "The total number of seconds spent reading",
	  METRIC_COUNTER, DEVICE, METRIC_HANDLE(T, m_disk_read_time) },
	{ "node_resources_disk_write_time_seconds_total", "The total number of seconds spent writing",
	  METRIC_COUNTER, DEVICE, METRIC_HANDLE(T, m_disk_write_time) },
	{ "node_resources_disk_io_time_seconds_total",
	  "The total number of seconds the disk spent doing I/O", METRIC_COUNTER, DEVICE,
	  METRIC_HANDLE(T, m_disk_io_time) },
	{ "node_net_received_bytes_total", "The total number of bytes received", METRIC_COUNTER,
	  IFACE, METRIC_HANDLE(T, m_rx_bytes) },
	{ "node_net_transmitted_bytes_total", "The total number of bytes transmitted",
	  METRIC_COUNTER, IFACE, METRIC_HANDLE(T, m_tx_bytes) },
	{ "node_net_received_packets_total", "The total number of packets received",
	  METRIC_COUNTER, IFACE, METRIC_HANDLE(T, m_rx_packets) },
	{ "node_net_transmitted_packets_total", "The total number of packets transmitted",
	  METRIC_COUNTER, IFACE, METRIC_HANDLE(T, m_tx_packets) },
	{ "node_net_interface_up", "Status of the interface (0:down, 1:up)", METRIC_GAUGE, IFACE,
	  METRIC_HANDLE(T, m_up) },
	{ "node_net_interface_ip", "IP address assigned to the interface", METRIC_GAUGE,
	  METRIC_LABELS("interface", "ip"), METRIC_HANDLE(T, m_ip) },
	{ "nodescope_node_read_errors_total",
	  "Reads of a node source (/proc/stat, uptime, meminfo, diskstats, rtnetlink) that "
	  "failed or were malformed: that scrape shows nothing from it (diskstats: malformed "
	  "lines, each skipped).",
	  METRIC_COUNTER, METRIC_LABELS("source"), METRIC_HANDLE(T, m_errors) },
	{ "nodescope_cloud_metadata_errors_total",
	  "Asks of the cloud provider's instance metadata service (once, at the start) that "
	  "failed, by why: node_cloud_info then has DMI's and the flags' values only.",
	  METRIC_COUNTER, METRIC_LABELS("reason"), METRIC_HANDLE(T, m_cloud_errors) },
};
#undef IFACE
#undef DEVICE
#undef T

static void count_error(struct node_metrics *n, enum node_source s, unsigned times)
{
	metric_add(n->m_errors, &source_names[s], times);
}

/* Reads proc_root/name into n->text; counts an error for s and returns -1 if it cannot. */
static int read_proc(struct node_metrics *n, const char *name, enum node_source s)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", n->proc_root, name);
	if (file_read_all(path, &n->text, PROC_FILE_MAX) < 0) {
		count_error(n, s, 1);
		return -1;
	}
	return 0;
}

static void collect_cpu(struct node_metrics *n)
{
	struct node_cpu cpu;

	metric_clear(n->m_cpu);
	metric_clear(n->m_cores);
	if (read_proc(n, "stat", SRC_STAT))
		return;
	if (node_stat_parse(strbuf_str(&n->text), &cpu)) {
		count_error(n, SRC_STAT, 1);
		return;
	}
	for (int m = 0; m < NODE_CPU_MODES; m++)
		metric_set(n->m_cpu, &node_cpu_mode_names[m], (double)cpu.ticks[m] / n->user_hz);
	metric_set(n->m_cores, NULL, cpu.logical_cores);
}

static void collect_uptime(struct node_metrics *n)
{
	double up;

	metric_clear(n->m_uptime);
	if (read_proc(n, "uptime", SRC_UPTIME))
		return;
	if (node_uptime_parse(strbuf_str(&n->text), &up)) {
		count_error(n, SRC_UPTIME, 1);
		return;
	}
	metric_set(n->m_uptime, NULL, up);
}

static void collect_memory(struct node_metrics *n)
{
	struct node_mem mem;

	for (int f = 0; f < NODE_MEM_FIELDS; f++)
		metric_clear(n->m_mem[f]);
	if (read_proc(n, "meminfo", SRC_MEMINFO))
		return;
	if (node_meminfo_parse(strbuf_str(&n->text), &mem)) {
		count_error(n, SRC_MEMINFO, 1);
		return;
	}
	for (int f = 0; f < NODE_MEM_FIELDS; f++)
		if (mem.have & (1u << f))
			metric_set(n->m_mem[f], NULL, (double)mem.bytes[f]);
}

static void on_disk(void *ctx, const struct node_disk *d)
{
	struct node_metrics *n = ctx;
	const char *dev = d->name;

	if (!node_disk_kept(dev))
		return;
	metric_set(n->m_disk_reads, &dev, (double)d->reads);
	metric_set(n->m_disk_writes, &dev, (double)d->writes);
	metric_set(n->m_disk_read_bytes, &dev, (double)d->read_sectors * 512);
	metric_set(n->m_disk_written_bytes, &dev, (double)d->written_sectors * 512);
	metric_set(n->m_disk_read_time, &dev, (double)d->read_ms / 1000);
	metric_set(n->m_disk_write_time, &dev, (double)d->write_ms / 1000);
	metric_set(n->m_disk_io_time, &dev, (double)d->io_ms / 1000);
}

static void collect_disks(struct node_metrics *n)
{
	struct metric *fams[] = { n->m_disk_reads,     n->m_disk_writes,     n->m_disk_read_bytes,
				  n->m_disk_written_bytes, n->m_disk_read_time, n->m_disk_write_time,
				  n->m_disk_io_time };
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
		metric_clear(fams[i]);
	if (read_proc(n, "diskstats", SRC_DISKSTATS))
		return;
	unsigned bad = node_diskstats_parse(strbuf_str(&n->text), on_disk, n);
	if (bad)
		count_error(n, SRC_DISKSTATS, bad);
}

/* The kept interfaces of a link dump, for the address dump that follows. */
static void on_link(void *ctx, const struct node_link *l)
{
	struct node_metrics *n = ctx;

	if (!node_net_name_kept(l->name))
		return;
	if (n->n_links == n->cap_links) {
		size_t cap = n->cap_links ? n->cap_links * 2 : 16;
		struct node_link *p = realloc(n->links, cap * sizeof(*p));
		if (!p) {
			n->links_oom = true;
			return;
		}
		n->links = p;
		n->cap_links = cap;
	}
	n->links[n->n_links++] = *l;
}

static void on_addr(void *ctx, const struct node_addr *a)
{
	struct node_metrics *n = ctx;
	char ip[INET6_ADDRSTRLEN];

	if (!node_net_ip_kept(a->family, a->ip) || !inet_ntop(a->family, a->ip, ip, sizeof(ip)))
		return;
	for (size_t i = 0; i < n->n_links; i++) {
		if (n->links[i].index != a->index)
			continue;
		const char *labels[] = { n->links[i].name, ip };
		metric_set(n->m_ip, labels, 1);
		return;
	}
}

static void collect_net(struct node_metrics *n)
{
	struct metric *fams[] = { n->m_rx_bytes, n->m_tx_bytes, n->m_rx_packets,
				  n->m_tx_packets, n->m_up,	  n->m_ip };
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
		metric_clear(fams[i]);
	if (n->net_fd < 0)
		return;
	n->n_links = 0;
	n->links_oom = false;
	if (node_netlink_dump(n->net_fd, RTM_GETLINK, on_link, NULL, n) || n->links_oom) {
		count_error(n, SRC_NETLINK, 1);
		return;
	}
	for (size_t i = 0; i < n->n_links; i++) {
		const struct node_link *l = &n->links[i];
		const char *name = l->name;
		metric_set(n->m_rx_bytes, &name, (double)l->rx_bytes);
		metric_set(n->m_tx_bytes, &name, (double)l->tx_bytes);
		metric_set(n->m_rx_packets, &name, (double)l->rx_packets);
		metric_set(n->m_tx_packets, &name, (double)l->tx_packets);
		metric_set(n->m_up, &name, l->up);
	}
	if (n->n_links && node_netlink_dump(n->net_fd, RTM_GETADDR, NULL, on_addr, n)) {
		metric_clear(n->m_ip); /* half a list of addresses is a wrong one */
		count_error(n, SRC_NETLINK, 1);
	}
}

static void node_collect(void *ctx)
{
	struct node_metrics *n = ctx;

	collect_cpu(n);
	collect_uptime(n);
	collect_memory(n);
	collect_disks(n);
	collect_net(n);
}

/* node_cloud_info from DMI, the service's labels and the flags, and the zone to the agent. */
static void set_cloud(struct node_metrics *n, const struct node_cloud *service)
{
	struct node_cloud cloud;

	node_cloud_detect(&n->dmi, &n->flags, &cloud);
	node_cloud_apply(&cloud, service, &n->flags);
	const char *labels[NODE_CLOUD_LABELS];
	for (int i = 0; i < NODE_CLOUD_LABELS; i++)
		labels[i] = cloud.v[i];
	metric_clear(n->m_cloud);
	metric_set(n->m_cloud, labels, 1);
	if (n->on_zone)
		n->on_zone(n->zone_ctx, cloud.v[NODE_CLOUD_AVAILABILITY_ZONE],
			   cloud.v[NODE_CLOUD_REGION]);
}

static void on_cloud_answer(void *ctx, const struct cloud_result *r)
{
	struct node_metrics *n = ctx;

	cloud_fetch_free(n->fetch);
	n->fetch = NULL;
	if (r->netns[0])
		log_warn("cloud metadata: %s: the %s service was asked from the agent's own "
			 "network namespace",
			 r->netns, n->provider);
	if (r->outcome != CLOUD_ANSWERED) {
		log_warn("cloud metadata: the %s service did not answer (%s): node_cloud_info "
			 "has DMI's and the flags' values only",
			 n->provider, r->error);
		metric_add(n->m_cloud_errors, &cloud_outcome_names[r->outcome], 1);
		return;
	}
	log_info("cloud metadata: %s answered: region \"%s\", zone \"%s\", instance type \"%s\"",
		 n->provider, r->cloud.v[NODE_CLOUD_REGION],
		 r->cloud.v[NODE_CLOUD_AVAILABILITY_ZONE], r->cloud.v[NODE_CLOUD_INSTANCE_TYPE]);
	set_cloud(n, &r->cloud);
}

/*
 * node_info, and node_cloud_info from what is known locally; then, as
 * Coroot at its start, the provider's metadata service is asked once.
 */
static void set_info(struct node_metrics *n, const struct node_metrics_opts *o)
{
	struct node_uname u;

	int err = node_uname_host(&u);
	if (err) {
		log_warn("cannot enter PID 1's UTS namespace (%s): node_info names "
			 "the agent's own host name",
			 strerror(-err));
	}
	const char *info[] = { u.hostname, u.kernel_version };
	metric_set(n->m_info, info, 1);

	node_dmi_read(o->dmi_root ? o->dmi_root : "", &n->dmi);
	n->flags = o->cloud;
	n->provider = node_cloud_provider(&n->dmi);
	set_cloud(n, &(struct node_cloud){ 0 });
	for (int r = CLOUD_ANSWERED + 1; r < CLOUD_OUTCOMES; r++)
		metric_add(n->m_cloud_errors, &cloud_outcome_names[r], 0);

	const struct cloud_provider *p = cloud_provider_find(n->provider);
	if (!o->loop || !p)
		return;
	err = cloud_fetch_start(o->loop, p, "/proc/1/ns/net", CLOUD_DEADLINE_MS, on_cloud_answer,
				n, &n->fetch);
	if (err) {
		log_warn("cloud metadata: cannot ask the %s service (%s)", n->provider,
			 strerror(-err));
		metric_add(n->m_cloud_errors, &cloud_outcome_names[CLOUD_UNREACHABLE], 1);
	}
}

int node_metrics_new(const struct node_metrics_opts *o, struct node_metrics **out)
{
	struct node_metrics *n = calloc(1, sizeof(*n));
	long hz = sysconf(_SC_CLK_TCK);

	if (!n)
		return -ENOMEM;
	n->registry = o->registry;
	n->net_fd = -1;
	n->on_zone = o->on_zone;
	n->zone_ctx = o->zone_ctx;
	/* /proc/stat counts in USER_HZ, which the kernel tells (Coroot assumes 100). */
	n->user_hz = hz > 0 ? (double)hz : 100;
	snprintf(n->proc_root, sizeof(n->proc_root), "%s", o->proc_root ? o->proc_root : "/proc");
	if (metric_register_defs(o->registry, node_defs, METRIC_DEFS_COUNT(node_defs), n, 0)) {
		free(n);
		return -EINVAL;
	}
	for (int s = 0; s < SRC_COUNT; s++)
		count_error(n, s, 0); /* every source shows 0 until it fails */
	if (!o->no_net) {
		n->net_fd = node_net_host_socket();
		if (n->net_fd < 0) {
			log_warn("no rtnetlink socket (%s): no node_net_* metrics",
				 strerror(-n->net_fd));
			count_error(n, SRC_NETLINK, 1);
		}
	}
	set_info(n, o);
	metric_registry_add_collector(o->registry, node_collect, n);
	*out = n;
	return 0;
}

void node_metrics_free(struct node_metrics *n)
{
	if (!n)
		return;
	cloud_fetch_free(n->fetch);
	if (n->net_fd >= 0)
		close(n->net_fd);
	strbuf_free(&n->text);
	free(n->links);
	free(n);
}
