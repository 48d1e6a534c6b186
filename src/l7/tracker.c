#include "tracker.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "events.h"
#include "dns_flow.h"
#include "dns_tcp.h"
#include "families.h"
#include "h2.h"
#include "http.h"
#include "pair.h"
#include "proto.h"
#include "metrics/registry.h"
#include "proc/optouts.h"
#include "proc/table.h"
#include "tcp/addr.h"
#include "trace/trace.h"
#include "util/glob.h"
#include "util/hmap.h"

#define L7_PENDING 16	  /* requests awaiting a response per connection (pipelining) */
#define L7_PENDING_FIRST 2 /* ...of which room for this many at first: doubled as a pipeline deepens */
/*
 * Client chunks looked at before a connection is called unknown: a MySQL
 * client's auth packets come before its first command.
 */
#define L7_DETECT_CHUNKS 8
#define L7_STASH 16 /* the longest header a server reads alone (MongoDB's) */
/*
 * How long a closed connection's state outlives its close. The close comes
 * from the TCP state change, which is not the end of its data: a reset
 * closes a socket whose queued bytes the process reads afterwards, and a
 * record reserved by a preempted uprobe program holds back those behind it.
 */
#define L7_CLOSE_GRACE_NS 2000000000ull
/*
 * TLS plaintext waiting for its session's socket (memory BIOs: the write's
 * ciphertext goes out after the call, and a bind record names the socket).
 * The oldest goes first when full; one unbound for this long is given up.
 */
#define L7_UNBOUND_MAX 256
#define L7_UNBOUND_MAX_AGE_NS 5000000000ull

enum l7_kind { L7_UNKNOWN, L7_HTTP, L7_TABLE, L7_DNS, L7_OTHER };

/*
 * The protocols' families and counters: [1 + i] is l7_protos[i]; [0] holds
 * HTTP's families (HTTP/1 and HTTP/2 count there) and HTTP/2's counters.
 */
#define L7_MAX_PROTOS 24

/* A connection speaking a protocol of the table (proto.h): its parser and pairing. */
struct l7_table_conn {
	unsigned idx; /* 1 + its index in l7_protos */
	const struct l7_proto *p;
	struct l7_pair pair;
	/*
	 * Per direction: when the message being read began (its first chunk's
	 * time), as a parser reports a message once it is complete — a result
	 * set read in a hundred chunks is answered at its first. fresh: the
	 * last message ended, the next begins with the next chunk (or in the
	 * rest of this one: one that begins there and ends in a later chunk is
	 * dated by that later chunk).
	 */
	uint64_t begun_ts[2];
	bool fresh[2];
	_Alignas(16) unsigned char state[]; /* p->state_size */
};

/*
 * The series a connection's requests last went to, per status: a request is
 * then counted without making and hashing its label set. Valid while the
 * families freed no series (generation) and the process's container is the
 * one in the labels.
 */
#define L7_SERIES_SLOTS 2
struct l7_series {
	const char *status; /* http_status_class()'s string; NULL: empty slot */
	uint64_t generation;
	struct metric_series *count, *duration;
};

struct l7_request {
	char method[HTTP_METHOD_LEN];
	char path[HTTP_PATH_LEN];
	uint64_t ts_ns;
};

struct l7_conn {
	struct hmap_node node;
	uint64_t sock;
	uint64_t start_ns;
	enum l7_kind proto;
	unsigned chunks_seen; /* client chunks looked at while unknown */
	/*
	 * While unknown: the client's last chunk when it was a short one read
	 * whole, a header read apart from its body (MySQL and MongoDB servers
	 * read a message's header first): detection looks at it with the next.
	 */
	uint8_t stash_len;
	uint8_t stash[L7_STASH];
	bool inbound;
	bool tls; /* plaintext comes from TLS library probes; raw bytes are ignored */
	bool left_out; /* outbound to a destination Coroot leaves out: its requests not counted */
	/* outbound: its destination and actual_destination labels, once known (dest[0]) */
	char dest[TCP_ADDR_STRLEN], actual[TCP_ADDR_STRLEN];
	char local[TCP_ADDR_STRLEN], remote[TCP_ADDR_STRLEN]; /* formatted at its first pair */
	struct l7_series series[L7_SERIES_SLOTS];
	struct l7_request *pending; /* p_cap of them, allocated with the parsers */
	unsigned p_head, p_tail, p_cap; /* p_cap: a power of two up to L7_PENDING */
	struct http_stream *req, *resp; /* allocated once HTTP is detected */
	struct l7_table_conn *tab;	/* allocated once a table protocol is detected */
	struct dns_tcp *dns;		/* DNS over TCP: its framing, once the port said so */
	/* When the connection was seen closed (0: open); it is kept a while. */
	uint64_t closed_ns;
	struct l7_conn *closing_next;
};

/* A copy of an unbound record: its header and what it captured. */
struct l7_unbound {
	struct ns_l7_event *e;
	size_t len;
};

