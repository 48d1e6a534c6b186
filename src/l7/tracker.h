/*
 * The L7 pipeline: l7 stream records -> per-connection protocol state ->
 * request/response pairs -> metrics (Coroot node agent names) and trace.
 */
#ifndef NODESCOPE_L7_TRACKER_H
#define NODESCOPE_L7_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct metric_registry;
struct proc_table;
struct trace;
struct l7_tracker;
struct ns_l7_sock;
struct ns_globs;

struct l7_tracker_opts {
	struct metric_registry *registry;
	struct proc_table *procs;
	struct trace *trace; /* may be NULL */
	size_t max_connections;
	unsigned max_series;
	unsigned max_fqdns; /* DNS domains per container (0: 50) */
	/* Coroot's --exclude-http-requests-by-path (NULL: none); outlives the tracker. */
	const struct ns_globs *http_exclude;
	/*
	 * An outbound connection's destination and actual_destination labels
	 * (tcp_tracker_destination; pid: the process that read or wrote it),
	 * TCP_ADDR_STRLEN bytes each; false: Coroot leaves the destination out,
	 * and its requests are not counted. May be NULL: the address, not
	 * translated, kept.
	 */
	bool (*destination)(void *ctx, const struct ns_l7_sock *s, uint32_t pid, char *dest,
			    char *actual);
	void *destination_ctx;
};

int l7_tracker_new(const struct l7_tracker_opts *o, struct l7_tracker **out);
void l7_tracker_free(struct l7_tracker *t);
/* stream_record_fn for the l7 stream. */
int l7_tracker_on_record(void *ctx, const void *data, size_t len);
/* The DNS side's l7_dns_fan_out_domain. */
const char *l7_tracker_fan_out_domain(const struct l7_tracker *t, int family, const uint8_t *addr);
/*
 * The connection ended, as TCP sees it: its state is kept for a grace period,
 * since records of it can still be unread or unmade (a reset connection's
 * queued bytes are read after the close).
 */
void l7_tracker_conn_closed(struct l7_tracker *t, uint64_t sock, uint64_t start_ns, uint64_t now_ns);
/* Forgets connections closed longer than the grace period ago (now_ns 0: all closed ones). */
void l7_tracker_reap(struct l7_tracker *t, uint64_t now_ns);

#endif
