#include "tracker.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conn_table.h"
#include "diag.h"
#include "util/clock.h"
#include "nat.h"
#include "event.h"
#include "metrics/registry.h"
#include "proc/table.h"
#include "scan.h"
#include "trace/trace.h"
#include "listen_addrs.h"
#include "bpf/l7_socks.h"
#include "public_net.h"
#include "util/netns.h"
#include "util/strmap.h"

struct tcp_tracker {
	struct tcp_tracker_opts o;
	struct tcp_conn_table conns;
	struct strmap dests;	   /* "container\ndestination" seen */
	struct strmap dest_counts; /* container -> destinations seen */
	struct tcp_nat nat;	   /* actual_destination, from conntrack */
	uint64_t n_dest_dropped, n_untracked;
	uint64_t self_netns;	   /* the inode of the agent's own network namespace (0: unknown) */
	uint64_t host_netns;	   /* PID 1's: loopback is a node's service only there */
	uint64_t n_live_missed;	   /* namespaces whose sockets could not be read at a scrape */
	uint64_t n_listen_unexpanded; /* wildcard listens shown as the wildcard */
	uint64_t n_domain_too_long;   /* fan-out destinations kept as addresses: name too long */
	uint64_t n_adopted, n_adopt_failed; /* existing connections handed to the L7 side */
	struct tcp_public_net public_net;   /* --track-public-network */
	uint64_t n_public_skipped;	    /* connects to public destinations it leaves out */

	struct metric *connects, *failed, *conn_time, *active, *listen_info, *retransmits,
		*bytes_sent, *bytes_received;
	struct metric *m_conns, *m_bpf_drops;
};

/* Indexed by enum ns_drop_reason. */
static const char *const bpf_drop_reasons[NS_DROP_COUNT] = {
	[NS_DROP_SOCKS_FULL] = "socket_table_full",
	[NS_DROP_PENDING_FULL] = "pending_table_full",
	[NS_DROP_L7_SOCKS_FULL] = "l7_socket_table_full",
	[NS_DROP_L7_CALLS_FULL] = "l7_calls_table_full",
	[NS_DROP_TLS_CALLS_FULL] = "tls_calls_table_full",
	[NS_DROP_TLS_NO_SOCKET] = "tls_socket_unknown",
	[NS_DROP_FILES_SEEN_FULL] = "files_seen_table_full",
	[NS_DROP_HOLDS_FULL] = "hold_table_full",
	[NS_DROP_L7_RECORDS_BUSY] = "l7_records_busy",
};

static void read_live_bytes(struct tcp_tracker *t);

static void count_destination(void *ctx, const char *const *values, double value)
{
	struct tcp_tracker *t = ctx;
	char key[1024];
	snprintf(key, sizeof(key), "%s\n%s", values[0], values[1]);
	int64_t *seen = strmap_upsert(&t->dests, key);
	if (!seen || *seen)
		return;
	*seen = 1;
	int64_t *n = strmap_upsert(&t->dest_counts, values[0]);
	if (n)
		(*n)++;
}

/*
 * --max-destinations counts the destinations that have series: recounted at
 * each scrape from the families, so one whose series expired frees its place.
 */
static void recount_destinations(struct tcp_tracker *t)
{
	struct strmap dests, counts;
	if (strmap_init(&dests, 65536) || strmap_init(&counts, 4096)) {
		strmap_destroy(&dests);
		return; /* kept as they are until the next scrape */
	}
	strmap_destroy(&t->dests);
	strmap_destroy(&t->dest_counts);
	t->dests = dests;
	t->dest_counts = counts;
	metric_foreach_series(t->connects, count_destination, t);
	metric_foreach_series(t->failed, count_destination, t);
	metric_foreach_series(t->active, count_destination, t);
}

