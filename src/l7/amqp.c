/*
 * AMQP 0-9-1 (RabbitMQ), both directions. A connection opens with the
 * client's protocol header "AMQP\0\0\x09\x01"; then everything is frames:
 * type (1 method, 2 content header, 3 content body, 8 heartbeat), channel,
 * a 4-byte size, the payload and the frame end 0xCE. A method frame's
 * payload starts with its class and method ids.
 *
 * Messages are counted, not paired (the messages family, proto.h): a
 * Basic.Publish the client sends is "produce", a Basic.Deliver (pushed to a
 * consumer) or Basic.Get-Ok (answering a poll) the server sends is
 * "consume"; the trace form is the exchange and the routing key. Content
 * header and body frames, which carry the message, are skipped by their
 * size, captured or not: never read. The rest (connection, channel, queue,
 * exchange methods, acks, heartbeats) is framed and passed.
 */
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "reader.h"

#define AM_HEADER 7		/* type, channel, size */
#define AM_FRAME_END 0xce
#define AM_MAX_FRAME (64u << 20)    /* framing: longer is garbage */
#define AM_DETECT_MAX (1u << 20)    /* detection: a frame is trusted below 1 MiB */

#define T_METHOD 1
#define T_HEADER 2
#define T_BODY 3
#define T_HEARTBEAT 8

#define C_BASIC 60
#define M_PUBLISH 40
#define M_DELIVER 60
#define M_GET_OK 71

static const uint8_t protocol_header[8] = { 'A', 'M', 'Q', 'P', 0, 0, 9, 1 };

enum am_st { AM_FRAME_HEAD, AM_PROTO_TAIL, AM_PAYLOAD };

struct am_dir {
	struct l7_reader r;
	enum am_st st;
	bool lost;
	uint8_t type;
};

struct am_state {
	struct l7_counters cnt;
	struct am_dir d[2];
};

/* The classes of 0-9-1 (connection, channel, exchange, queue, basic, confirm, tx). */
static bool known_class(unsigned c)
{
	return c == 10 || c == 20 || c == 40 || c == 50 || c == 60 || c == 85 || c == 90;
}

/* A frame starts at p (n bytes of it here): its head, and what of its payload is here. */
static bool frame_ok(const uint8_t *p, size_t n)
{
	if (n < 8)
		return false;
	uint8_t t = p[0];
	uint32_t size = l7_be32(p + 3);
	if (size >= AM_DETECT_MAX)
		return false;
	if (n > AM_HEADER + size && p[AM_HEADER + size] != AM_FRAME_END)
		return false;
	switch (t) {
	case T_METHOD:
		return size >= 4 && n >= 11 && known_class(l7_be16(p + 7)) && l7_be16(p + 9) > 0 &&
		       l7_be16(p + 9) < 200;
	case T_HEADER: /* class, weight 0, body size */
		return size >= 14 && n >= 11 && l7_be16(p + 7) == C_BASIC && l7_be16(p + 9) == 0;
	case T_HEARTBEAT:
		return size == 0 && l7_be16(p + 1) == 0 && p[7] == AM_FRAME_END;
	default:
		return false; /* a body frame's bytes tell nothing */
	}
}

static bool am_detect(const uint8_t *p, size_t n)
{
	if (!p)
		return false;
	if (n >= 8 && !memcmp(p, protocol_header, 8))
		return true;
	return frame_ok(p, n);
}

static int am_init(void *sv)
{
	struct am_state *s = sv;
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 2; i++)
		l7_reader_next(&s->d[i].r, L7_U_FIXED, AM_HEADER);
	return 0;
}

static struct l7_counters *am_counters(void *sv)
{
	return &((struct am_state *)sv)->cnt;
}

/* A short string at b[*off] into out; false when not in b. */
static bool shortstr(const uint8_t *b, size_t n, size_t *off, char *out, size_t cap)
{
	if (*off >= n || n - *off - 1 < b[*off])
		return false;
	l7_copy_printable(out, cap, b + *off + 1, b[*off]);
	*off += 1u + b[*off];
	return true;
}

