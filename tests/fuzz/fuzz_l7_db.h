/*
 * The body of the database parser fuzz targets (fuzz_l7_NAME.c, one per
 * protocol in src/l7/proto.h's table).
 *
 * Input: records of a 2-byte header and data: byte 0 bit 0 is the direction
 * (0 client, 1 server), bits 1-7 how many bytes past the data were not
 * captured; byte 1 the data's length (a short last record takes what is
 * left). Each record is one chunk, copied into a buffer of exactly its
 * captured size, so a read past it is caught.
 *
 * Checks, besides no crash: every message's strings are terminated inside
 * their fields and printable; the counters only grow; the pairing accepts
 * every message; and when nothing was lost or uncaptured, feeding every
 * chunk split in two halves gives the same messages (the half after a
 * switch to TLS is the rest of its chunk, which the switch drops). The
 * detect functions run on every chunk, and the SQL stripper on the whole
 * input in each dialect (bounded, terminated, no control or invalid UTF-8
 * bytes out).
 */
#ifndef NODESCOPE_FUZZ_L7_DB_H
#define NODESCOPE_FUZZ_L7_DB_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "l7/pair.h"
#include "l7/proto.h"
#include "l7/sql_strip.h"

#include "fuzz_check.h"

#define FZ_MAX_CHUNKS 256
#define FZ_MAX_MSGS 512

struct fz_chunk {
	uint8_t dir;
	const uint8_t *p;
	size_t len, uncaptured;
};

struct fz_log {
	struct l7_msg m[FZ_MAX_MSGS];
	size_t n;
	struct l7_pair pair;
};

static void fz_pair_fn(void *ctx, const struct l7_pending *req, enum l7_status st, const char *code,
		       bool skipped)
{
	CHECK(st <= L7_STATUS_UNKNOWN);
	CHECK(strnlen(code, L7_CODE_LEN) < L7_CODE_LEN);
	CHECK(!skipped || st == L7_STATUS_FAILED);
	CHECK(req->kind == L7_MSG_REQUEST || req->kind == L7_MSG_REQUEST_UNTIL_SYNC);
}

static void fz_printable(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);
	CHECK(n < cap);
	for (size_t i = 0; i < n; i++)
		CHECK((unsigned char)s[i] >= 0x20 && (unsigned char)s[i] != 0x7f);
}

static void fz_on_msg(void *ctx, const struct l7_msg *m)
{
	struct fz_log *l = ctx;
	CHECK(m->kind <= L7_MSG_HANDSHAKE);
	CHECK(m->status <= L7_STATUS_UNKNOWN);
	fz_printable(m->op, L7_OP_LEN);
	fz_printable(m->text, L7_TEXT_LEN);
	fz_printable(m->code, L7_CODE_LEN);
	if (l->n < FZ_MAX_MSGS)
		l->m[l->n++] = *m;
	l7_pair_request(&l->pair, m, l->n);
	l7_pair_response(&l->pair, m, fz_pair_fn, l);
	CHECK(l7_pair_waiting(&l->pair) <= L7_PAIR_MAX);
}

static uint64_t fz_sum(const struct l7_counters *c)
{
	return c->messages + c->unparseable + c->truncated + c->lost + c->table_full + c->unpaired;
}

static void fz_feed(const struct l7_proto *p, void *st, const struct fz_chunk *c, size_t at,
		    struct fz_log *l)
{
	/* [at, at+n) of the chunk's captured bytes; the uncaptured tail goes with the last part */
	size_t n = c->len - at, total = n + c->uncaptured;
	uint8_t *buf = malloc(n ? n : 1);
	CHECK(buf);
	memcpy(buf, c->p + at, n);
	uint64_t before = fz_sum(p->counters(st));
	l7_proto_feed(p, st, c->dir ? L7_DIR_RESPONSE : L7_DIR_REQUEST, buf, n, total, fz_on_msg, l);
	CHECK(fz_sum(p->counters(st)) >= before);
	free(buf);
}

/* All chunks, each whole (half == false) or in two halves. */
static struct l7_counters fz_run(const struct l7_proto *p, const struct fz_chunk *c, size_t n,
				 bool half, struct fz_log *l)
{
	void *st = calloc(1, p->state_size);
	CHECK(st);
	CHECK(p->init(st) == 0);
	memset(l, 0, sizeof(*l));
	l7_pair_init(&l->pair, p->pair, p->counters(st));
	for (size_t i = 0; i < n; i++) {
		if (half && c[i].len >= 2 && !c[i].uncaptured) {
			struct fz_chunk a = c[i];
			size_t mid = c[i].len / 2;
			a.len = mid;
			bool tls = l7_proto_tls_started(p, st);
			fz_feed(p, st, &a, 0, l);
			/*
			 * A switch to TLS drops the rest of its chunk (TLS records
			 * follow): the second half is that rest, not a chunk of its own.
			 */
			if (tls || !l7_proto_tls_started(p, st))
				fz_feed(p, st, &c[i], mid, l);
		} else {
			fz_feed(p, st, &c[i], 0, l);
		}
	}
	struct l7_counters out = *p->counters(st);
	(void)l7_proto_tls_started(p, st);
	l7_pair_free(&l->pair);
	l7_proto_free(p, st);
	free(st);
	return out;
}

static void fz_strip(const uint8_t *data, size_t size)
{
	char out[L7_TEXT_LEN];
	for (int d = SQL_POSTGRES; d <= SQL_CLICKHOUSE; d++) {
		size_t n = sql_strip((enum sql_dialect)d, (const char *)data, size, out, sizeof(out));
		CHECK(n < sizeof(out) && strlen(out) == n);
		for (size_t i = 0; i < n; i++)
			CHECK((unsigned char)out[i] >= 0x20 && out[i] != 0x7f);
		sql_operation((const char *)data, size, out, L7_OP_LEN);
		CHECK(strlen(out) < L7_OP_LEN);
	}
}

static int fz_l7_db(const struct l7_proto *p, const uint8_t *data, size_t size)
{
	static struct fz_chunk c[FZ_MAX_CHUNKS];
	static struct fz_log whole, split;
	size_t n = 0, off = 0;
	bool uncaptured = false;

	while (off + 2 <= size && n < FZ_MAX_CHUNKS) {
		size_t len = data[off + 1];
		c[n].dir = data[off] & 1;
		c[n].uncaptured = data[off] >> 1;
		uncaptured |= c[n].uncaptured != 0;
		off += 2;
		if (len > size - off)
			len = size - off;
		c[n].p = data + off;
		c[n].len = len;
		off += len;
		(void)(c[n].dir ? p->detect_response(c[n].p, len) : p->detect_request(c[n].p, len));
		n++;
	}
	struct l7_counters a = fz_run(p, c, n, false, &whole);
	struct l7_counters b = fz_run(p, c, n, true, &split);
	if (!uncaptured && !a.lost && !a.unparseable && !b.lost && !b.unparseable) {
		CHECK(whole.n == split.n);
		for (size_t i = 0; i < whole.n; i++) {
			CHECK(whole.m[i].kind == split.m[i].kind);
			CHECK(whole.m[i].status == split.m[i].status);
			CHECK(!strcmp(whole.m[i].op, split.m[i].op));
			CHECK(!strcmp(whole.m[i].text, split.m[i].text));
			CHECK(!strcmp(whole.m[i].code, split.m[i].code));
			CHECK(whole.m[i].id == split.m[i].id);
		}
	}
	fz_strip(data, size);
	return 0;
}

#endif