static void tcp_collect(void *ctx)
{
	struct tcp_tracker *t = ctx;

	read_live_bytes(t);
	recount_destinations(t);
	tcp_nat_sweep(&t->nat);
	metric_set(t->m_conns, NULL, (double)tcp_conn_count(&t->conns));

	int ncpu = libbpf_num_possible_cpus();
	if (!t->o.drops || ncpu <= 0)
		return;
	for (uint32_t r = 0; r < NS_DROP_COUNT; r++) {
		uint64_t vals[ncpu], sum = 0;
		if (bpf_map_lookup_elem(bpf_map__fd(t->o.drops), &r, vals))
			continue;
		for (int i = 0; i < ncpu; i++)
			sum += vals[i];
		metric_set(t->m_bpf_drops, &bpf_drop_reasons[r], (double)sum);
	}
}

/* The per-container destination cap: false once the container has too many. */
static bool dest_allowed(struct tcp_tracker *t, const char *container, const char *dest)
{
	char key[1024];
	snprintf(key, sizeof(key), "%s\n%s", container, dest);
	if (strmap_get(&t->dests, key))
		return true;
	int64_t *n = strmap_upsert(&t->dest_counts, container);
	if (!n || *n >= (int64_t)t->o.max_destinations) {
		t->n_dest_dropped++;
		return false;
	}
	int64_t *seen = strmap_upsert(&t->dests, key);
	if (!seen) {
		t->n_dest_dropped++;
		return false;
	}
	*seen = 1;
	(*n)++;
	return true;
}

#define T struct tcp_tracker
static const struct metric_def tcp_metrics[] = {
	{ "container_net_tcp_successful_connects_total", "Successful outbound TCP connects.",
	  METRIC_COUNTER, METRIC_LABELS("container_id", "destination", "actual_destination"), .capped = true, .expires = true, METRIC_HANDLE(T, connects) },
	{ "container_net_tcp_failed_connects_total", "Failed outbound TCP connects.", METRIC_COUNTER,
	  METRIC_LABELS("container_id", "destination"), .capped = true, .expires = true, METRIC_HANDLE(T, failed) },
	{ "container_net_tcp_connection_time_seconds_total",
	  "Time spent in TCP handshakes of successful connects.", METRIC_COUNTER, METRIC_LABELS("container_id", "destination", "actual_destination"), .capped = true, .expires = true,
	  METRIC_HANDLE(T, conn_time) },
	{ "container_net_tcp_active_connections", "Open outbound TCP connections.", METRIC_GAUGE,
	  METRIC_LABELS("container_id", "destination", "actual_destination"), .capped = true, .expires = true, METRIC_HANDLE(T, active) },
	{ "container_net_tcp_listen_info", "TCP addresses the container listens on.", METRIC_GAUGE,
	  METRIC_LABELS("container_id", "listen_addr", "proxy"), .capped = true,
	  METRIC_HANDLE(T, listen_info) },
	{ "container_net_tcp_retransmits_total",
	  "TCP segments retransmitted on outbound connections.", METRIC_COUNTER, METRIC_LABELS("container_id", "destination", "actual_destination"), .capped = true, .expires = true,
	  METRIC_HANDLE(T, retransmits) },
	{ "container_net_tcp_bytes_sent_total",
	  "Bytes sent on outbound TCP connections (acknowledged by the peer; open ones read at "
	  "each scrape).",
	  METRIC_COUNTER, METRIC_LABELS("container_id", "destination", "actual_destination"), .capped = true, .expires = true, METRIC_HANDLE(T, bytes_sent) },
	{ "container_net_tcp_bytes_received_total",
	  "Bytes received on outbound TCP connections (open ones read at each scrape).",
	  METRIC_COUNTER, METRIC_LABELS("container_id", "destination", "actual_destination"), .capped = true, .expires = true, METRIC_HANDLE(T, bytes_received) },
	{ "nodescope_tcp_connections", "Connections and listeners in the connection table.",
	  METRIC_GAUGE, METRIC_HANDLE(T, m_conns) },
	{ "nodescope_tcp_table_refused_total", "Connections not tracked because the table was full.",
	  METRIC_COUNTER, METRIC_VALUE(T, conns.refused) },
	{ "nodescope_tcp_destinations_dropped_total",
	  "Connection metrics not recorded: the container had --max-destinations already.",
	  METRIC_COUNTER, METRIC_VALUE(T, n_dest_dropped) },
	{ "nodescope_tcp_public_destinations_skipped_total",
	  "Outbound connects left out of the metrics as Coroot's --track-public-network does: "
	  "a public destination outside the networks kept, or a link-local one.",
	  METRIC_COUNTER, METRIC_VALUE(T, n_public_skipped) },
	{ "nodescope_tcp_untracked_events_total",
	  "Close/retransmit events of connections the table did not know (opened before the "
	  "agent and not found at start-up, accepted inbound but never accepted by a process, or "
	  "whose connect event was lost).",
	  METRIC_COUNTER, METRIC_VALUE(T, n_untracked) },
	{ "nodescope_l7_existing_connections_total",
	  "Connections open before the agent started, handed to the L7 side at start.",
	  METRIC_COUNTER, METRIC_VALUE(T, n_adopted) },
	{ "nodescope_l7_existing_connections_refused_total",
	  "Connections open before the agent started whose reads and writes are not captured "
	  "(the BPF socket table full).",
	  METRIC_COUNTER, METRIC_VALUE(T, n_adopt_failed) },
	{ "nodescope_tcp_live_bytes_missed_total",
	  "Network namespaces whose open connections' bytes could not be read at a scrape "
	  "(they are counted at close).",
	  METRIC_COUNTER, METRIC_VALUE(T, n_live_missed) },
	{ "nodescope_tcp_nat_netns_failed_total",
	  "Connections whose process's network namespace could not be asked for NAT (the "
	  "process or the namespace gone before it was entered): only the host's was asked.",
	  METRIC_COUNTER, METRIC_VALUE(T, nat.n_netns_failed) },
	{ "nodescope_tcp_nat_sockets_evicted_total",
	  "Conntrack sockets of network namespaces closed to make room for another's (more "
	  "namespaces with connections than the table keeps): reopened when asked again.",
	  METRIC_COUNTER, METRIC_VALUE(T, nat.n_evicted) },
	{ "nodescope_tcp_listens_unexpanded_total",
	  "Wildcard listens (0.0.0.0, ::) shown as the wildcard, not as the addresses of their "
	  "network namespace: the process was gone, the namespace could not be read, or it had "
	  "no address to show.",
	  METRIC_COUNTER, METRIC_VALUE(T, n_listen_unexpanded) },
	{ "nodescope_tcp_domain_too_long_total",
	  "Connections to a public service's fan-out labelled by address: its domain and port "
	  "longer than the label buffer.",
	  METRIC_COUNTER, METRIC_VALUE(T, n_domain_too_long) },
	{ "nodescope_bpf_tracking_dropped_total",
	  "State the BPF side could not keep (its tables were full), by reason: what it would "
	  "have tracked is missed.",
	  METRIC_COUNTER, METRIC_LABELS("reason"), METRIC_HANDLE(T, m_bpf_drops) },
};
#undef T