struct l7_tracker {
	struct l7_tracker_opts o;
	struct l7_unbound unbound[L7_UNBOUND_MAX]; /* oldest first */
	unsigned n_unbound;
	uint64_t n_unbound_dropped;
	struct hmap conns;
	/* Closed connections whose last records may be unread, oldest first. */
	struct l7_conn *closing, **closing_tail;
	uint64_t n_refused, n_unknown, n_truncated;
	uint64_t n_http_excluded; /* requests left out by --exclude-http-requests-by-path */
	struct l7_counters http_cnt; /* HTTP/1's drop points, in the table protocols' terms */
	struct l7_families fam[1 + L7_MAX_PROTOS];
	/* The table protocols' drop points: what forgotten connections counted. */
	struct l7_counters gone[1 + L7_MAX_PROTOS];
	struct l7_dns *dns;
	struct l7_counters dns_cnt;
	struct ns_l7_event *dns_msg; /* a DNS-over-TCP message, as the record of a datagram */
	struct metric *m_fields[8]; /* nodescope_l7_<field>_total{proto}, l7_counter_fields' order */
	struct metric *m_conns;
};

#define T struct l7_tracker
static const struct metric_def l7_metrics[] = {
	{ "nodescope_l7_connections", "Connections with L7 parsing state.", METRIC_GAUGE,
	  METRIC_HANDLE(T, m_conns) },
	{ "nodescope_l7_connections_refused_total",
	  "Connections not parsed: the L7 table was full.", METRIC_COUNTER,
	  METRIC_VALUE(T, n_refused) },
	{ "nodescope_l7_unknown_protocol_connections_total",
	  "Connections whose protocol was not recognised.", METRIC_COUNTER,
	  METRIC_VALUE(T, n_unknown) },
	{ "nodescope_l7_tls_unbound_dropped_total",
	  "TLS plaintext whose socket never became known (a library on memory BIOs whose "
	  "ciphertext write was not seen).",
	  METRIC_COUNTER, METRIC_VALUE(T, n_unbound_dropped) },
	{ "nodescope_l7_captures_truncated_total",
	  "Reads and writes captured only in part (longer than the capture size).",
	  METRIC_COUNTER, METRIC_VALUE(T, n_truncated) },
	{ "nodescope_l7_http_requests_excluded_total",
	  "HTTP requests left out of the metrics and the trace by their path "
	  "(--exclude-http-requests-by-path).",
	  METRIC_COUNTER, METRIC_VALUE(T, n_http_excluded) },
};
#undef T
static const char *const http_proto = "http";

/* The context of one record while its chunk is fed to a parser. */
struct l7_chunk {
	struct l7_tracker *t;
	struct l7_conn *c;
	const struct ns_l7_event *e;
	enum l7_dir dir;
};

static void sum_live(void *ctx, struct hmap_node *n)
{
	struct l7_counters *sum = ctx;
	struct l7_conn *c = hmap_entry(n, struct l7_conn, node);
	if (c->tab)
		l7_counters_add(&sum[c->tab->idx], c->tab->p->counters(c->tab->state));
}

static void set_fields(struct l7_tracker *t, const char *proto, const struct l7_counters *c)
{
	for (size_t f = 0; f < l7_n_counter_fields; f++)
		metric_set(t->m_fields[f], &proto,
			   (double)*(const uint64_t *)((const char *)c + l7_counter_fields[f].offset));
}

static void l7_collect(void *ctx)
{
	struct l7_tracker *t = ctx;
	struct l7_counters sum[1 + L7_MAX_PROTOS];

	metric_set(t->m_conns, NULL, (double)t->conns.count);
	memcpy(sum, t->gone, sizeof(sum));
	hmap_foreach(&t->conns, sum_live, sum);
	for (size_t i = 0; i < l7_n_protos; i++)
		set_fields(t, l7_protos[i]->name, &sum[1 + i]);
	set_fields(t, l7_proto_http2.name, &sum[0]);
	set_fields(t, http_proto, &t->http_cnt);
	set_fields(t, "dns", &t->dns_cnt);
}

/* nodescope_l7_<field>_total{proto}: every protocol's drop points, one family a field. */
static int register_fields(struct l7_tracker *t, struct metric_registry *r)
{
	static const char *const proto_label[] = { "proto" };
	if (l7_n_counter_fields > sizeof(t->m_fields) / sizeof(t->m_fields[0]))
		return -EINVAL;
	for (size_t f = 0; f < l7_n_counter_fields; f++) {
		char name[96], help[160];
		snprintf(name, sizeof(name), "nodescope_l7_%s_total", l7_counter_fields[f].name);
		snprintf(help, sizeof(help), "Protocol parsers' %s count (proto.h, struct l7_counters).",
			 l7_counter_fields[f].name);
		t->m_fields[f] = metric_register(r, name, help, METRIC_COUNTER, 0, 1, proto_label);
		if (!t->m_fields[f])
			return -EINVAL;
	}
	return 0;
}

