/*
 * What the database parser tests share: loading captured exchanges
 * (tests/unit/data/l7/NAME.cap, written by capture_proxy.py: one read per line,
 * "N> hex" client to server, "N< hex" server to client, N the connection),
 * feeding them to a protocol from the table, and the messages and request /
 * response pairs it gives as text, so that feeding the same bytes split at
 * every offset can be checked to give the same text.
 */
#ifndef NODESCOPE_TESTS_UNIT_L7_HARNESS_H
#define NODESCOPE_TESTS_UNIT_L7_HARNESS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l7/pair.h"
#include "l7/proto.h"

#define H_MAX_CHUNKS 256
#define H_OUT 65536

struct h_chunk {
	enum l7_dir dir;
	uint8_t *data;
	size_t len;	 /* captured */
	size_t total;	 /* as the syscall returned; > len: the rest was not captured */
	/*
	 * Not split by h_check_splits: a chunk after lost framing, where the
	 * parser resynchronises only if the chunk starts at a message.
	 */
	bool no_split;
	bool plaintext; /* decrypted by the TLS library: fed after the switch to TLS */
};

struct h_conv {
	struct h_chunk c[H_MAX_CHUNKS];
	size_t n;
};

static void h_add(struct h_conv *v, enum l7_dir dir, const void *p, size_t len)
{
	assert_true(v->n < H_MAX_CHUNKS);
	struct h_chunk *c = &v->c[v->n++];
	c->dir = dir;
	c->data = malloc(len ? len : 1);
	assert_non_null(c->data);
	memcpy(c->data, p, len);
	c->len = c->total = len;
}

/* Adds a C string (its bytes, no NUL) as a chunk. */
__attribute__((unused)) static void h_adds(struct h_conv *v, enum l7_dir dir, const char *s)
{
	h_add(v, dir, s, strlen(s));
}

/* Connection `conn` of a capture file. */
__attribute__((unused)) static void h_load(struct h_conv *v, const char *path, int conn)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		fail_msg("cannot open %s (run the tests from the repository root)", path);
	memset(v, 0, sizeof(*v));
	while (getline(&line, &cap, f) > 0) {
		char *sp = strchr(line, ' ');
		int n;
		if (!sp || sp == line || sscanf(line, "%d", &n) != 1 || n != conn)
			continue;
		enum l7_dir dir = sp[-1] == '>' ? L7_DIR_REQUEST : L7_DIR_RESPONSE;
		size_t hl = strcspn(sp + 1, "\r\n");
		uint8_t *buf = malloc(hl / 2 + 1);
		assert_non_null(buf);
		for (size_t i = 0; i + 1 < hl; i += 2) {
			unsigned b;
			assert_int_equal(sscanf(sp + 1 + i, "%2x", &b), 1);
			buf[i / 2] = (uint8_t)b;
		}
		h_add(v, dir, buf, hl / 2);
		free(buf);
	}
	free(line);
	fclose(f);
	assert_true(v->n > 0);
}

__attribute__((unused)) static void h_free(struct h_conv *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->c[i].data);
	v->n = 0;
}

/* Text output, appended. */
struct h_out {
	char s[H_OUT];
	size_t n;
};

__attribute__((format(printf, 2, 3))) static void h_printf(struct h_out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(o->s + o->n, sizeof(o->s) - o->n, fmt, ap);
	va_end(ap);
	assert_true(k >= 0 && (size_t)k < sizeof(o->s) - o->n);
	o->n += (size_t)k;
}

static const char *const h_kinds[] = { "req",	     "noreply", "req-until-sync", "sync",
				       "resp",	     "sync-reply", "push", "lost" };

/* The run: every message, then every pair. */
struct h_run {
	struct h_out msgs;  /* one line per message */
	struct h_out pairs; /* one line per completed request */
	struct l7_pair pair;
	struct l7_counters cnt;
	uint64_t ts;
	uint64_t pair_ts[1024]; /* the chunk of each paired request, in pair order */
	size_t n_pairs;
	bool tls; /* the protocol said the connection switched to TLS */
};

static void h_on_pair(void *ctx, const struct l7_pending *req, enum l7_status st, const char *code,
		      bool skipped)
{
	struct h_run *r = ctx;
	if (r->n_pairs < 1024)
		r->pair_ts[r->n_pairs++] = req->ts_ns;
	h_printf(&r->pairs, "%s | %s => %s%s%s%s\n", req->op, req->text, l7_status_name(st),
		 code[0] ? " " : "", code, skipped ? " (skipped)" : "");
}

static void h_on_msg(void *ctx, const struct l7_msg *m)
{
	struct h_run *r = ctx;
	if (m->kind == L7_MSG_HANDSHAKE)
		return; /* it only dates messages: test_l7_tracker.c checks that */
	h_printf(&r->msgs, "%s", h_kinds[m->kind]);
	if (m->op[0] || m->text[0])
		h_printf(&r->msgs, " %s | %s", m->op, m->text);
	if (m->kind == L7_MSG_RESPONSE || m->kind == L7_MSG_SYNC_REPLY)
		h_printf(&r->msgs, " %s%s%s", l7_status_name(m->status), m->code[0] ? " " : "",
			 m->code);
	if (m->has_id)
		h_printf(&r->msgs, " #%llu", (unsigned long long)m->id);
	h_printf(&r->msgs, "\n");
	if (m->kind == L7_MSG_REQUEST_NOREPLY) {
		if (r->n_pairs < 1024)
			r->pair_ts[r->n_pairs++] = r->ts;
		h_printf(&r->pairs, "%s | %s => noreply\n", m->op, m->text);
	}
	l7_pair_request(&r->pair, m, r->ts);
	l7_pair_response(&r->pair, m, h_on_pair, r);
}