int tcp_tracker_new(const struct tcp_tracker_opts *o, struct tcp_tracker **out)
{
	struct tcp_tracker *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->o = *o;
	/* netns_socket() enters and leaves other namespaces itself: only the inodes are kept. */
	t->self_netns = netns_inode("/proc/self/ns/net");
	t->host_netns = netns_host_inode();
	if (tcp_nat_init(&t->nat, t->host_netns) ||
	    tcp_conn_table_init(&t->conns, o->max_connections) ||
	    strmap_init(&t->dests, 65536) || strmap_init(&t->dest_counts, 4096) ||
	    tcp_public_net_init(&t->public_net, o->public_networks)) {
		tcp_conn_table_destroy(&t->conns);
		strmap_destroy(&t->dests);
		strmap_destroy(&t->dest_counts);
		tcp_nat_destroy(&t->nat);
		free(t);
		return -ENOMEM;
	}
	tcp_public_net_read_node(&t->public_net);
	struct metric_registry *r = o->registry;
	if (metric_register_defs(r, tcp_metrics, METRIC_DEFS_COUNT(tcp_metrics), t,
				 o->max_series)) {
		tcp_tracker_free(t);
		return -EINVAL;
	}
	metric_registry_add_collector(r, tcp_collect, t);
	*out = t;
	return 0;
}