int l7_tracker_new(const struct l7_tracker_opts *o, struct l7_tracker **out)
{
	struct l7_tracker *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->o = *o;
	t->closing_tail = &t->closing;
	if (hmap_init(&t->conns, o->max_connections)) {
		free(t);
		return -ENOMEM;
	}
	struct metric_registry *r = o->registry;
	bool bad = l7_n_protos > L7_MAX_PROTOS ||
		   l7_families_register(r, http_proto, L7_FAMILY_REQUESTS, o->max_series, &t->fam[0]);
	for (size_t i = 0; !bad && i < l7_n_protos; i++)
		bad = l7_families_register(r, l7_protos[i]->name, l7_protos[i]->family, o->max_series,
					   &t->fam[1 + i]);
	struct l7_dns_opts dno = { .registry = r, .procs = o->procs, .trace = o->trace,
				   .max_series = o->max_series, .max_fqdns = o->max_fqdns ? o->max_fqdns : 50,
				   .cnt = &t->dns_cnt };
	if (bad || !(t->dns_msg = calloc(1, sizeof(*t->dns_msg))) || register_fields(t, r) ||
	    l7_dns_new(&dno, &t->dns) ||
	    metric_register_defs(r, l7_metrics, METRIC_DEFS_COUNT(l7_metrics), t, o->max_series)) {
		l7_tracker_free(t);
		return -EINVAL;
	}
	metric_registry_add_collector(r, l7_collect, t);
	*out = t;
	return 0;
}

static void table_free(struct l7_tracker *t, struct l7_conn *c)
{
	if (!c->tab)
		return;
	l7_counters_add(&t->gone[c->tab->idx], c->tab->p->counters(c->tab->state));
	l7_proto_free(c->tab->p, c->tab->state);
	l7_pair_free(&c->tab->pair);
	free(c->tab);
	c->tab = NULL;
}

/* The HTTP streams (calloc'ed: freeable whether http_start got to initialise them or not). */
static void http_free(struct l7_conn *c)
{
	if (c->req)
		http_stream_free(c->req);
	if (c->resp)
		http_stream_free(c->resp);
	free(c->req);
	free(c->resp);
	c->req = c->resp = NULL;
}

static void conn_free(struct l7_tracker *t, struct l7_conn *c)
{
	table_free(t, c);
	free(c->dns);
	http_free(c);
	free(c->pending);
	free(c);
}

/*
 * What was seen before was the handshake's ciphertext: start over on
 * plaintext — unless the protocol itself switched to TLS (PostgreSQL's
 * SSLRequest, MySQL's SSL request), whose state goes on where it was.
 */
static void conn_switch_to_tls(struct l7_tracker *t, struct l7_conn *c)
{
	if (c->tab && l7_proto_tls_started(c->tab->p, c->tab->state)) {
		c->tls = true;
		return;
	}
	table_free(t, c);
	http_free(c);
	c->proto = L7_UNKNOWN;
	c->chunks_seen = 0;
	c->p_head = c->p_tail = 0;
	c->tls = true;
}

void l7_tracker_free(struct l7_tracker *t)
{
	struct hmap_node *n;
	if (!t)
		return;
	for (unsigned i = 0; i < t->n_unbound; i++)
		free(t->unbound[i].e);
	while ((n = hmap_pop(&t->conns)))
		conn_free(t, hmap_entry(n, struct l7_conn, node));
	l7_dns_free(t->dns);
	free(t->dns_msg);
	hmap_destroy(&t->conns);
	free(t);
}

/*
 * A connection is (socket address, start): the kernel hands a freed socket's
 * address to the next one at once, so the address alone would put every
 * connection of a connect-close loop, kept closed for their grace period,
 * on one hash chain.
 */
static uint64_t conn_key(uint64_t sock, uint64_t start_ns)
{
	return sock ^ (start_ns * 0x9e3779b97f4a7c15ull);
}

static struct l7_conn *conn_find(struct l7_tracker *t, uint64_t sock, uint64_t start_ns)
{
	for (struct hmap_node *n = hmap_get(&t->conns, conn_key(sock, start_ns)); n;
	     n = hmap_next_same(n)) {
		struct l7_conn *c = hmap_entry(n, struct l7_conn, node);
		if (c->sock == sock && c->start_ns == start_ns)
			return c;
	}
	return NULL;
}

static void conn_forget(struct l7_tracker *t, struct l7_conn *c)
{
	hmap_unlink(&t->conns, &c->node);
	conn_free(t, c);
}

void l7_tracker_reap(struct l7_tracker *t, uint64_t now_ns);

static struct l7_conn *conn_new(struct l7_tracker *t, uint64_t sock, uint64_t start_ns, bool inbound)
{
	struct l7_conn *c;
	if (t->conns.count >= t->o.max_connections)
		l7_tracker_reap(t, 0); /* closed ones go first, whatever their age */
	if (t->conns.count >= t->o.max_connections || !(c = calloc(1, sizeof(*c)))) {
		t->n_refused++;
		return NULL;
	}
	c->sock = sock;
	c->start_ns = start_ns;
	c->inbound = inbound;
	hmap_insert(&t->conns, &c->node, conn_key(sock, start_ns));
	return c;
}

