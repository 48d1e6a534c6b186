/*
 * ClickHouse native TCP protocol, as far as Debian's 18.16 (protocol
 * revision 54412) and the published packet layouts let it be checked.
 *
 * Packets are a varint type and fields (varints, strings with a varint
 * length, fixed integers), some present only from a protocol revision on:
 * the revision in use is the smaller of the two Hello packets'. The client's
 * Query packet carries the query id, the client info, the settings (from
 * revision 54429 as strings; older binary settings cannot be passed without
 * their types, so a query that changes settings on an old server is lost),
 * the stage, the compression flag and the query text: one request. The
 * server answers with Data, Progress, ProfileInfo... and ends with
 * EndOfStream (ok) or Exception (failed, code = the exception code).
 *
 * Data blocks are typed column data that cannot be passed without decoding
 * the types, except compressed (the usual case): a block is then a run of
 * compressed frames, each with its length. A frame that ends where a
 * chunk ends ends its block (the server flushes each packet); otherwise
 * another frame follows when its header looks right. An uncompressed block
 * loses the framing until a chunk starts with a packet (EndOfStream or
 * Exception on their own are one write each on the server).
 */
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "reader.h"
#include "sql_strip.h"

/* Revisions where fields appear. */
#define REV_TIMEZONE 54058
#define REV_QUOTA_KEY 54060
#define REV_DISPLAY_NAME 54372
#define REV_PATCH 54401
#define REV_WRITE_INFO 54420
#define REV_SETTINGS_STRINGS 54429
#define REV_OPENTELEMETRY 54442
#define REV_INTERSERVER_SECRET 54441
#define REV_DISTRIBUTED_DEPTH 54448
#define REV_QUERY_START_TIME 54449
#define REV_PARALLEL_REPLICAS 54453
#define REV_ADDENDUM 54458
#define REV_PARAMETERS 54459
#define REV_QUERY_TIME_IN_PROGRESS 54460
#define REV_ROWS_BEFORE_AGGREGATION 54469
#define REV_CHUNKED 54470 /* a framing of its own: not followed */

enum prim { P_TYPE, P_VARINT, P_STRING, P_U8, P_FIXED, P_FRAME, P_SKIP };

struct ch_dir {
	struct l7_reader r;
	bool lost;
	enum prim prim;
	bool str_len;	 /* P_STRING: reading the length varint */
	uint64_t val;	 /* the last number read */
	unsigned shift;	 /* varint: bits so far */
	int packet;	 /* the packet being read, -1 between packets */
	unsigned step;	 /* the field within it */
	uint64_t count;	 /* a loop's count (part UUIDs) */
};

struct ch_state {
	struct l7_counters cnt;
	struct ch_dir d[2];
	uint32_t client_rev, server_rev;
	bool compress; /* the last query asked for compressed data blocks */
	bool otel;
	struct l7_msg query;
};

static uint32_t rev(const struct ch_state *s)
{
	uint32_t c = s->client_rev ? s->client_rev : 54412, v = s->server_rev ? s->server_rev : c;
	return c < v ? c : v;
}

/* Detection helpers over a chunk: a cursor with bounds. */
struct cur {
	const uint8_t *p;
	size_t n, off;
};