void tcp_tracker_free(struct tcp_tracker *t)
{
	if (!t)
		return;
	tcp_conn_table_destroy(&t->conns);
	tcp_nat_destroy(&t->nat);
	strmap_destroy(&t->dests);
	strmap_destroy(&t->dest_counts);
	tcp_public_net_destroy(&t->public_net);
	free(t);
}

/* Labels of an outbound connection's per-destination series. */
static void dest_series(const struct tcp_conn *c, const char *labels[3])
{
	labels[0] = c->container;
	labels[1] = c->peer;
	labels[2] = c->actual;
}

/*
 * Coroot's key for an address of a domain with several addresses, all
 * external: "<domain>:<port>" and no actual destination. A name too long
 * for the label buffer keeps the address (counted).
 */
static void name_by_domain(struct tcp_tracker *t, int family, const uint8_t *daddr, uint16_t dport,
			   char *dest, char *actual)
{
	const char *fqdn = t->o.fan_out_domain ? t->o.fan_out_domain(t->o.fan_out_ctx, family, daddr)
					       : NULL;
	char named[TCP_ADDR_STRLEN];
	if (!fqdn)
		return;
	if ((size_t)snprintf(named, sizeof(named), "%s:%u", fqdn, dport) >= sizeof(named)) {
		t->n_domain_too_long++;
		return;
	}
	memcpy(dest, named, sizeof(named));
	actual[0] = 0;
}

/* listen_info of c's addresses (a wildcard's, expanded, or its own) moved by delta; gone at 0. */
static void listen_count(struct tcp_tracker *t, const struct tcp_conn *c, int delta)
{
	/* proxy: Coroot's "dockerd" for docker's port bindings; the server takes any value as proxied */
	const char *labels[3] = { c->container, NULL, "" };
	const char *addrs = c->expanded ? c->expanded : c->peer;

	for (const char *a = addrs; *a; a += strlen(a) + 1) {
		labels[1] = a;
		metric_add(t->listen_info, labels, delta);
		if (delta < 0 && metric_value(t->listen_info, labels) <= 0)
			metric_remove(t->listen_info, labels);
		if (!c->expanded)
			break;
	}
}

/* Adds the payload bytes beyond what was counted already (live reads come first). */
static void count_bytes(struct tcp_tracker *t, struct tcp_conn *c, uint64_t sent, uint64_t received)
{
	const char *labels[3];

	dest_series(c, labels);
	if (sent > c->counted_sent) {
		metric_add(t->bytes_sent, labels, (double)(sent - c->counted_sent));
		c->counted_sent = sent;
	}
	if (received > c->counted_received) {
		metric_add(t->bytes_received, labels, (double)(received - c->counted_received));
		c->counted_received = received;
	}
}

static void remove_conn(struct tcp_tracker *t, struct tcp_conn *c, const struct ns_tcp_event *e)
{
	const char *labels[3];

	if (c->metered && c->kind == TCP_CONN_LISTENER) {
		listen_count(t, c, -1);
	} else if (c->metered && c->kind == TCP_CONN_OUTBOUND) {
		dest_series(c, labels);
		metric_add(t->active, labels, -1);
		if (e)
			count_bytes(t, c, e->bytes_sent, e->bytes_received);
	}
	tcp_conn_remove(&t->conns, c);
}

/* The open outbound connections being read at a scrape, sorted by namespace and tuple. */
struct live_walk {
	struct tcp_tracker *t;
	struct tcp_conn **conns;
	size_t n, cap;
	uint64_t netns; /* the namespace being dumped */
};

static int live_cmp(const void *a, const void *b)
{
	const struct tcp_conn *x = *(struct tcp_conn *const *)a, *y = *(struct tcp_conn *const *)b;
	if (x->netns != y->netns)
		return x->netns < y->netns ? -1 : 1;
	return memcmp(&x->tuple, &y->tuple, sizeof(x->tuple));
}

static void live_socket(void *ctx, const struct tcp_tuple *tuple, uint64_t acked,
			uint64_t received)
{
	struct live_walk *w = ctx;
	struct tcp_conn key = { .tuple = *tuple, .netns = w->netns }, *kp = &key;
	/* Same addresses in another namespace are another connection: the key has both. */
	struct tcp_conn **found = bsearch(&kp, w->conns, w->n, sizeof(*w->conns), live_cmp);
	if (!found)
		return;
	struct ns_tcp_event e = { .bytes_sent = acked, .bytes_received = received };
	tcp_event_payload_bytes(&e, true); /* the SYN's sequence number */
	count_bytes(w->t, *found, e.bytes_sent, e.bytes_received);
}