void l7_tracker_conn_closed(struct l7_tracker *t, uint64_t sock, uint64_t start_ns, uint64_t now_ns)
{
	struct l7_conn *c = conn_find(t, sock, start_ns);
	/* Its records may all be unread yet: they will find it here. */
	if (!c && !(c = conn_new(t, sock, start_ns, false)))
		return;
	if (c->closed_ns)
		return;
	c->closed_ns = now_ns ? now_ns : 1;
	c->closing_next = NULL;
	*t->closing_tail = c;
	t->closing_tail = &c->closing_next;
}

void l7_tracker_reap(struct l7_tracker *t, uint64_t now_ns)
{
	/* Oldest first: the first one still in its grace period ends the walk
	 * (this runs after every read of the l7 stream). */
	while (t->closing) {
		struct l7_conn *c = t->closing;
		if (now_ns && c->closed_ns + L7_CLOSE_GRACE_NS > now_ns)
			break;
		t->closing = c->closing_next;
		if (!t->closing)
			t->closing_tail = &t->closing;
		conn_forget(t, c);
	}
}

/*
 * The connection's destination labels, asked once (the TCP side keeps them
 * only while the connection is open).
 */
static void conn_destination(struct l7_tracker *t, struct l7_conn *c, const struct ns_l7_sock *s,
			     uint32_t pid)
{
	if (c->dest[0])
		return;
	if (t->o.destination)
		c->left_out = !t->o.destination(t->o.destination_ctx, s, pid, c->dest, c->actual);
	if (!c->dest[0]) {
		memcpy(c->dest, c->remote, sizeof(c->dest));
		memcpy(c->actual, c->remote, sizeof(c->actual));
	}
}

/* The families a connection's requests go to. */
static const struct l7_families *conn_families(struct l7_tracker *t, const struct l7_conn *c)
{
	return &t->fam[c->tab ? c->tab->idx : 0];
}

/* The request and duration series of one pair, from the connection's slots when they hold. */
static const struct l7_series *pair_series(struct l7_tracker *t, struct l7_conn *c,
					   const struct ns_l7_sock *s, uint32_t pid,
					   const char *container, const char *code)
{
	const struct l7_families *f = conn_families(t, c);
	struct metric *count = c->inbound ? f->in_count : f->count;
	struct metric *duration = c->inbound ? f->in_duration : f->duration;
	uint64_t gen = metric_generation(count) + metric_generation(duration);
	struct l7_series *slot = &c->series[0];

	for (unsigned i = 0; i < L7_SERIES_SLOTS; i++) {
		struct l7_series *x = &c->series[i];
		if (x->status == code && x->generation == gen &&
		    !strcmp(metric_series_label(x->count, 0), container))
			return x;
		if (!x->status)
			slot = x;
	}
	if (c->inbound) {
		const char *labels[] = { container, code };
		slot->count = metric_series_get(count, labels);
		slot->duration = metric_series_get(duration, labels);
	} else {
		conn_destination(t, c, s, pid);
		const char *labels[] = { container, c->dest, c->actual, code };
		slot->count = metric_series_get(count, labels);
		slot->duration = metric_series_get(duration, labels);
	}
	/* Refused (cap, policy): asked again next time, never kept. */
	slot->status = slot->count && slot->duration ? code : NULL;
	slot->generation = metric_generation(count) + metric_generation(duration);
	return slot;
}

/* Formats the connection's addresses once, at its first pair. */
static void conn_addresses(struct l7_conn *c, const struct ns_l7_sock *s)
{
	if (c->remote[0])
		return;
	tcp_addr_format(s->family, s->saddr, s->sport, c->local, sizeof(c->local));
	tcp_addr_format(s->family, s->daddr, s->dport, c->remote, sizeof(c->remote));
}

/*
 * One answered request: counted under status (a static string: the series
 * slots compare it by address), its latency observed, and r (the
 * protocol's fields filled in) traced.
 */
static void record_pair(struct l7_chunk *k, uint64_t req_ts, uint64_t resp_ts, const char *status,
			struct trace_l7 *r)
{
	struct l7_tracker *t = k->t;
	struct l7_conn *c = k->c;
	const struct ns_l7_sock *s = &k->e->conn;
	uint64_t dur = resp_ts > req_ts ? resp_ts - req_ts : 0;
	const char *container = proc_table_container_of(t->o.procs, k->e->pid);

