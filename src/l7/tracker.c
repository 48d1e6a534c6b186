#include "tracker.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "events.h"
#include "http.h"
#include "metrics/registry.h"
#include "proc/table.h"
#include "tcp/addr.h"
#include "trace/trace.h"
#include "util/hmap.h"

#define L7_PENDING 16	  /* requests awaiting a response per connection (pipelining) */
#define L7_DETECT_CHUNKS 4 /* chunks looked at before a connection is called unknown */
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

enum l7_proto { L7_UNKNOWN, L7_HTTP, L7_OTHER };

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
	enum l7_proto proto;
	unsigned chunks_seen;
	bool inbound;
	bool tls; /* plaintext comes from TLS library probes; raw bytes are ignored */
	char actual[TCP_ADDR_STRLEN]; /* outbound: the destination after NAT, once known */
	char local[TCP_ADDR_STRLEN], remote[TCP_ADDR_STRLEN]; /* formatted at its first pair */
	struct l7_series series[L7_SERIES_SLOTS];
	struct l7_request pending[L7_PENDING];
	unsigned p_head, p_tail;
	struct http_stream *req, *resp; /* allocated once HTTP is detected */
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
	uint64_t n_refused, n_unpaired, n_overflow, n_unknown, n_truncated;
	struct metric *requests, *duration, *in_requests, *in_duration;
	struct metric *m_errors, *m_conns;
};

/* Coroot's buckets, in seconds. */
static const double duration_bounds[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
					  0.5,	 1,    2.5,   5,    10 };
#define T struct l7_tracker
#define OUT_LABELS METRIC_LABELS("container_id", "destination", "actual_destination", "status")
#define OUT_HIST_LABELS METRIC_LABELS("container_id", "destination", "actual_destination")
/* Coroot's inbound set: no listen address (the server maps instances by the listens). */
static const struct metric_def l7_metrics[] = {
	{ "container_http_requests_total", "Outbound HTTP requests, by response status.",
	  METRIC_COUNTER, OUT_LABELS, .capped = true, .expires = true, METRIC_HANDLE(T, requests) },
	{ "container_http_requests_duration_seconds_total",
	  "Outbound HTTP request latency: first byte of the request written to first byte of the "
	  "response read.",
	  METRIC_HISTOGRAM, OUT_HIST_LABELS, METRIC_BOUNDS(duration_bounds), .capped = true, .expires = true,
	  METRIC_HANDLE(T, duration) },
	{ "container_http_inbound_requests_total",
	  "HTTP requests the container served, by response status.", METRIC_COUNTER,
	  METRIC_LABELS("container_id", "status"), .capped = true, .expires = true, METRIC_HANDLE(T, in_requests) },
	{ "container_http_inbound_requests_duration_seconds_total",
	  "Served HTTP request latency: first byte of the request read to first byte of the "
	  "response written.",
	  METRIC_HISTOGRAM, METRIC_LABELS("container_id"), METRIC_BOUNDS(duration_bounds),
	  .capped = true, .expires = true, METRIC_HANDLE(T, in_duration) },
	{ "nodescope_l7_parse_errors_total",
	  "Malformed, truncated or unfollowable protocol data (each a resynchronisation).",
	  METRIC_COUNTER, METRIC_LABELS("proto"), METRIC_HANDLE(T, m_errors) },
	{ "nodescope_l7_connections", "Connections with L7 parsing state.", METRIC_GAUGE,
	  METRIC_HANDLE(T, m_conns) },
	{ "nodescope_l7_connections_refused_total",
	  "Connections not parsed: the L7 table was full.", METRIC_COUNTER,
	  METRIC_VALUE(T, n_refused) },
	{ "nodescope_l7_unpaired_responses_total", "Responses with no request waiting for them.",
	  METRIC_COUNTER, METRIC_VALUE(T, n_unpaired) },
	{ "nodescope_l7_pending_overflow_total",
	  "Requests dropped: too many waiting for a response on one connection.", METRIC_COUNTER,
	  METRIC_VALUE(T, n_overflow) },
	{ "nodescope_l7_unknown_protocol_connections_total",
	  "Connections whose protocol was not recognised.", METRIC_COUNTER,
	  METRIC_VALUE(T, n_unknown) },
	{ "nodescope_l7_tls_unbound_dropped_total",
	  "TLS plaintext whose socket never became known (a library on memory BIOs whose "
	  "ciphertext write was not seen).",
	  METRIC_COUNTER, METRIC_VALUE(T, n_unbound_dropped) },
	{ "nodescope_l7_truncated_total",
	  "Reads and writes captured only in part (longer than the capture size).",
	  METRIC_COUNTER, METRIC_VALUE(T, n_truncated) },
};
#undef OUT_LABELS
#undef OUT_HIST_LABELS
#undef T
static const char *const http_proto = "http";

