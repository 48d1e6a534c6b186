/*
 * Turns tcp stream records into the connection table, the per-container
 * connection metrics (Coroot node agent names) and trace lines.
 */
#ifndef NODESCOPE_TCP_TRACKER_H
#define NODESCOPE_TCP_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ns_l7_filter;
struct ns_port_ranges;
struct ns_cidrs;

struct metric_registry;
struct proc_table;
struct trace;
struct tcp_tracker;
struct bpf_map;
struct ns_l7_sock;

struct tcp_tracker_opts {
	struct metric_registry *registry;
	struct proc_table *procs; /* pid -> container */
	struct trace *trace;	  /* may be NULL */
	struct bpf_map *drops;	  /* BPF per-CPU tracking-drop counters */
	/* The L7 side's socket table: connections found by the scan are added (NULL: not). */
	struct bpf_map *l7_socks;
	/* Its counting filter (bpf/l7_filter.h), counted with every entry added: with l7_socks. */
	struct ns_l7_filter *l7_filter;
	size_t max_connections;
	unsigned max_destinations; /* per container */
	unsigned max_series;
	/* Destination and listen ports left out of the metrics (outlives the tracker). */
	const struct ns_port_ranges *ephemeral;
	/* Coroot's --track-public-network (src/tcp/public_net.h; outlives the tracker). */
	const struct ns_cidrs *public_networks;
	/* Called before a connection's state goes, so data still queued for it is read. */
	void (*on_close)(void *ctx, uint64_t sock, uint64_t start_ns);
	void *on_close_ctx;
	/*
	 * The domain an address was answered for when Coroot keys connections
	 * to it by that domain (DNS, l7_dns_fan_out_domain), or NULL; may be NULL.
	 */
	const char *(*fan_out_domain)(void *ctx, int family, const uint8_t *addr);
	void *fan_out_ctx;
};

int tcp_tracker_new(const struct tcp_tracker_opts *o, struct tcp_tracker **out);
void tcp_tracker_free(struct tcp_tracker *t);
/* Learns the connections and listeners that already exist. */
int tcp_tracker_scan(struct tcp_tracker *t);
/*
 * An outbound connection's destination and actual_destination labels, as
 * Coroot forms them: "ip:port" and where NAT sends it ("ip:port" again
 * without NAT), or "<domain>:<port>" and "" for an address of a public
 * service's fan-out. From the table, or from conntrack when the connection
* is not in it (yet: then asked in the namespace of pid, the process that
 * used it, and the host's). Each buffer holds TCP_ADDR_STRLEN bytes. Returns
 * false when Coroot leaves the destination out (an ephemeral port, a public
 * network not tracked): its requests are not counted either.
 */
bool tcp_tracker_destination(struct tcp_tracker *t, const struct ns_l7_sock *s, uint32_t pid,
			     char *dest, char *actual);
/* stream_record_fn for the tcp stream. */
int tcp_tracker_on_record(void *ctx, const void *data, size_t len);

#endif