	conn_addresses(c, s);
	if (!c->inbound) {
		conn_destination(t, c, s, k->e->pid);
		if (c->left_out)
			return; /* as Coroot: no connection there, so no request either */
	}
	const struct l7_series *series = pair_series(t, c, s, k->e->pid, container, status);
	metric_series_add(series->count, 1);
	const struct l7_families *f = conn_families(t, c);
	metric_series_observe(c->inbound ? f->in_duration : f->duration, series->duration, dur / 1e9);
	if (!trace_wanted(t->o.trace) ||
	    (proc_table_optouts_of(t->o.procs, k->e->pid) & PROC_OPTOUT_TRACES))
		return;
	r->pid = k->e->pid;
	r->inbound = c->inbound;
	r->tls = k->e->conn.flags & NS_L7_F_TLS;
	r->ts_ns = req_ts;
	r->duration_ns = dur;
	r->src = c->inbound ? c->remote : c->local;
	r->dst = c->inbound ? c->local : c->remote;
	r->container = container;
	trace_l7(t->o.trace, r);
}

/* Coroot's --exclude-http-requests-by-path: the request is not counted, nor traced. */
static bool http_excluded(struct l7_tracker *t, const char *path)
{
	const struct ns_globs *g = t->o.http_exclude;

	if (!g || !g->n)
		return false;
	size_t n = strlen(path);
	for (unsigned i = 0; i < g->n; i++)
		if (glob_match(g->v[i].p, g->v[i].len, path, n)) {
			t->n_http_excluded++;
			return true;
		}
	return false;
}

static void record_http(struct l7_chunk *k, const struct l7_request *rq, int status)
{
	struct trace_l7 r = {
		.proto = http_proto,
		.method = rq->method,
		.path = rq->path,
		.status = status,
	};
	record_pair(k, rq->ts_ns, k->e->ts_ns, http_status_class(status), &r);
}

/* A full queue of requests awaiting answers doubles, in order from its head (false: at L7_PENDING, or no memory). */
static bool pending_grow(struct l7_conn *c)
{
	if (c->p_cap >= L7_PENDING)
		return false;
	struct l7_request *n = malloc(2 * c->p_cap * sizeof(*n));
	if (!n)
		return false;
	for (unsigned i = 0; i < c->p_cap; i++)
		n[i] = c->pending[(c->p_head + i) % c->p_cap];
	free(c->pending);
	c->pending = n;
	c->p_head = 0;
	c->p_tail = c->p_cap;
	c->p_cap *= 2;
	return true;
}

static int on_http_msg(void *ctx, const struct http_msg *m)
{
	struct l7_chunk *k = ctx;
	struct l7_conn *c = k->c;

	k->t->http_cnt.messages++;
	if (m->is_request) {
		if (c->p_tail - c->p_head == c->p_cap && !pending_grow(c)) {
			k->t->http_cnt.table_full++;
			c->p_head++;
		}
		struct l7_request *rq = &c->pending[c->p_tail++ % c->p_cap];
		memcpy(rq->method, m->req.method, sizeof(rq->method));
		memcpy(rq->path, m->req.path, sizeof(rq->path));
		rq->ts_ns = k->e->ts_ns;
		return 0;
	}
	if (c->p_head == c->p_tail) {
		k->t->http_cnt.unpaired++;
		return 0;
	}
	const struct l7_request *rq = &c->pending[c->p_head % c->p_cap];
	/* Tell the response parser what the request implies for its body. */
	/* The NUL included, within the 16-byte buffer: constant-size compares, no strcmp call. */
	int verdict = !memcmp(rq->method, "HEAD", 5) ? 1 : !memcmp(rq->method, "CONNECT", 8) ? 2 : 0;
	/* An interim 1xx answer (100 Continue) leaves the request waiting. */
	if (m->resp.status >= 100 && m->resp.status < 200 && m->resp.status != 101)
		return 0;
	c->p_head++;
	/* As Coroot: HTTP/1 requests by path only outbound (its inbound side keeps no path). */
	if (c->inbound || !http_excluded(k->t, rq->path))
		record_http(k, rq, m->resp.status);
	return verdict;
}

/* When the message just reported began; the next one begins afresh. */
static uint64_t message_began(struct l7_table_conn *tc, enum l7_dir d, const struct ns_l7_event *e)
{
	uint64_t ts = tc->fresh[d] ? e->ts_ns : tc->begun_ts[d];
	tc->fresh[d] = true;
	return ts;
}

/* A chunk arrives: it begins a message unless one is under way. */
static void chunk_arrives(struct l7_table_conn *tc, enum l7_dir d, const struct ns_l7_event *e)
{
	if (tc->fresh[d]) {
		tc->begun_ts[d] = e->ts_ns;
		tc->fresh[d] = false;
	}
}

/*
 * The status label of an HTTP/2 answer, its parser's code ("2xx",
 * "grpc:OK"), as one of these strings: the connection's series slots
 * compare labels by address.
 */