/* Dumps one namespace's established sockets (entered through pid's, unless it is ours). */
static void dump_netns(struct live_walk *w, uint64_t netns, uint32_t pid)
{
	struct tcp_tracker *t = w->t;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/ns/net", pid);
	int diag = netns == t->self_netns ? tcp_diag_open()
					  : netns_socket_of(path, netns, tcp_diag_open);
	if (diag < 0) {
		t->n_live_missed++;
		return;
	}
	w->netns = netns;
	if (tcp_diag_dump(diag, AF_INET, live_socket, w) || tcp_diag_dump(diag, AF_INET6, live_socket, w))
		t->n_live_missed++;
	close(diag);
}

/*
 * The inode of pid's network namespace, asked once per process (the process
 * table keeps it: a connect loop would otherwise stat /proc per
 * connection); 0 once the process is gone.
 */
static uint64_t pid_netns(struct tcp_tracker *t, uint32_t pid)
{
	struct proc_entry *e = proc_table_get(t->o.procs, pid);
	if (e && e->netns)
		return e->netns;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/ns/net", pid);
	uint64_t netns = netns_inode(path);
	if (e && !e->exited)
		e->netns = netns;
	return netns;
}

static uint64_t conn_netns(struct tcp_tracker *t, struct tcp_conn *c)
{
	if (!c->netns)
		c->netns = pid_netns(t, c->pid);
	return c->netns;
}

static void note_live(void *ctx, struct hmap_node *n)
{
	struct live_walk *w = ctx;
	struct tcp_conn *c = hmap_entry(n, struct tcp_conn, node);

	if (!c->metered || c->kind != TCP_CONN_OUTBOUND)
		return;
	/* As Coroot: a destination with a connection open is not idle, whatever its counters do. */
	const char *labels[3];
	dest_series(c, labels);
	struct tcp_tracker *t = w->t;
	struct metric *const held[] = { t->connects, t->conn_time, t->retransmits, t->bytes_sent,
					t->bytes_received };
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		metric_touch(held[i], labels);
	if (!conn_netns(t, c))
		return; /* its process is gone: the close will count it */
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct tcp_conn **p = realloc(w->conns, cap * sizeof(*p));
		if (!p)
			return;
		w->conns = p;
		w->cap = cap;
	}
	w->conns[w->n++] = c;
}

/*
 * At a scrape: the bytes open connections moved so far, from sock_diag in
 * each network namespace that has one (a connection pool that lives for days
 * shows its traffic); the close adds the rest. Nothing runs between scrapes.
 */
static void read_live_bytes(struct tcp_tracker *t)
{
	struct live_walk w = { .t = t };

	if (!t->self_netns)
		return;
	hmap_foreach(&t->conns.by_sock, note_live, &w);
	if (w.n) /* qsort(NULL, 0, ...) is undefined, and UBSan says so */
		qsort(w.conns, w.n, sizeof(*w.conns), live_cmp);
	for (size_t i = 0; i < w.n; i++)
		if (i == 0 || w.conns[i]->netns != w.conns[i - 1]->netns)
			dump_netns(&w, w.conns[i]->netns, w.conns[i]->pid);
	free(w.conns);
}

/*
 * Whether c's process is in the host's (PID 1's) network namespace, where a
 * loopback address is a service of the node, as Coroot judges it; wherever
 * the agent runs (asked once; a gone one: yes).
 */
static bool in_host_netns(struct tcp_tracker *t, struct tcp_conn *c)
{
	return !conn_netns(t, c) || !t->host_netns || c->netns == t->host_netns;
}