static bool c_varint(struct cur *c, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned sh = 0; sh < 64 && c->off < c->n; sh += 7) {
		uint8_t b = c->p[c->off++];
		x |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

static bool c_string(struct cur *c, size_t max, bool printable)
{
	uint64_t len;
	if (!c_varint(c, &len) || len > max || c->off + len > c->n)
		return false;
	for (size_t i = 0; printable && i < len; i++)
		if (c->p[c->off + i] < 0x20 || c->p[c->off + i] == 0x7f)
			return false;
	c->off += len;
	return true;
}

static bool hello(struct cur *c)
{
	uint64_t major, minor, r;
	if (!c_string(c, 64, true) || !c_varint(c, &major) || !c_varint(c, &minor) ||
	    !c_varint(c, &r))
		return false;
	return major < 1000 && minor < 1000 && r >= 54000 && r < 60000;
}

static bool ch_detect_request(const uint8_t *p, size_t n)
{
	struct cur c = { p, n, 1 };
	if (!p || n < 4)
		return false;
	if (p[0] == 0)
		return hello(&c);
	/* Query: an id (empty or a UUID), an initial query, the client info's start */
	if (p[0] != 1 || !c_string(&c, 64, true) || (c.off - 2 != 0 && c.off - 2 != 36) ||
	    c.off >= n || (p[c.off] != 1 && p[c.off] != 2))
		return false;
	c.off++;
	for (int i = 0; i < 3; i++)
		if (!c_string(&c, 256, true))
			return false;
	/* the interface (1 TCP, 2 HTTP), after a start time from revision 54449 */
	struct cur d = c;
	if (c.off < n && (p[c.off] == 1 || p[c.off] == 2)) {
		c.off++;
		if (c_string(&c, 256, true))
			return true;
	}
	d.off += 8;
	if (d.off < n && (p[d.off] == 1 || p[d.off] == 2)) {
		d.off++;
		return c_string(&d, 256, true);
	}
	return false;
}

static bool ch_detect_response(const uint8_t *p, size_t n)
{
	struct cur c = { p, n, 1 };
	if (!p || !n)
		return false;
	if (p[0] == 5)
		return n == 1; /* EndOfStream, written alone */
	if (p[0] == 0)
		return hello(&c);
	if (p[0] == 2 && n >= 6) {
		/* Exception: a code, then a name like "DB::Exception" (a one-byte length) */
		uint32_t code = l7_le32(p + 1);
		c.off = 5;
		return code > 0 && code < 100000 && p[5] >= 4 && p[5] < 0x80 &&
		       c_string(&c, 127, true) && !memcmp(p + 6, "DB::", 4);
	}
	return false;
}

static int ch_init(void *sv)
{
	struct ch_state *s = sv;
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 2; i++) {
		s->d[i].packet = -1;
		s->d[i].prim = P_TYPE;
		l7_reader_next(&s->d[i].r, L7_U_FIXED, 1);
	}
	return 0;
}

static struct l7_counters *ch_counters(void *sv)
{
	return &((struct ch_state *)sv)->cnt;
}

static void want(struct ch_dir *d, enum prim p, uint64_t n)
{
	d->prim = p;
	d->val = 0;
	d->shift = 0;
	d->str_len = p == P_STRING;
	switch (p) {
	case P_TYPE:
	case P_VARINT:
	case P_STRING:
	case P_U8:
		l7_reader_next(&d->r, L7_U_FIXED, 1);
		break;
	case P_FIXED:
		l7_reader_next(&d->r, L7_U_FIXED, n);
		break;
	case P_FRAME:
		l7_reader_next(&d->r, L7_U_FIXED, 25);
		break;
	case P_SKIP:
		l7_reader_next(&d->r, L7_U_SKIP, n);
		break;
	}
}

static void end_packet(struct ch_dir *d)
{
	d->packet = -1;
	d->step = 0;
	want(d, P_TYPE, 0);
}

static bool frame_method(uint8_t m)
{
	return m == 0x02 || m == 0x82 || (m >= 0x90 && m <= 0x97);
}

/* Does a compressed frame header start at data[pos]? */
static bool frame_at(const uint8_t *data, size_t captured, size_t pos)
{
	if (!data || pos + 25 > captured)
		return false;
	uint32_t csize = l7_le32(data + pos + 17), dsize = l7_le32(data + pos + 21);
	return frame_method(data[pos + 16]) && csize >= 9 && csize < (1u << 30) && dsize < (1u << 30);
}

static void emit(struct ch_state *s, struct l7_msg *m, l7_msg_fn fn, void *ctx)
{
	s->cnt.messages++;
	fn(ctx, m);
}

static void response(struct ch_state *s, enum l7_status st, const char *code, l7_msg_fn fn,
		     void *ctx)
{
	struct l7_msg m;
	l7_msg_init(&m, L7_MSG_RESPONSE);
	m.status = st;
	if (code)
		l7_join(m.code, sizeof(m.code), code, NULL);
	emit(s, &m, fn, ctx);
}