static const char *http2_status_label(const char *code)
{
	static const char *const labels[] = {
		"1xx", "2xx", "3xx", "4xx", "5xx", "reset",
		"grpc:OK", "grpc:CANCELLED", "grpc:UNKNOWN", "grpc:INVALID_ARGUMENT",
		"grpc:DEADLINE_EXCEEDED", "grpc:NOT_FOUND", "grpc:ALREADY_EXISTS",
		"grpc:PERMISSION_DENIED", "grpc:RESOURCE_EXHAUSTED", "grpc:FAILED_PRECONDITION",
		"grpc:ABORTED", "grpc:OUT_OF_RANGE", "grpc:UNIMPLEMENTED", "grpc:INTERNAL",
		"grpc:UNAVAILABLE", "grpc:DATA_LOSS", "grpc:UNAUTHENTICATED",
	};
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!strcmp(code, labels[i]))
			return labels[i];
	return "unknown";
}

/* A request of a table protocol answered (or passed over by the server: skipped). */
static void on_table_pair(void *ctx, const struct l7_pending *req, enum l7_status status,
			  const char *code, bool skipped)
{
	struct l7_chunk *k = ctx;
	bool http = k->c->tab->p->family == L7_FAMILY_HTTP;
	uint64_t began = message_began(k->c->tab, L7_DIR_RESPONSE, k->e);
	/* HTTP/2's text is "METHOD /path": by path both ways, as Coroot. */
	const char *path = http ? strchr(req->text, ' ') : NULL;
	if (path && http_excluded(k->t, path + 1))
		return;
	struct trace_l7 r = {
		.proto = k->c->tab->p->name,
		.op = req->op,
		.statement = req->text,
		.status_name = http ? http2_status_label(code) : l7_status_name(status),
		.error_code = http ? "" : code,
		.skipped = skipped,
	};
	record_pair(k, req->ts_ns, began, r.status_name, &r);
}

/* A message of a messaging protocol (produce, consume): counted by method, not paired. */
static void record_message(struct l7_chunk *k, const struct l7_msg *m)
{
	struct l7_tracker *t = k->t;
	struct l7_conn *c = k->c;
	const char *container = proc_table_container_of(t->o.procs, k->e->pid);

	conn_addresses(c, &k->e->conn);
	conn_destination(t, c, &k->e->conn, k->e->pid);
	if (c->left_out)
		return;
	const char *labels[] = { container, c->dest, c->actual, l7_status_name(L7_STATUS_OK), m->op };
	metric_add(t->fam[c->tab->idx].count, labels, 1);
}

static void on_table_msg(void *ctx, const struct l7_msg *m)
{
	struct l7_chunk *k = ctx;
	struct l7_table_conn *tc = k->c->tab;

	switch (m->kind) {
	case L7_MSG_REQUEST:
	case L7_MSG_REQUEST_UNTIL_SYNC:
	case L7_MSG_SYNC:
		l7_pair_request(&tc->pair, m, message_began(tc, L7_DIR_REQUEST, k->e));
		break;
	case L7_MSG_REQUEST_NOREPLY: /* (a messaging protocol's consume is the server's) */
		message_began(tc, k->dir, k->e);
		/* No answer, so no latency: only the messaging families count these. */
		if (tc->p->family == L7_FAMILY_MESSAGES && !k->c->inbound)
			record_message(k, m);
		break;
	case L7_MSG_RESPONSE:
	case L7_MSG_SYNC_REPLY:
	case L7_MSG_LOST:
		l7_pair_response(&tc->pair, m, on_table_pair, k);
		break;
	case L7_MSG_PUSH:
		break;
	case L7_MSG_HANDSHAKE:
		message_began(tc, k->dir, k->e);
		break;
	}
}

/* Where a parser's families and counters are: see L7_MAX_PROTOS. */
static unsigned proto_index(const struct l7_proto *p)
{
	for (size_t i = 0; i < l7_n_protos; i++)
		if (l7_protos[i] == p)
			return 1 + (unsigned)i;
	return 0; /* HTTP/2 */
}

/* Starts parsing a connection with parser p. Returns false when out of memory. */
static bool table_start(struct l7_tracker *t, struct l7_conn *c, const struct l7_proto *p)
{
	struct l7_table_conn *tc = malloc(sizeof(*tc) + p->state_size);
	if (!tc)
		return false;
	tc->idx = proto_index(p);
	tc->p = p;
	if (p->init(tc->state)) {
		free(tc);
		return false;
	}
	l7_pair_init(&tc->pair, p->pair, p->counters(tc->state));
	tc->fresh[L7_DIR_REQUEST] = tc->fresh[L7_DIR_RESPONSE] = true;
	c->tab = tc;
	return true;
}

static bool http_start(struct l7_tracker *t, struct l7_conn *c)
{
	c->req = calloc(1, sizeof(*c->req));
	c->resp = calloc(1, sizeof(*c->resp));
	if (!c->pending) {
		c->pending = malloc(L7_PENDING_FIRST * sizeof(*c->pending));
		c->p_cap = L7_PENDING_FIRST;
		c->p_head = c->p_tail = 0;
	}
	if (!c->req || !c->resp || !c->pending)
		return false;
	http_stream_init(c->req, true);
	http_stream_init(c->resp, false);
	return true;
}

