#include "recent.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "families_json.h"
#include "proc/event.h"
#include "trace/json.h"
#include "trace/trace.h"
#include "util/hmap.h"

#define MINUTE_NS (60ull * 1000000000ull)
#define WINDOW_MIN 5
#define SLOTS (WINDOW_MIN + 1) /* the current minute and the 5 before it */

struct recent_exit {
	uint64_t ts_ns;
	uint64_t duration_ns;
	uint32_t pid, code, signal;
	bool oom;
	char comm[17];
	char container[256]; /* cut: a longer name is told apart by its start */
};

struct recent_req {
	struct hmap_node node;
	char *container, *proto, *method, *path;
	size_t path_len;
	bool inbound;
	uint64_t count, errors, dur_ns;
	uint64_t slot_min[SLOTS]; /* which minute each slot counts */
	uint64_t slot_count[SLOTS], slot_errors[SLOTS], slot_dur_ns[SLOTS];
};

/*
 * Enough for a connection pool's statements on both ends (pgbench's default
 * script: seven, each seen from the client and the server): with 4, most of
 * its rows missed and hashed their four strings, a fifth of the agent.
 * A miss costs a compare of the side and the length per row.
 */
#define RECENT_HOT 16

struct page_recent {
	struct recent_exit *exits; /* ring of RECENT_EXITS */
	unsigned n_exits, next_exit;
	struct hmap reqs;
	/*
	 * The rows found last, tried before the table: under load most requests
	 * repeat one of a few rows (a connection's two ends), and comparing is
	 * cheaper than hashing four strings. Rows live as long as the table.
	 */
	struct recent_req *hot[RECENT_HOT];
	unsigned hot_next;
	uint64_t refused;
};

struct page_recent *page_recent_new(void)
{
	struct page_recent *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->exits = calloc(RECENT_EXITS, sizeof(*r->exits));
	if (!r->exits || hmap_init(&r->reqs, RECENT_REQUESTS)) {
		free(r->exits);
		free(r);
		return NULL;
	}
	return r;
}

static void req_free(struct recent_req *q)
{
	free(q->container);
	free(q->proto);
	free(q->method);
	free(q->path);
	free(q);
}

void page_recent_free(struct page_recent *r)
{
	if (!r)
		return;
	struct hmap_node *n;
	while ((n = hmap_pop(&r->reqs)))
		req_free(hmap_entry(n, struct recent_req, node));
	hmap_destroy(&r->reqs);
	free(r->exits);
	free(r);
}

const uint64_t *page_recent_refused(const struct page_recent *r)
{
	return &r->refused;
}

static void copy_cut(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src ? src : "");
	if (n >= size)
		n = size - 1;
	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

void page_recent_on_proc(void *ctx, const struct proc_event *e, const char *container)
{
	struct page_recent *r = ctx;

	if (e->type != NS_PROC_EXIT && e->type != NS_PROC_OOM_KILL)
		return;
	struct recent_exit *x = &r->exits[r->next_exit];
	r->next_exit = (r->next_exit + 1) % RECENT_EXITS;
	if (r->n_exits < RECENT_EXITS)
		r->n_exits++;
	*x = (struct recent_exit){ .ts_ns = e->ts_ns, .pid = e->pid,
				   .oom = e->type == NS_PROC_OOM_KILL };
	if (!x->oom) {
		x->code = e->exit_code;
		x->signal = e->signal;
		x->duration_ns = e->duration_ns;
	}
	copy_cut(x->comm, sizeof(x->comm), e->comm);
	copy_cut(x->container, sizeof(x->container), container ? container : "/");
}

/* Whether the request failed: HTTP 5xx, or what another protocol's parser calls failed. */
static bool failed(const struct trace_l7 *rq)
{
	if (rq->method)
		return rq->status >= 500;
	return rq->status_name && !strcmp(rq->status_name, "failed");
}

static char *dup_cut(const char *s, size_t max, const char *stop)
{
	size_t n = strcspn(s ? s : "", stop);
	if (n > max)
		n = max;
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s ? s : "", n);
		d[n] = '\0';
	}
	return d;
}

/*
 * Whether row c is the one of these fields (path: its first plen bytes).
 * The fields that tell a connection's rows apart come first: the rows
 * tried are mostly one container's and protocol's.
 */
static bool req_is(const struct recent_req *c, bool inbound, const char *container, const char *proto,
		   const char *method, const char *path, size_t plen)
{
	return c->inbound == inbound && c->path_len == plen && !strcmp(c->method, method) &&
	       !memcmp(c->path, path, plen) && !strcmp(c->proto, proto) &&
	       !strcmp(c->container, container);
}