/*
 * A field of the current packet was read (d->val, or d->r.at for strings and
 * fixed fields): choose the next. Returns false when the data cannot be
 * followed. The client's Query and the server's packets are programs of
 * steps; a step that does not apply at this revision falls through.
 */
static bool client_field(struct ch_state *s, struct ch_dir *d, l7_msg_fn fn, void *ctx)
{
	uint32_t r = rev(s);
	switch (d->packet) {
	case 0: /* Hello: name, major, minor, revision, database, user, password */
		switch (d->step++) {
		case 0: want(d, P_STRING, 0); return true;
		case 1: case 2: case 3: want(d, P_VARINT, 0); return true;
		case 4: s->client_rev = (uint32_t)d->val; want(d, P_STRING, 0); return true;
		case 5: case 6: want(d, P_STRING, 0); return true;
		default: end_packet(d); return true;
		}
	case 1: /* Query */
		for (;;) {
			unsigned st = d->step++;
			switch (st) {
			case 0: want(d, P_STRING, 0); return true; /* query id */
			case 1: want(d, P_U8, 0); return true;	   /* query kind */
			case 2:
				if (d->val == 0) {
					d->step = 40; /* no client info */
					continue;
				}
				want(d, P_STRING, 0); /* initial user */
				return true;
			case 3: want(d, P_STRING, 0); return true; /* initial query id */
			case 4: want(d, P_STRING, 0); return true; /* initial address */
			case 5:
				if (r < REV_QUERY_START_TIME)
					continue;
				want(d, P_FIXED, 8);
				return true;
			case 6: want(d, P_U8, 0); return true; /* interface */
			case 7:
				if (d->val != 1)
					return false; /* not TCP: fields not followed */
				want(d, P_STRING, 0); /* os user */
				return true;
			case 8: case 9: want(d, P_STRING, 0); return true; /* host, client name */
			case 10: case 11: case 12: want(d, P_VARINT, 0); return true;
			case 13:
				if (r < REV_QUOTA_KEY)
					continue;
				want(d, P_STRING, 0);
				return true;
			case 14:
				if (r < REV_DISTRIBUTED_DEPTH)
					continue;
				want(d, P_VARINT, 0);
				return true;
			case 15:
				if (r < REV_PATCH)
					continue;
				want(d, P_VARINT, 0);
				return true;
			case 16:
				if (r < REV_OPENTELEMETRY) {
					d->step = 21;
					continue;
				}
				want(d, P_U8, 0);
				return true;
			case 17:
				if (!d->val) {
					d->step = 21;
					continue;
				}
				want(d, P_FIXED, 24); /* trace id, span id */
				return true;
			case 18: want(d, P_STRING, 0); return true; /* trace state */
			case 19: want(d, P_U8, 0); return true;	    /* trace flags */
			case 20: continue;
			case 21: case 22: case 23:
				if (r < REV_PARALLEL_REPLICAS)
					continue;
				want(d, P_VARINT, 0);
				return true;
			case 24: d->step = 40; continue;
			case 40: want(d, P_STRING, 0); return true; /* a setting's name */
			case 41:
				if (!d->r.have) {
					d->step = 44; /* the empty name ends them */
					continue;
				}
				if (r < REV_SETTINGS_STRINGS)
					return false; /* binary settings need their types */
				want(d, P_VARINT, 0); /* flags */
				return true;
			case 42: want(d, P_STRING, 0); return true; /* value */
			case 43: d->step = 40; continue;
			case 44:
				if (r < REV_INTERSERVER_SECRET)
					continue;
				want(d, P_STRING, 0);
				return true;
			case 45: want(d, P_VARINT, 0); return true; /* stage */
			case 46: want(d, P_VARINT, 0); return true; /* compression */
			case 47:
				s->compress = d->val != 0;
				want(d, P_STRING, 0); /* the query */
				return true;
			case 48: {
				struct l7_msg *m = &s->query;
				l7_msg_init(m, L7_MSG_REQUEST);
				sql_operation((const char *)d->r.at, d->r.have, m->op, sizeof(m->op));
				sql_strip(SQL_CLICKHOUSE, (const char *)d->r.at, d->r.have, m->text,
					  sizeof(m->text));
				if (d->r.cut)
					sql_mark_cut(m->text, sizeof(m->text));
				if (d->r.uncaptured)
					s->cnt.truncated++;
				emit(s, m, fn, ctx);
				if (r < REV_PARAMETERS) {
					end_packet(d);
					return true;
				}
				d->step = 50;
				continue;
			}
			case 50: want(d, P_STRING, 0); return true; /* a parameter's name */
			case 51:
				if (!d->r.have) {
					end_packet(d);
					return true;
				}
				want(d, P_VARINT, 0);
				return true;
			case 52: want(d, P_STRING, 0); return true;
			case 53: d->step = 50; continue;
			default: return false;
			}
		}
	case 2: /* Data: a table name and a block */
		if (d->step++ == 0) {
			want(d, P_STRING, 0);
			return true;
		}
		if (!s->compress)
			return false;
		want(d, P_FRAME, 0);
		return true;
	case 3: /* Cancel */
	case 4: /* Ping */
		end_packet(d);
		return true;
	default:
		return false;
	}
}