/* The chunk with the stashed bytes before it, in a record of its own (NULL: no memory). */
static struct ns_l7_event *join_stash(const struct l7_conn *c, const struct ns_l7_event *e)
{
	struct ns_l7_event *j = malloc(NS_L7_HEADER_SIZE + c->stash_len + e->captured);
	if (!j)
		return NULL;
	memcpy(j, e, NS_L7_HEADER_SIZE);
	memcpy(j->data, c->stash, c->stash_len);
	memcpy(j->data + c->stash_len, e->data, e->captured);
	j->captured = c->stash_len + e->captured;
	j->total = c->stash_len + e->total;
	return j;
}

/*
 * Whether data starts a client message of a protocol this tracker parses:
 * HTTP/1 (*p NULL), or one with a parser of the table's kind (*p).
 */
static bool detect_in(const uint8_t *data, size_t n, const struct l7_proto **p)
{
	*p = NULL;
	if (http_looks_like_request((const char *)data, n))
		return true;
	if (l7_proto_http2.detect_request(data, n)) {
		*p = &l7_proto_http2;
		return true;
	}
	for (size_t i = 0; i < l7_n_protos; i++)
		if (l7_protos[i]->detect_request(data, n)) {
			*p = l7_protos[i];
			return true;
		}
	return false;
}

/*
 * Picks the connection's protocol from a client chunk (a message boundary,
 * not necessarily the connection's first: one opened before the agent is
 * joined in its middle): HTTP first (the common case, and its test is the
 * cheapest), then the table in its order. Server chunks wait: only the
 * client's side is tested, as a server's greeting alone says little.
 * Returns the record to go on with: e, or e joined to a stashed header
 * (the caller frees it).
 */
static const struct ns_l7_event *detect(struct l7_tracker *t, struct l7_conn *c,
					const struct ns_l7_event *e, bool request_dir)
{
	if (!request_dir)
		return e;
	const struct l7_proto *p;
	bool found = detect_in(e->data, e->captured, &p);
	const struct ns_l7_event *use = e;
	if (!found && c->stash_len) {
		struct ns_l7_event *j = join_stash(c, e);
		if (j && (found = detect_in(j->data, j->captured, &p)))
			use = j;
		else
			free(j);
	}
	if (!found) {
		bool whole_and_short = e->captured == e->total && e->captured <= L7_STASH;
		c->stash_len = whole_and_short ? (uint8_t)e->captured : 0;
		memcpy(c->stash, e->data, c->stash_len);
		if (++c->chunks_seen >= L7_DETECT_CHUNKS) {
			c->proto = L7_OTHER;
			t->n_unknown++;
		}
		return e;
	}
	c->stash_len = 0;
	if (!p ? !http_start(t, c) : !table_start(t, c, p)) {
		t->n_refused++;
		c->proto = L7_OTHER;
		return use;
	}
	c->proto = !p ? L7_HTTP : L7_TABLE;
	return use;
}

static void unbound_drop_first(struct l7_tracker *t)
{
	free(t->unbound[0].e);
	memmove(&t->unbound[0], &t->unbound[1], --t->n_unbound * sizeof(t->unbound[0]));
	t->n_unbound_dropped++;
}

/* Keeps a copy of plaintext whose session has no socket yet. */
static void unbound_keep(struct l7_tracker *t, const struct ns_l7_event *e, size_t len)
{
	while (t->n_unbound &&
	       (t->n_unbound == L7_UNBOUND_MAX ||
		t->unbound[0].e->ts_ns + L7_UNBOUND_MAX_AGE_NS < e->ts_ns))
		unbound_drop_first(t);
	struct ns_l7_event *copy = malloc(len);
	if (!copy) {
		t->n_unbound_dropped++;
		return;
	}
	memcpy(copy, e, len);
	t->unbound[t->n_unbound++] = (struct l7_unbound){ copy, len };
}

static int on_data(struct l7_tracker *t, const struct ns_l7_event *e);

/* The session's socket is known: what it sent unbound is fed now, in order. */
static void unbound_bind(struct l7_tracker *t, const struct ns_l7_event *b)
{
	uint64_t session;
	memcpy(&session, b->data, sizeof(session));
	unsigned kept = 0;
	for (unsigned i = 0; i < t->n_unbound; i++) {
		struct ns_l7_event *e = t->unbound[i].e;
		if (e->pid != b->pid || e->conn.sock != session) {
			t->unbound[kept++] = t->unbound[i];
			continue;
		}
		e->fd = b->fd;
		e->conn = b->conn;
		e->conn.flags = (b->conn.flags & ~NS_L7_F_UNBOUND) | NS_L7_F_TLS;
		on_data(t, e);
		free(e);
	}
	t->n_unbound = kept;
}