/* The context of one record while its chunk is fed to a parser. */
struct l7_chunk {
	struct l7_tracker *t;
	struct l7_conn *c;
	const struct ns_l7_event *e;
};

static void l7_collect(void *ctx)
{
	struct l7_tracker *t = ctx;

	metric_set(t->m_conns, NULL, (double)t->conns.count);
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
	if (metric_register_defs(r, l7_metrics, METRIC_DEFS_COUNT(l7_metrics), t, o->max_series)) {
		l7_tracker_free(t);
		return -EINVAL;
	}
	metric_add(t->m_errors, &http_proto, 0);
	metric_registry_add_collector(r, l7_collect, t);
	*out = t;
	return 0;
}

static void conn_free(struct l7_conn *c)
{
	free(c->req);
	free(c->resp);
	free(c);
}

/* What was seen before was the handshake's ciphertext: start over on plaintext. */
static void conn_switch_to_tls(struct l7_conn *c)
{
	free(c->req);
	free(c->resp);
	c->req = c->resp = NULL;
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
		conn_free(hmap_entry(n, struct l7_conn, node));
	hmap_destroy(&t->conns);
	free(t);
}

static struct l7_conn *conn_find(struct l7_tracker *t, uint64_t sock, uint64_t start_ns)
{
	for (struct hmap_node *n = hmap_get(&t->conns, sock); n; n = hmap_next_same(n)) {
		struct l7_conn *c = hmap_entry(n, struct l7_conn, node);
		if (c->start_ns == start_ns)
			return c;
	}
	return NULL;
}

static void conn_forget(struct l7_tracker *t, struct l7_conn *c)
{
	hmap_unlink(&t->conns, &c->node);
	conn_free(c);
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
	hmap_insert(&t->conns, &c->node, sock);
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
 * The connection's destination after NAT, asked once (the TCP side keeps
 * it only while the connection is open).
 */
static const char *conn_actual(struct l7_tracker *t, struct l7_conn *c, const struct ns_l7_sock *s,
			       const char *remote)
{
	if (!c->actual[0] && t->o.actual_destination)
		t->o.actual_destination(t->o.actual_ctx, s, c->actual, sizeof(c->actual));
	return c->actual[0] ? c->actual : remote;
}

/* The request and duration series of one pair, from the connection's slots when they hold. */
static const struct l7_series *pair_series(struct l7_tracker *t, struct l7_conn *c,
					   const struct ns_l7_sock *s, const char *container,
					   const char *code)
{
	struct metric *count = c->inbound ? t->in_requests : t->requests;
	struct metric *duration = c->inbound ? t->in_duration : t->duration;
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
		const char *actual = conn_actual(t, c, s, c->remote);
		const char *labels[] = { container, c->remote, actual, code };
		slot->count = metric_series_get(count, labels);
		slot->duration = metric_series_get(duration, labels);
	}
	/* Refused (cap, policy): asked again next time, never kept. */
	slot->status = slot->count && slot->duration ? code : NULL;
	slot->generation = metric_generation(count) + metric_generation(duration);
	return slot;
}