static bool server_field(struct ch_state *s, struct ch_dir *d, l7_msg_fn fn, void *ctx)
{
	uint32_t r = rev(s);
	for (;;) {
		unsigned st = d->step++;
		switch (d->packet) {
		case 0: /* Hello */
			switch (st) {
			case 0: want(d, P_STRING, 0); return true;
			case 1: case 2: case 3: want(d, P_VARINT, 0); return true;
			case 4:
				s->server_rev = (uint32_t)d->val;
				r = rev(s);
				if (r >= REV_CHUNKED)
					return false;
				if (r < REV_TIMEZONE)
					continue;
				want(d, P_STRING, 0);
				return true;
			case 5:
				if (r < REV_DISPLAY_NAME)
					continue;
				want(d, P_STRING, 0);
				return true;
			case 6:
				if (r < REV_PATCH)
					continue;
				want(d, P_VARINT, 0);
				return true;
			default:
				if (r >= REV_ADDENDUM)
					return false; /* newer handshakes add fields not followed */
				end_packet(d);
				return true;
			}
		case 1: case 7: case 8: /* Data, Totals, Extremes */
			if (st == 0) {
				want(d, P_STRING, 0);
				return true;
			}
			if (!s->compress)
				return false;
			want(d, P_FRAME, 0);
			return true;
		case 2: /* Exception: code, name, message, stack trace, nested */
			switch (st) {
			case 0: want(d, P_FIXED, 4); return true;
			case 1: {
				char code[L7_CODE_LEN];
				snprintf(code, sizeof(code), "%d", (int32_t)l7_le32(d->r.at));
				response(s, L7_STATUS_FAILED, code, fn, ctx);
				want(d, P_STRING, 0);
				return true;
			}
			case 2: case 3: want(d, P_STRING, 0); return true;
			case 4: want(d, P_U8, 0); return true;
			default:
				if (d->val) {
					d->step = 6; /* a nested exception: code, then the rest */
					want(d, P_FIXED, 4);
					return true;
				}
				end_packet(d);
				return true;
			case 6: want(d, P_STRING, 0); d->step = 2; return true; /* the nested one's name */
			}
		case 3: { /* Progress */
			unsigned n = 3 + (r >= REV_WRITE_INFO ? 2 : 0) + (r >= REV_QUERY_TIME_IN_PROGRESS);
			if (st < n) {
				want(d, P_VARINT, 0);
				return true;
			}
			end_packet(d);
			return true;
		}
		case 4: /* Pong */
		case 13: /* ReadTaskRequest */
			end_packet(d);
			return true;
		case 5: /* EndOfStream */
			response(s, L7_STATUS_OK, NULL, fn, ctx);
			end_packet(d);
			return true;
		case 6: { /* ProfileInfo: rows, blocks, bytes, applied limit, rows before, calculated */
			static const enum prim f[] = { P_VARINT, P_VARINT, P_VARINT, P_U8, P_VARINT, P_U8,
						       P_U8, P_VARINT };
			unsigned n = r >= REV_ROWS_BEFORE_AGGREGATION ? 8 : 6;
			if (st < n) {
				want(d, f[st], 0);
				return true;
			}
			end_packet(d);
			return true;
		}
		case 11: /* TableColumns */
			if (st < 2) {
				want(d, P_STRING, 0);
				return true;
			}
			end_packet(d);
			return true;
		case 12: /* PartUUIDs */
			if (st == 0) {
				want(d, P_VARINT, 0);
				return true;
			}
			if (st == 1 && d->val && d->val < (1u << 24)) {
				want(d, P_SKIP, d->val * 16);
				return true;
			}
			end_packet(d);
			return true;
		default: /* Log, ProfileEvents: uncompressed blocks; unknown packets */
			return false;
		}
	}
}