int l7_tracker_on_record(void *ctx, const void *data, size_t len)
{
	struct l7_tracker *t = ctx;
	const struct ns_l7_event *e = data;

	if (len < NS_L7_HEADER_SIZE || e->captured > NS_L7_CAPTURE || e->captured > e->total ||
	    len < NS_L7_HEADER_SIZE + e->captured ||
	    (e->op != NS_L7_READ && e->op != NS_L7_WRITE && e->op != NS_L7_BIND) ||
	    (e->op == NS_L7_BIND && e->captured != sizeof(uint64_t)))
		return -EINVAL;
	if (e->op == NS_L7_BIND) {
		unbound_bind(t, e);
		return 0;
	}
	if (e->conn.flags & NS_L7_F_UNBOUND) {
		unbound_keep(t, e, NS_L7_HEADER_SIZE + e->captured);
		return 0;
	}
	if (e->conn.flags & NS_L7_F_DNS) {
		l7_dns_on_record(t->dns, e);
		return 0;
	}
	return on_data(t, e);
}

/* DNS over TCP: a connection to port 53 (or, inbound, on it). Plain text: DNS over TLS is 853. */
static bool dns_tcp_conn(const struct l7_conn *c, const struct ns_l7_event *e)
{
	return !c->tls && (c->inbound ? e->conn.sport : e->conn.dport) == NS_DNS_PORT;
}

/* One whole DNS-over-TCP message, handed to the DNS side as the record of a datagram. */
static void dns_tcp_msg(void *ctx, const uint8_t *msg, size_t len, uint64_t ts_ns)
{
	struct l7_chunk *k = ctx;
	struct ns_l7_event *m = k->t->dns_msg;
	size_t header = NS_L7_HEADER_SIZE;

	memcpy(m, k->e, header);
	m->ts_ns = ts_ns;
	m->total = m->captured = (uint32_t)len;
	memcpy(m->data, msg, len);
	l7_dns_on_record(k->t->dns, m);
}

static void dns_tcp_chunk(struct l7_tracker *t, struct l7_conn *c, const struct ns_l7_event *e,
			  enum l7_dir dir)
{
	struct l7_chunk k = { t, c, e, dir };
	dns_tcp_feed(c->dns, dir == L7_DIR_REQUEST, e->data, e->captured, e->total, e->ts_ns, &t->dns_cnt,
		     dns_tcp_msg, &k);
}

/* A read or write of a known connection. */
static int on_data(struct l7_tracker *t, const struct ns_l7_event *e)
{
	if (e->captured < e->total)
		t->n_truncated++;

	struct l7_conn *c = conn_find(t, e->conn.sock, e->conn.start_ns);
	if (!c && !(c = conn_new(t, e->conn.sock, e->conn.start_ns, false)))
		return 0;
	if (!c->tls && !c->proto && !c->chunks_seen)
		c->inbound = e->conn.flags & NS_L7_F_INBOUND; /* its first record says */
	if (e->conn.flags & NS_L7_F_TLS) {
		if (!c->tls)
			conn_switch_to_tls(t, c);
	} else if (c->tls) {
		return 0; /* ciphertext that slipped past the BPF side's filter */
	}
	bool request_dir = c->inbound ? e->op == NS_L7_READ : e->op == NS_L7_WRITE;
	if (c->proto == L7_UNKNOWN && !c->chunks_seen && dns_tcp_conn(c, e)) {
		if (!(c->dns = calloc(1, sizeof(*c->dns)))) {
			t->n_refused++;
			c->proto = L7_OTHER;
			return 0;
		}
		dns_tcp_init(c->dns);
		c->proto = L7_DNS;
	}
	if (c->proto == L7_DNS) {
		dns_tcp_chunk(t, c, e, request_dir ? L7_DIR_REQUEST : L7_DIR_RESPONSE);
		return 0;
	}

	const struct ns_l7_event *joined = NULL;
	if (c->proto == L7_UNKNOWN && (joined = detect(t, c, e, request_dir)) != e)
		e = joined;
	else
		joined = NULL;
	struct l7_chunk k = { t, c, e, request_dir ? L7_DIR_REQUEST : L7_DIR_RESPONSE };
	if (c->proto == L7_TABLE) {
		enum l7_dir d = request_dir ? L7_DIR_REQUEST : L7_DIR_RESPONSE;
		chunk_arrives(c->tab, d, e);
		l7_proto_feed(c->tab->p, c->tab->state, d, e->data, e->captured, e->total, on_table_msg,
			      &k);
	} else if (c->proto == L7_HTTP) {
		struct http_stream *s = request_dir ? c->req : c->resp;
		uint64_t errors = s->errors;
		http_stream_feed(s, (const char *)e->data, e->captured, e->total, on_http_msg, &k);
		t->http_cnt.unparseable += s->errors - errors;
	}
	free((void *)joined);
	return 0;
}

const char *l7_tracker_fan_out_domain(const struct l7_tracker *t, int family, const uint8_t *addr)
{
	return l7_dns_fan_out_domain(t->dns, family, addr);
}