/*
 * Feeds the conversation; chunk `split` (if < v->n) is fed in two parts cut
 * at `at`. One state for the whole conversation; its counters end in r->cnt.
 */
static void h_run_from(const struct l7_proto *p, const struct h_conv *v, size_t from, size_t split,
		       size_t at, struct h_run *r)
{
	void *st = calloc(1, p->state_size);
	assert_non_null(st);
	memset(r, 0, sizeof(*r));
	assert_int_equal(p->init(st), 0);
	l7_pair_init(&r->pair, p->pair, p->counters(st));
	for (size_t i = from; i < v->n; i++) {
		const struct h_chunk *c = &v->c[i];
		r->ts = i;
		/* as the tracker does: once the protocol said TLS, raw bytes are not fed */
		if (l7_proto_tls_started(p, st) && !c->plaintext)
			continue;
		if (i == split && at > 0 && at < c->total) {
			/* each part in a buffer of its exact size: a read past it is caught */
			size_t cap1 = at < c->len ? at : c->len;
			uint8_t *a = malloc(cap1 ? cap1 : 1), *b;
			memcpy(a, c->data, cap1);
			l7_proto_feed(p, st, c->dir, a, cap1, at, h_on_msg, r);
			free(a);
			size_t cap2 = c->len > at ? c->len - at : 0;
			b = malloc(cap2 ? cap2 : 1);
			memcpy(b, c->data + (c->len > at ? at : c->len), cap2);
			l7_proto_feed(p, st, c->dir, b, cap2, c->total - at, h_on_msg, r);
			free(b);
		} else {
			uint8_t *a = malloc(c->len ? c->len : 1);
			memcpy(a, c->data, c->len);
			l7_proto_feed(p, st, c->dir, a, c->len, c->total, h_on_msg, r);
			free(a);
		}
	}
	r->cnt = *p->counters(st);
	r->tls = l7_proto_tls_started(p, st);
	l7_pair_free(&r->pair);
	l7_proto_free(p, st);
	free(st);
}

static void h_run_split(const struct l7_proto *p, const struct h_conv *v, size_t split, size_t at,
			struct h_run *r)
{
	h_run_from(p, v, 0, split, at, r);
}

__attribute__((unused)) static void h_run(const struct l7_proto *p, const struct h_conv *v,
					  struct h_run *r)
{
	h_run_split(p, v, SIZE_MAX, 0, r);
}

/*
 * A connection seen from its middle: started at each chunk `from` that the
 * protocol detects as a message boundary, the pairs are the whole run's
 * pairs of the requests from that chunk on, exactly (a suffix of them).
 * Returns how many starting points were tried.
 */
__attribute__((unused)) static size_t h_check_midstream(const struct l7_proto *p,
							const struct h_conv *v)
{
	static struct h_run whole, r;
	size_t tried = 0;
	h_run(p, v, &whole);
	for (size_t from = 1; from < v->n; from++) {
		const struct h_chunk *c = &v->c[from];
		if (c->dir != L7_DIR_REQUEST || !p->detect_request(c->data, c->len))
			continue;
		tried++;
		h_run_from(p, v, from, SIZE_MAX, 0, &r);
		size_t k = 0;
		while (k < whole.n_pairs && whole.pair_ts[k] < from)
			k++;
		/* the whole run's pair lines from the k-th on */
		const char *suffix = whole.pairs.s;
		for (size_t i = 0; i < k; i++)
			suffix = strchr(suffix, '\n') + 1;
		if (strcmp(r.pairs.s, suffix)) {
			print_error("started at chunk %zu:\n--- expected:\n%s--- got:\n%s", from, suffix,
				    r.pairs.s);
			fail();
		}
	}
	return tried;
}

/*
 * Every chunk split at every offset gives the same messages and pairs as
 * the chunks whole. Returns the whole run's output in *whole.
 */
__attribute__((unused)) static void h_check_splits(const struct l7_proto *p, const struct h_conv *v,
						   struct h_run *whole)
{
	static struct h_run r;
	h_run(p, v, whole);
	for (size_t i = 0; i < v->n; i++) {
		for (size_t at = 1; at < v->c[i].total && !v->c[i].no_split; at++) {
			h_run_split(p, v, i, at, &r);
			if (strcmp(r.msgs.s, whole->msgs.s) || strcmp(r.pairs.s, whole->pairs.s)) {
				print_error("chunk %zu split at %zu:\n--- whole:\n%s%s--- split:\n%s%s",
					    i, at, whole->msgs.s, whole->pairs.s, r.msgs.s, r.pairs.s);
				fail();
			}
		}
	}
}

/* s contains needle (with a readable failure). */
#define assert_contains(s, needle)                                                             \
	do {                                                                                   \
		if (!strstr((s), (needle)))                                                    \
			fail_msg("missing \"%s\" in:\n%s", (needle), (s));                      \
	} while (0)

#define assert_not_contains(s, needle)                                                         \
	do {                                                                                   \
		if (strstr((s), (needle)))                                                     \
			fail_msg("unexpected \"%s\" in:\n%s", (needle), (s));                   \
	} while (0)

#endif