void page_recent_on_l7(void *ctx, const struct trace_l7 *rq)
{
	struct page_recent *r = ctx;
	/* A query string carries values, not the resource: it is cut. */
	const char *stop = rq->method ? "?#" : "";
	const char *container = rq->container ? rq->container : "/";
	const char *proto = rq->proto ? rq->proto : "";
	/* HTTP has a method and path; the other protocols an operation and statement. */
	const char *method = rq->method ? rq->method : rq->op ? rq->op : "";
	const char *path = rq->method ? (rq->path ? rq->path : "") : (rq->statement ? rq->statement : "");
	size_t plen = strcspn(path, stop);
	if (plen > RECENT_PATH_LEN)
		plen = RECENT_PATH_LEN;

	struct recent_req *q = NULL;
	for (unsigned i = 0; i < RECENT_HOT && !q; i++)
		if (r->hot[i] && req_is(r->hot[i], rq->inbound, container, proto, method, path, plen))
			q = r->hot[i];
	uint64_t h = 0;
	if (!q) {
		h = hmap_hash_str(container) ^ (hmap_hash_str(proto) * 3) ^
		    (hmap_hash_str(method) * 5) ^ (hmap_hash_bytes(path, plen) * 7) ^ rq->inbound;
		for (struct hmap_node *n = hmap_get(&r->reqs, h); n && !q; n = hmap_next_same(n)) {
			struct recent_req *c = hmap_entry(n, struct recent_req, node);
			if (req_is(c, rq->inbound, container, proto, method, path, plen))
				q = c;
		}
		if (q)
			r->hot[r->hot_next++ % RECENT_HOT] = q;
	}
	if (!q) {
		if (r->reqs.count >= RECENT_REQUESTS || !(q = calloc(1, sizeof(*q)))) {
			r->refused++;
			return;
		}
		q->container = strdup(container);
		q->proto = strdup(proto);
		q->method = dup_cut(method, 64, "");
		q->path = dup_cut(path, plen, "");
		q->path_len = plen;
		q->inbound = rq->inbound;
		if (!q->container || !q->proto || !q->method || !q->path) {
			req_free(q);
			r->refused++;
			return;
		}
		hmap_insert(&r->reqs, &q->node, h);
		r->hot[r->hot_next++ % RECENT_HOT] = q;
	}
	bool err = failed(rq);
	q->count++;
	q->errors += err;
	q->dur_ns += rq->duration_ns;
	uint64_t min = rq->ts_ns / MINUTE_NS;
	unsigned s = min % SLOTS;
	if (q->slot_min[s] != min) {
		q->slot_min[s] = min;
		q->slot_count[s] = q->slot_errors[s] = q->slot_dur_ns[s] = 0;
	}
	q->slot_count[s]++;
	q->slot_errors[s] += err;
	q->slot_dur_ns[s] += rq->duration_ns;
}

struct top {
	const char *container;
	struct recent_req **v;
	unsigned n, max;
};

/* Keeps the max largest counts, in v sorted by count, largest first. */
static void top_add(void *ctx, struct hmap_node *node)
{
	struct top *t = ctx;
	struct recent_req *q = hmap_entry(node, struct recent_req, node);

	if (strcmp(q->container, t->container))
		return;
	if (t->n == t->max && q->count <= t->v[t->n - 1]->count)
		return;
	unsigned i = t->n < t->max ? t->n++ : t->n - 1;
	while (i > 0 && t->v[i - 1]->count < q->count) {
		t->v[i] = t->v[i - 1];
		i--;
	}
	t->v[i] = q;
}

static void req_json(const struct recent_req *q, uint64_t now_ns, struct strbuf *out)
{
	uint64_t now_min = now_ns / MINUTE_NS, c = 0, e = 0, d = 0;
	for (unsigned s = 0; s < SLOTS; s++) {
		/* The last 5 minutes: this one (partly gone) and the 4 whole ones before. */
		if (q->slot_min[s] + WINDOW_MIN > now_min && q->slot_min[s] <= now_min) {
			c += q->slot_count[s];
			e += q->slot_errors[s];
			d += q->slot_dur_ns[s];
		}
	}
	strbuf_puts(out, "{\"proto\":");
	json_string(out, q->proto);
	strbuf_printf(out, ",\"inbound\":%s,\"method\":", q->inbound ? "true" : "false");
	json_string(out, q->method);
	strbuf_puts(out, ",\"path\":");
	json_string(out, q->path);
	strbuf_printf(out, ",\"count\":%llu,\"errors\":%llu,\"seconds\":",
		      (unsigned long long)q->count, (unsigned long long)q->errors);
	json_number(out, q->dur_ns / 1e9);
	strbuf_printf(out, ",\"recent\":[%llu,%llu,", (unsigned long long)c, (unsigned long long)e);
	json_number(out, d / 1e9);
	strbuf_puts(out, "]}");
}

void page_recent_json(struct page_recent *r, const char *container, uint64_t now_ns,
		      unsigned max, struct strbuf *out)
{
	strbuf_puts(out, "\"exits\":[");
	unsigned n = 0;
	for (unsigned i = 0; i < r->n_exits; i++) {
		const struct recent_exit *x =
			&r->exits[(r->next_exit + RECENT_EXITS - 1 - i) % RECENT_EXITS];
		if (strcmp(x->container, container))
			continue;
		strbuf_puts(out, n++ ? ",{\"pid\":" : "{\"pid\":");
		strbuf_printf(out, "%u,\"comm\":", x->pid);
		json_string(out, x->comm);
		strbuf_printf(out, ",\"oom\":%s,\"code\":%u,\"signal\":%u,\"duration\":",
			      x->oom ? "true" : "false", x->code, x->signal);
		json_number(out, x->duration_ns / 1e9);
		strbuf_puts(out, ",\"ago\":");
		json_number(out, now_ns > x->ts_ns ? (now_ns - x->ts_ns) / 1e9 : 0);
		strbuf_putc(out, '}');
	}
	strbuf_puts(out, "],\"requests\":[");
	struct top t = { container, calloc(max ? max : 1, sizeof(*t.v)), 0, max };
	if (t.v && max)
		hmap_foreach(&r->reqs, top_add, &t);
	for (unsigned i = 0; i < t.n; i++) {
		if (i)
			strbuf_putc(out, ',');
		req_json(t.v[i], now_ns, out);
	}
	free(t.v);
	strbuf_putc(out, ']');
}