static void resolve_nat(struct tcp_tracker *t, struct tcp_conn *c, uint64_t now_ns)
{
	if (c->kind != TCP_CONN_OUTBOUND)
		return;
	tcp_nat_resolve(&t->nat, &c->tuple, c->pid, conn_netns(t, c), c->peer, c->actual,
			sizeof(c->actual), now_ns);
	name_by_domain(t, c->tuple.family, c->tuple.daddr, c->tuple.dport, c->peer, c->actual);
}

/* A wildcard listen as Coroot shows it: the addresses of its network namespace. */
static void expand_listen(struct tcp_tracker *t, struct tcp_conn *c)
{
	struct tcp_ns_addrs ns;

	if (tcp_ns_addrs_read(c->pid, &ns)) {
		t->n_listen_unexpanded++; /* its process gone, or the namespace unreadable */
		return;
	}
	c->expanded = tcp_listen_expand(&ns, c->tuple.family, c->tuple.sport, in_host_netns(t, c));
	if (!c->expanded)
		t->n_listen_unexpanded++;
}

/* Coroot's public-network rule (and its link-local one) for a destination. */
static bool public_left_out(struct tcp_tracker *t, const struct tcp_tuple *tuple,
			    const char *actual)
{
	uint16_t family = tuple->family, nat_family;
	const uint8_t *to = tuple->daddr;
	uint8_t nat[16];

	/* Where NAT sends it, if known ("" for a fan-out domain's: the destination itself). */
	if (*actual && !tcp_addr_parse(actual, &nat_family, nat)) {
		family = nat_family;
		to = nat;
	}
	return tcp_public_net_skip(&t->public_net, tuple->family, tuple->daddr, family, to);
}

/* The same, counted: for a connect. */
static bool public_skipped(struct tcp_tracker *t, const struct tcp_tuple *tuple,
			   const char *actual)
{
	if (!public_left_out(t, tuple, actual))
		return false;
	t->n_public_skipped++;
	return true;
}

static struct tcp_conn *add_conn(struct tcp_tracker *t, uint64_t sock, uint64_t start_ns,
				 const struct tcp_tuple *tuple, enum tcp_conn_kind kind,
				 uint32_t pid, int fd, uint64_t now_ns)
{
	struct tcp_conn *old = sock ? tcp_conn_find(&t->conns, sock, 0) : NULL;
	const char *labels[3];

	/* A second listen() on a listener, or a socket reused after a lost close. */
	if (old)
		remove_conn(t, old, NULL);
	struct tcp_conn *c = tcp_conn_add(&t->conns, sock, start_ns, tuple, kind,
					  proc_table_container_of(t->o.procs, pid));
	if (!c)
		return NULL;
	c->pid = pid;
	c->fd = fd;
	resolve_nat(t, c, now_ns);
	const struct ns_port_ranges *eph = t->o.ephemeral;
	if (kind == TCP_CONN_LISTENER) {
		/* Tracked for its connections, but no service: as Coroot, a port the kernel
		 * handed out, or loopback outside the host's network namespace. */
		if (tcp_port_ephemeral(tuple->sport, eph) ||
		    (tcp_addr_loopback(tuple->family, tuple->saddr) && !in_host_netns(t, c)))
			return c;
		if (tcp_addr_unspecified(tuple->family, tuple->saddr))
			expand_listen(t, c);
		listen_count(t, c, 1);
		c->metered = true;
	} else if (kind == TCP_CONN_OUTBOUND && !tcp_port_ephemeral(tuple->dport, eph) &&
		   !(tcp_addr_loopback(tuple->family, tuple->daddr) && !in_host_netns(t, c)) &&
		   !public_skipped(t, tuple, c->actual) && dest_allowed(t, c->container, c->peer)) {
		dest_series(c, labels);
		metric_add(t->active, labels, 1);
		c->metered = true;
	}
	return c;
}

static struct tcp_conn *find_conn(struct tcp_tracker *t, const struct ns_tcp_event *e)
{
	struct tcp_conn *c = tcp_conn_find(&t->conns, e->sock, e->start_ns);
	if (!c && !(e->flags & NS_TCP_F_KNOWN)) {
		struct tcp_tuple tuple;
		tcp_event_tuple(e, &tuple);
		c = tcp_conn_find_tuple(&t->conns, &tuple);
	}
	return c;
}