static void lose(struct ch_state *s, struct ch_dir *d, bool garbage)
{
	if (garbage)
		s->cnt.unparseable++;
	else
		s->cnt.lost++;
	d->lost = true;
}

static void ch_feed(void *sv, enum l7_dir dir, const uint8_t *data, size_t captured, size_t total,
		    l7_msg_fn fn, void *ctx)
{
	struct ch_state *s = sv;
	struct ch_dir *d = &s->d[dir];
	bool req = dir == L7_DIR_REQUEST;
	size_t pos = 0;

	if (d->lost) {
		if (!(req ? ch_detect_request : ch_detect_response)(data, captured))
			return;
		d->lost = false; /* resynchronised at this chunk */
		end_packet(d);
	}
	while (pos < total || (d->prim == P_STRING && !d->str_len && !d->r.left) ||
	       (d->prim == P_SKIP && !d->r.left)) {
		enum l7_take t = l7_reader_take(&d->r, data, captured, total, &pos);
		if (t == L7_TAKE_MORE)
			break;
		if (t == L7_TAKE_LOST) {
			lose(s, d, false);
			return;
		}
		bool ok = true;
		switch (d->prim) {
		case P_TYPE:
		case P_VARINT:
		case P_STRING:
			if (d->prim != P_STRING || d->str_len) {
				uint8_t b = d->r.at[0];
				if (d->shift >= 63) {
					lose(s, d, true);
					return;
				}
				d->val |= (uint64_t)(b & 0x7f) << d->shift;
				d->shift += 7;
				if (b & 0x80) {
					l7_reader_next(&d->r, L7_U_FIXED, 1);
					continue;
				}
				if (d->prim == P_STRING) {
					if (d->val > (1u << 30)) {
						lose(s, d, true);
						return;
					}
					d->str_len = false;
					l7_reader_next(&d->r, L7_U_BODY, d->val);
					continue;
				}
			}
			if (d->prim == P_TYPE) {
				d->packet = (int)d->val;
				d->step = 0;
			}
			break;
		case P_U8:
			d->val = d->r.at[0];
			break;
		case P_FRAME: {
			const uint8_t *h = d->r.at;
			uint32_t csize = l7_le32(h + 17);
			if (!frame_method(h[16]) || csize < 9 || csize >= (1u << 30)) {
				lose(s, d, true);
				return;
			}
			want(d, P_SKIP, csize - 9);
			continue;
		}
		case P_SKIP:
			if (d->packet == 12)
				break;
			/* a frame ended: another, or the block is over */
			if (pos < total && frame_at(data, captured, pos)) {
				want(d, P_FRAME, 0);
				continue;
			}
			end_packet(d);
			continue;
		case P_FIXED:
			break;
		}
		if (d->prim == P_TYPE && (d->packet < 0 || d->packet > 64)) {
			lose(s, d, true);
			return;
		}
		ok = req ? client_field(s, d, fn, ctx) : server_field(s, d, fn, ctx);
		if (!ok) {
			lose(s, d, true);
			return;
		}
	}
}

const struct l7_proto l7_proto_clickhouse = {
	.name = "clickhouse",
	.pair = L7_PAIR_FIFO,
	.default_port = 9000,
	.one_in_flight = true,
	.state_size = sizeof(struct ch_state),
	.detect_request = ch_detect_request,
	.detect_response = ch_detect_response,
	.init = ch_init,
	.feed = ch_feed,
	.counters = ch_counters,
};