/* A method frame's payload (its start kept): a message when it publishes or delivers one. */
static void method(struct am_state *s, struct am_dir *d, bool client, l7_msg_fn fn, void *ctx)
{
	const uint8_t *b = d->r.at;
	size_t n = d->r.have, off;
	char exchange[96] = "", key[128] = "";

	if (n < 4 || l7_be16(b) != C_BASIC)
		return;
	unsigned m = l7_be16(b + 2);
	if (client && m == M_PUBLISH) {
		off = 6; /* reserved short */
	} else if (!client && (m == M_DELIVER || m == M_GET_OK)) {
		off = 4;
		if (m == M_DELIVER && !shortstr(b, n, &off, exchange, sizeof(exchange)))
			return; /* the consumer tag */
		off += 9; /* delivery tag, redelivered */
	} else {
		return;
	}
	struct l7_msg msg;
	l7_msg_init(&msg, L7_MSG_REQUEST_NOREPLY);
	strcpy(msg.op, client ? "produce" : "consume");
	exchange[0] = '\0';
	if (shortstr(b, n, &off, exchange, sizeof(exchange)))
		shortstr(b, n, &off, key, sizeof(key));
	snprintf(msg.text, sizeof(msg.text), "%s%s%s", exchange, exchange[0] ? " " : "", key);
	s->cnt.messages++;
	fn(ctx, &msg);
}

static void am_feed(void *sv, enum l7_dir dir, const uint8_t *data, size_t captured, size_t total,
		    l7_msg_fn fn, void *ctx)
{
	struct am_state *s = sv;
	struct am_dir *d = &s->d[dir];
	bool client = dir == L7_DIR_REQUEST;
	size_t pos = 0;

	if (d->lost) {
		if (!am_detect(data, captured))
			return;
		d->lost = false;
		d->st = AM_FRAME_HEAD;
		l7_reader_next(&d->r, L7_U_FIXED, AM_HEADER);
	}
	while (pos < total) {
		enum l7_take t = l7_reader_take(&d->r, data, captured, total, &pos);
		if (t == L7_TAKE_MORE)
			break;
		if (t == L7_TAKE_LOST) {
			s->cnt.lost++;
			d->lost = true;
			return;
		}
		switch (d->st) {
		case AM_FRAME_HEAD: {
			const uint8_t *h = d->r.at;
			if (!memcmp(h, protocol_header, AM_HEADER)) {
				/* the protocol header (or the server's refusal, the same bytes) */
				d->st = AM_PROTO_TAIL;
				l7_reader_next(&d->r, L7_U_FIXED, 1);
				continue;
			}
			uint32_t size = l7_be32(h + 3);
			d->type = h[0];
			if ((d->type != T_METHOD && d->type != T_HEADER && d->type != T_BODY &&
			     d->type != T_HEARTBEAT) ||
			    size >= AM_MAX_FRAME) {
				s->cnt.unparseable++;
				d->lost = true;
				return;
			}
			d->st = AM_PAYLOAD;
			/* a method's payload is kept; content is skipped unread; both with the frame end */
			l7_reader_next(&d->r, d->type == T_METHOD ? L7_U_BODY : L7_U_SKIP,
				       (uint64_t)size + 1);
			continue;
		}
		case AM_PROTO_TAIL:
			if (d->r.at[0] != protocol_header[7]) {
				s->cnt.unparseable++;
				d->lost = true;
				return;
			}
			break;
		case AM_PAYLOAD:
			if (d->type == T_METHOD) {
				if (!d->r.cut && d->r.at[d->r.have - 1] != AM_FRAME_END) {
					s->cnt.unparseable++;
					d->lost = true;
					return;
				}
				if (d->r.uncaptured)
					s->cnt.truncated++;
				method(s, d, client, fn, ctx);
			}
			break;
		}
		d->st = AM_FRAME_HEAD;
		l7_reader_next(&d->r, L7_U_FIXED, AM_HEADER);
	}
}

const struct l7_proto l7_proto_rabbitmq = {
	.name = "rabbitmq",
	.family = L7_FAMILY_MESSAGES,
	.pair = L7_PAIR_FIFO,
	.default_port = 5672,
	.state_size = sizeof(struct am_state),
	.detect_request = am_detect,
	.detect_response = am_detect,
	.init = am_init,
	.feed = am_feed,
	.counters = am_counters,
};