static void record_pair(struct l7_chunk *k, const struct l7_request *rq, int status)
{
	struct l7_tracker *t = k->t;
	struct l7_conn *c = k->c;
	const struct ns_l7_sock *s = &k->e->conn;
	uint64_t dur = k->e->ts_ns > rq->ts_ns ? k->e->ts_ns - rq->ts_ns : 0;
	const char *container = proc_table_container_of(t->o.procs, k->e->pid);

	if (!c->remote[0]) {
		tcp_addr_format(s->family, s->saddr, s->sport, c->local, sizeof(c->local));
		tcp_addr_format(s->family, s->daddr, s->dport, c->remote, sizeof(c->remote));
	}
	const char *local = c->local, *remote = c->remote;
	const struct l7_series *series = pair_series(t, c, s, container, http_status_class(status));
	metric_series_add(series->count, 1);
	metric_series_observe(c->inbound ? t->in_duration : t->duration, series->duration, dur / 1e9);
	struct trace_l7 r = {
		.proto = "http",
		.pid = k->e->pid,
		.inbound = k->c->inbound,
		.tls = k->e->conn.flags & NS_L7_F_TLS,
		.method = rq->method,
		.path = rq->path,
		.status = status,
		.ts_ns = rq->ts_ns,
		.duration_ns = dur,
		.src = k->c->inbound ? remote : local,
		.dst = k->c->inbound ? local : remote,
		.container = container,
	};
	trace_l7(t->o.trace, &r);
}

static int on_http_msg(void *ctx, const struct http_msg *m)
{
	struct l7_chunk *k = ctx;
	struct l7_conn *c = k->c;

	if (m->is_request) {
		if (c->p_tail - c->p_head == L7_PENDING) {
			k->t->n_overflow++;
			c->p_head++;
		}
		struct l7_request *rq = &c->pending[c->p_tail++ % L7_PENDING];
		memcpy(rq->method, m->req.method, sizeof(rq->method));
		memcpy(rq->path, m->req.path, sizeof(rq->path));
		rq->ts_ns = k->e->ts_ns;
		return 0;
	}
	if (c->p_head == c->p_tail) {
		k->t->n_unpaired++;
		return 0;
	}
	const struct l7_request *rq = &c->pending[c->p_head % L7_PENDING];
	/* Tell the response parser what the request implies for its body. */
	int verdict = !strcmp(rq->method, "HEAD") ? 1 : !strcmp(rq->method, "CONNECT") ? 2 : 0;
	/* An interim 1xx answer (100 Continue) leaves the request waiting. */
	if (m->resp.status >= 100 && m->resp.status < 200 && m->resp.status != 101)
		return 0;
	c->p_head++;
	record_pair(k, rq, m->resp.status);
	return verdict;
}

static bool detect(const struct ns_l7_event *e, bool is_request_dir)
{
	const char *d = (const char *)e->data;
	if (is_request_dir)
		return http_looks_like_request(d, e->captured);
	return http_looks_like_response(d, e->captured);
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
	return on_data(t, e);
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
			conn_switch_to_tls(c);
	} else if (c->tls) {
		return 0; /* ciphertext that slipped past the BPF side's filter */
	}
	bool request_dir = c->inbound ? e->op == NS_L7_READ : e->op == NS_L7_WRITE;

	if (c->proto == L7_UNKNOWN) {
		if (detect(e, request_dir)) {
			c->req = malloc(sizeof(*c->req));
			c->resp = malloc(sizeof(*c->resp));
			if (!c->req || !c->resp) {
				t->n_refused++;
				c->proto = L7_OTHER;
				return 0;
			}
			http_stream_init(c->req, true);
			http_stream_init(c->resp, false);
			c->proto = L7_HTTP;
		} else if (++c->chunks_seen >= L7_DETECT_CHUNKS) {
			c->proto = L7_OTHER;
			t->n_unknown++;
			return 0;
		} else {
			return 0;
		}
	}
	if (c->proto != L7_HTTP)
		return 0;

	struct l7_chunk k = { t, c, e };
	struct http_stream *s = request_dir ? c->req : c->resp;
	uint64_t errors = s->errors;
	http_stream_feed(s, (const char *)e->data, e->captured, e->total, on_http_msg, &k);
	if (s->errors != errors)
		metric_add(t->m_errors, &http_proto, (double)(s->errors - errors));
	return 0;
}