/*
 * The connection an event is about, and who owns it: the table knows better
 * than the event (softirq context, connections from before start-up).
 */
static struct tcp_conn *owner_of(struct tcp_tracker *t, struct ns_tcp_event *ev, uint32_t *pid,
				 const char **container)
{
	struct tcp_conn *c = find_conn(t, ev);
	if (!c) {
		t->n_untracked++;
		*container = proc_table_container_of(t->o.procs, *pid);
		return NULL;
	}
	*pid = c->pid;
	*container = c->container;
	if (ev->fd < 0)
		ev->fd = c->fd;
	return c;
}

int tcp_tracker_on_record(void *ctx, const void *data, size_t len)
{
	struct tcp_tracker *t = ctx;
	struct ns_tcp_event ev;
	const struct ns_tcp_event *e = &ev;
	struct tcp_tuple tuple;
	struct tcp_conn *c;
	const char *labels[3];
	char dest[TCP_ADDR_STRLEN], actual[TCP_ADDR_STRLEN];
	const char *container = NULL;

	if (tcp_event_check(data, len))
		return -EINVAL;
	memcpy(&ev, data, sizeof(ev));
	uint32_t pid = e->pid;
	tcp_event_tuple(e, &tuple);

	switch ((enum ns_tcp_event_type)e->type) {
	case NS_TCP_CONNECT:
		c = add_conn(t, e->sock, e->start_ns, &tuple, TCP_CONN_OUTBOUND, pid, e->fd,
			     e->ts_ns);
		if (c) {
			container = c->container;
			if (c->metered) {
				dest_series(c, labels);
				metric_add(t->connects, labels, 1);
				metric_add(t->conn_time, labels, e->duration_ns / 1e9);
			}
		}
		break;
	case NS_TCP_CONNECT_ERROR:
		container = proc_table_container_of(t->o.procs, pid);
		tcp_addr_format(e->family, e->daddr, e->dport, dest, sizeof(dest));
		name_by_domain(t, e->family, e->daddr, e->dport, dest, actual);
		/* As Coroot: the port and public-network rules hold for failures too. */
		if (!tcp_port_ephemeral(tuple.dport, t->o.ephemeral) &&
		    !public_skipped(t, &tuple, "") && dest_allowed(t, container, dest)) {
			labels[0] = container;
			labels[1] = dest;
			metric_add(t->failed, labels, 1);
		}
		break;
	case NS_TCP_ACCEPT:
		c = add_conn(t, e->sock, e->start_ns, &tuple, TCP_CONN_INBOUND, pid, e->fd,
			     e->ts_ns);
		container = c ? c->container : proc_table_container_of(t->o.procs, pid);
		break;
	case NS_TCP_LISTEN:
		c = add_conn(t, e->sock, 0, &tuple, TCP_CONN_LISTENER, pid, e->fd, e->ts_ns);
		container = c ? c->container : proc_table_container_of(t->o.procs, pid);
		break;
	case NS_TCP_CLOSE:
	case NS_TCP_LISTEN_CLOSE:
		if (e->type == NS_TCP_CLOSE && t->o.on_close)
			t->o.on_close(t->o.on_close_ctx, e->sock, e->start_ns);
		c = owner_of(t, &ev, &pid, &container);
		if (e->type == NS_TCP_CLOSE)
			tcp_event_payload_bytes(&ev, c ? c->kind == TCP_CONN_OUTBOUND
						       : !(e->flags & NS_TCP_F_INBOUND));
		if (!c)
			break;
		trace_tcp(t->o.trace, e, pid, container);
		remove_conn(t, c, e);
		return 0;
	case NS_TCP_RETRANSMIT:
		if ((e->flags & NS_TCP_F_KNOWN) && !(e->flags & NS_TCP_F_INBOUND) &&
		    !find_conn(t, e)) {
			/* A SYN sent again: the connection is not established yet. */
			container = proc_table_container_of(t->o.procs, pid);
			tcp_addr_format(e->family, e->daddr, e->dport, dest, sizeof(dest));
			memcpy(actual, dest, sizeof(actual));
			name_by_domain(t, e->family, e->daddr, e->dport, dest, actual);
			if (dest_allowed(t, container, dest)) {
				const char *syn_labels[] = { container, dest, actual };
				metric_add(t->retransmits, syn_labels, 1);
			}
			break;
		}
		c = owner_of(t, &ev, &pid, &container);
		if (c && c->metered && c->kind == TCP_CONN_OUTBOUND) {
			dest_series(c, labels);
			metric_add(t->retransmits, labels, 1);
		}
		break;
	}
	trace_tcp(t->o.trace, e, pid, container);
	return 0;
}

/*
 * An established connection (or a DNS socket) that existed before the
 * agent: its reads and writes are captured from now on (bpf/sockets.bpf.h, l7_sock_adopt: the
 * socket's kernel address is filled in there). Not over an entry the BPF
 * side made meanwhile (the fd closed and reused since the scan).
 */
static void adopt_for_l7(struct tcp_tracker *t, const struct tcp_scan_entry *s)
{
	struct ns_l7_sock ls = {
		.flags = (s->inbound ? NS_L7_F_INBOUND : 0) | (s->udp ? NS_L7_F_DNS : 0),
		.family = s->tuple.family,
		.sport = s->tuple.sport,
		.dport = s->tuple.dport,
	};
	int err;

	if (!t->o.l7_socks || !t->o.l7_filter || s->fd < 0)
		return;
	memcpy(ls.saddr, s->tuple.saddr, sizeof(ls.saddr));
	memcpy(ls.daddr, s->tuple.daddr, sizeof(ls.daddr));
	err = l7_socks_adopt(bpf_map__fd(t->o.l7_socks), t->o.l7_filter, s->pid, s->fd, &ls);
	if (!err)
		t->n_adopted++;
	else if (err != -EEXIST)
		t->n_adopt_failed++;
}

static void scan_one(void *ctx, const struct tcp_scan_entry *s)
{
	struct tcp_tracker *t = ctx;
	if (s->udp) { /* a DNS socket: its datagrams only */
		adopt_for_l7(t, s);
		return;
	}
	enum tcp_conn_kind kind = s->state == TCP_STATE_LISTEN ? TCP_CONN_LISTENER
				  : s->inbound			? TCP_CONN_INBOUND
								: TCP_CONN_OUTBOUND;
	/* Keyed by tuple: the kernel socket address is not known from /proc. */
	add_conn(t, 0, 0, &s->tuple, kind, s->pid, s->fd, 0);
	if (kind != TCP_CONN_LISTENER)
		adopt_for_l7(t, s);
}

int tcp_tracker_scan(struct tcp_tracker *t)
{
	return tcp_scan(scan_one, t);
}

bool tcp_tracker_destination(struct tcp_tracker *t, const struct ns_l7_sock *s, uint32_t pid,
			     char *dest, char *actual)
{
	struct tcp_conn *c = tcp_conn_find(&t->conns, s->sock, s->start_ns);
	if (c && c->kind == TCP_CONN_OUTBOUND) {
		memcpy(dest, c->peer, TCP_ADDR_STRLEN);
		memcpy(actual, c->actual, TCP_ADDR_STRLEN);
		return !tcp_port_ephemeral(c->tuple.dport, t->o.ephemeral) &&
		       !public_left_out(t, &c->tuple, c->actual);
	}
	/* Its connect event not read yet (the tcp stream is batched): ask conntrack now. */
	struct tcp_tuple tuple = { .family = s->family, .sport = s->sport, .dport = s->dport };
	memcpy(tuple.saddr, s->saddr, sizeof(tuple.saddr));
	memcpy(tuple.daddr, s->daddr, sizeof(tuple.daddr));
	tcp_addr_format(s->family, s->daddr, s->dport, dest, TCP_ADDR_STRLEN);
	memcpy(actual, dest, TCP_ADDR_STRLEN);
	tcp_nat_resolve(&t->nat, &tuple, pid, pid_netns(t, pid), dest, actual, TCP_ADDR_STRLEN,
			clock_mono_ns());
	name_by_domain(t, s->family, s->daddr, s->dport, dest, actual);
	return !tcp_port_ephemeral(s->dport, t->o.ephemeral) && !public_left_out(t, &tuple, actual);
}
