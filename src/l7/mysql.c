/*
 * MySQL / MariaDB client/server protocol, both directions.
 *
 * Framing: a 3-byte little-endian payload length and a sequence number; a
 * payload of 0xffffff continues in the next packet. A command is a client
 * packet with sequence 0 (auth and LOCAL INFILE packets never are), and its
 * response starts at sequence 1. The client's commands are remembered in
 * order so that the response side knows what it reads (a prepare answer, a
 * result set). A response ends with OK or ERR, or a result set's terminator
 * (an EOF, or an OK headed 0xfe with CLIENT_DEPRECATE_EOF) whose status has
 * no SERVER_MORE_RESULTS_EXISTS: the result sets of a multi-statement query
 * or a procedure call are one response.
 *
 * The handshake: the server's greeting (protocol 10) starts an auth exchange
 * that ends with its OK or ERR; a client answering it with a 32-byte SSL
 * request (CLIENT_SSL) switches the connection to TLS: tls_started() says
 * so, and the same state then takes the decrypted bytes (the rest of the
 * auth exchange first).
 */
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "reader.h"
#include "sql_strip.h"
#include "stmts.h"

#define MY_CMDS 32 /* commands awaiting their response */

#define CLIENT_SSL 0x800u
#define SERVER_MORE_RESULTS_EXISTS 0x0008u

enum {
	COM_QUIT = 0x01,
	COM_INIT_DB = 0x02,
	COM_QUERY = 0x03,
	COM_PING = 0x0e,
	COM_STMT_PREPARE = 0x16,
	COM_STMT_EXECUTE = 0x17,
	COM_STMT_SEND_LONG_DATA = 0x18,
	COM_STMT_CLOSE = 0x19,
};

static const char *const command_names[] = {
	[0x00] = "SLEEP",	  [0x01] = "QUIT",	     [0x02] = "USE",
	[0x03] = "QUERY",	  [0x04] = "FIELD_LIST",     [0x05] = "CREATE_DB",
	[0x06] = "DROP_DB",	  [0x07] = "REFRESH",	     [0x08] = "SHUTDOWN",
	[0x09] = "STATISTICS",	  [0x0a] = "PROCESS_INFO",   [0x0b] = "CONNECT",
	[0x0c] = "PROCESS_KILL",  [0x0d] = "DEBUG",	     [0x0e] = "PING",
	[0x0f] = "TIME",	  [0x10] = "DELAYED_INSERT", [0x11] = "CHANGE_USER",
	[0x12] = "BINLOG_DUMP",	  [0x13] = "TABLE_DUMP",     [0x14] = "CONNECT_OUT",
	[0x15] = "REGISTER_SLAVE", [0x16] = "PREPARE",	     [0x17] = "EXECUTE",
	[0x18] = "SEND_LONG_DATA", [0x19] = "CLOSE",	     [0x1a] = "STMT_RESET",
	[0x1b] = "SET_OPTION",	  [0x1c] = "STMT_FETCH",     [0x1d] = "DAEMON",
	[0x1e] = "BINLOG_DUMP_GTID", [0x1f] = "RESET_CONNECTION",
};
#define N_COMMANDS (sizeof(command_names) / sizeof(command_names[0]))

enum my_rs {
	RS_IDLE,      /* the next packet starts a response */
	RS_DEFS,      /* column or parameter definitions to pass */
	RS_OPT_EOF,   /* after definitions: an EOF unless CLIENT_DEPRECATE_EOF */
	RS_ROWS,      /* rows up to the terminator */
	RS_INFILE,    /* LOCAL INFILE: the server waits for the file, then answers OK/ERR */
};

#define MY_PREPS 4 /* prepares awaiting their statement id */

struct my_cmd {
	uint8_t cmd;
	char text[L7_TEXT_LEN]; /* a prepare's statement, for its id */
	char op[L7_OP_LEN];
};

struct my_prep {
	char text[L7_TEXT_LEN];
	char op[L7_OP_LEN];
};

struct my_dir {
	struct l7_reader r;
	bool lost;
	bool in_header;
	uint8_t seq;
	uint32_t len;	/* the packet's payload length */
	bool continued; /* the previous packet was 0xffffff long: the next carries on */
	bool skipping;	/* passing a continuation's payload */
};

struct my_state {
	struct l7_counters cnt;
	struct my_dir d[2];
	bool tls;
	bool greeting; /* the server's greeting seen, the client's answer not yet */
	bool auth;     /* inside the auth exchange */
	/* the response side */
	enum my_rs rs;
	uint32_t defs_left;
	uint32_t prep_cols; /* a prepare answer: column definitions after the parameters */
	uint8_t rs_cmd;	    /* the command being answered */
	uint8_t cmds[MY_CMDS]; /* the commands sent, oldest first */
	unsigned c_head, c_n;
	struct my_prep preps[MY_PREPS]; /* the COM_STMT_PREPAREs among them, their text */
	unsigned p_head, p_n;
	struct l7_stmts stmts;
};

static bool cmd_known(uint8_t c)
{
	return c < N_COMMANDS && c != 0x00;
}

static bool printable(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 && p[i] != '\n' && p[i] != '\r' && p[i] != '\t')
			return false;
	return true;
}

/* A length-encoded integer at p (n bytes): its value and size, or 0 size. */
static size_t lenenc(const uint8_t *p, size_t n, uint64_t *v)
{
	if (!n)
		return 0;
	if (p[0] < 0xfb) {
		*v = p[0];
		return 1;
	}
	if (p[0] == 0xfc && n >= 3) {
		*v = l7_le16(p + 1);
		return 3;
	}
	if (p[0] == 0xfd && n >= 4) {
		*v = l7_le24(p + 1);
		return 4;
	}
	if (p[0] == 0xfe && n >= 9) {
		*v = (uint64_t)l7_le32(p + 1) | (uint64_t)l7_le32(p + 5) << 32;
		return 9;
	}
	return 0;
}

static bool my_detect_request(const uint8_t *p, size_t n)
{
	size_t off = 0;
	unsigned k = 0;

	if (!p)
		return false;
	/* whole commands, each sequence 0 (a client writes a command at once) */
	while (off + 5 <= n && k < 8) {
		uint32_t len = l7_le24(p + off);
		uint8_t seq = p[off + 3], c = p[off + 4];
		if (seq != 0 || len == 0 || len >= 0xffffff || !cmd_known(c))
			return false;
		size_t avail = n - off - 4 < len ? n - off - 4 : len;
		if ((c == COM_QUERY || c == COM_STMT_PREPARE) && !printable(p + off + 5, avail - 1))
			return false;
		/*
		 * A schema name (COM_INIT_DB, the old COM_CREATE_DB and
		 * COM_DROP_DB): printable and not empty. A CQL v5 OPTIONS reads as
		 * a COM_CREATE_DB of four zero bytes.
		 */
		if ((c == COM_INIT_DB || c == 0x05 || c == 0x06) &&
		    (len < 2 || (avail >= 2 && p[off + 5] < 0x20) || !printable(p + off + 5, avail - 1)))
			return false;
		if (c == COM_STMT_EXECUTE && len < 10)
			return false;
		if ((c == COM_QUIT || c == COM_PING) && len != 1)
			return false;
		if (avail < len) /* a long statement, cut */
			return k == 0 && avail >= 64 && (c == COM_QUERY || c == COM_STMT_PREPARE);
		off += 4 + len;
		k++;
	}
	return k > 0 && off == n;
}

/* The server's greeting: protocol 10, a printable version string. */
static bool greeting(const uint8_t *p, size_t n)
{
	if (n < 8 || p[3] != 0 || p[4] != 0x0a)
		return false;
	uint32_t len = l7_le24(p);
	if (len < 30 || len > 1024)
		return false;
	size_t end = n < 4 + len ? n : 4 + len;
	const uint8_t *z = memchr(p + 5, 0, end - 5);
	return z && z > p + 5 && printable(p + 5, (size_t)(z - p - 5));
}

/*
 * The start of a response: sequence 1, then an OK, an ERR (with its '#'
 * SQLSTATE marker), or a column count followed by a column definition.
 */
static bool my_detect_response(const uint8_t *p, size_t n)
{
	if (!p)
		return false;
	if (greeting(p, n))
		return true;
	if (n < 5 || p[3] != 1)
		return false;
	uint32_t len = l7_le24(p);
	if (len == 0 || len >= 0xffffff || n < 4 + len)
		return false;
	const uint8_t *b = p + 4;
	switch (b[0]) {
	case 0x00: {
		/* OK: affected rows, insert id, status, warnings */
		uint64_t v;
		size_t off = 1, k;
		for (int i = 0; i < 2; i++) {
			if (!(k = lenenc(b + off, len - off, &v)))
				return false;
			off += k;
		}
		return off + 4 <= len && len <= 64 + off + 4 + 1024;
	}
	case 0xff:
		return len >= 9 && b[3] == '#' && printable(b + 4, len - 4);
	default: {
		uint64_t cols;
		size_t k = lenenc(b, len, &cols);
		if (!k || k != len || cols == 0 || cols > 4096)
			return false;
		/* a column definition: catalog "def" */
		const uint8_t *c = p + 4 + len;
		size_t left = n - 4 - len;
		return left >= 8 && c[3] == 2 && c[4] == 3 && !memcmp(c + 5, "def", 3);
	}
	}
}

static int my_init(void *sv)
{
	struct my_state *s = sv;
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 2; i++) {
		l7_reader_next(&s->d[i].r, L7_U_FIXED, 4);
		s->d[i].in_header = true;
	}
	return 0;
}

static void my_free(void *sv)
{
	l7_stmts_free(&((struct my_state *)sv)->stmts);
}

static struct l7_counters *my_counters(void *sv)
{
	return &((struct my_state *)sv)->cnt;
}

static bool my_tls_started(void *sv)
{
	return ((struct my_state *)sv)->tls;
}

static void emit(struct my_state *s, struct l7_msg *m, l7_msg_fn fn, void *ctx)
{
	s->cnt.messages++;
	fn(ctx, m);
}

static void push_cmd(struct my_state *s, uint8_t cmd, const struct l7_msg *m)
{
	if (s->c_n == MY_CMDS) {
		/* the oldest is the likeliest to have been answered unseen */
		if (s->cmds[s->c_head] == COM_STMT_PREPARE && s->p_n) {
			s->p_head = (s->p_head + 1) % MY_PREPS;
			s->p_n--;
		}
		s->c_head = (s->c_head + 1) % MY_CMDS;
		s->c_n--;
		s->cnt.table_full++;
	}
	s->cmds[(s->c_head + s->c_n++) % MY_CMDS] = cmd;
	if (cmd != COM_STMT_PREPARE)
		return;
	if (s->p_n == MY_PREPS) {
		s->p_head = (s->p_head + 1) % MY_PREPS;
		s->p_n--;
		s->cnt.table_full++;
	}
	struct my_prep *p = &s->preps[(s->p_head + s->p_n++) % MY_PREPS];
	memcpy(p->text, m->text, sizeof(p->text));
	memcpy(p->op, m->op, sizeof(p->op));
}

static bool pop_cmd(struct my_state *s, struct my_cmd *out)
{
	if (!s->c_n)
		return false;
	out->cmd = s->cmds[s->c_head];
	s->c_head = (s->c_head + 1) % MY_CMDS;
	s->c_n--;
	out->text[0] = out->op[0] = '\0';
	if (out->cmd == COM_STMT_PREPARE && s->p_n) {
		const struct my_prep *p = &s->preps[s->p_head];
		memcpy(out->text, p->text, sizeof(out->text));
		memcpy(out->op, p->op, sizeof(out->op));
		s->p_head = (s->p_head + 1) % MY_PREPS;
		s->p_n--;
	}
	return true;
}

static void query_text(const uint8_t *b, size_t n, bool cut, struct l7_msg *m)
{
	sql_operation((const char *)b, n, m->op, sizeof(m->op));
	sql_strip(SQL_MYSQL, (const char *)b, n, m->text, sizeof(m->text));
	if (cut)
		sql_mark_cut(m->text, sizeof(m->text));
}

/* A client packet: b[0..n) of its payload (cut when long), seq its sequence. */
static void client_packet(struct my_state *s, uint8_t seq, const struct l7_reader *r,
			  uint32_t len, l7_msg_fn fn, void *ctx)
{
	const uint8_t *b = r->at;
	size_t n = r->have;
	struct l7_msg m;
	l7_msg_init(&m, L7_MSG_REQUEST);
	char id[16];

	if (seq != 0) {
		if (s->greeting && seq == 1 && n >= 4) {
			/* the answer to the greeting: an SSL request is 32 bytes long */
			s->greeting = false;
			if (len == 32 && (l7_le32(b) & CLIENT_SSL))
				s->tls = true;
		}
		return; /* auth data, LOCAL INFILE contents */
	}
	if (!n)
		return;
	switch (b[0]) {
	case COM_QUERY: {
		size_t off = 1;
		/* query attributes with no parameters (MySQL 8 clients): count 0, one set */
		if (n >= 3 && b[1] == 0 && b[2] == 1)
			off = 3;
		query_text(b + off, n - off, r->cut, &m);
		break;
	}
	case COM_STMT_PREPARE:
		query_text(b + 1, n - 1, r->cut, &m);
		push_cmd(s, b[0], &m);
		strcpy(m.op, "PREPARE");
		emit(s, &m, fn, ctx);
		return;
	case COM_STMT_EXECUTE: {
		const struct l7_stmt *st = NULL;
		if (n >= 5) {
			snprintf(id, sizeof(id), "%u", l7_le32(b + 1));
			st = l7_stmts_get(&s->stmts, id);
		}
		if (st) {
			memcpy(m.op, st->op, sizeof(m.op));
			memcpy(m.text, st->text, sizeof(m.text));
		} else {
			strcpy(m.op, "EXECUTE"); /* prepared before we saw the connection */
		}
		break;
	}
	case COM_STMT_CLOSE:
		if (n >= 5) {
			snprintf(id, sizeof(id), "%u", l7_le32(b + 1));
			l7_stmts_del(&s->stmts, id);
		}
		return;
	case COM_QUIT:
	case COM_STMT_SEND_LONG_DATA:
		return; /* no answer */
	default:
		if (!cmd_known(b[0]))
			return;
		l7_join(m.op, sizeof(m.op), command_names[b[0]], NULL);
		break;
	}
	push_cmd(s, b[0], &m);
	emit(s, &m, fn, ctx);
}

/* The status flags of an OK packet (b[0] 0x00 or 0xfe) or an EOF. */
static uint16_t status_flags(const uint8_t *b, size_t n)
{
	uint64_t v;
	size_t off = 1, k;
	if (b[0] == 0xfe && n == 5)
		return l7_le16(b + 3); /* EOF: warnings, status */
	for (int i = 0; i < 2; i++) {
		if (!(k = lenenc(b + off, n - off, &v)))
			return 0;
		off += k;
	}
	return off + 2 <= n ? l7_le16(b + off) : 0;
}

static void respond(struct my_state *s, enum l7_status st, const char *code, l7_msg_fn fn,
		    void *ctx)
{
	struct l7_msg m;
	l7_msg_init(&m, L7_MSG_RESPONSE);
	m.status = st;
	if (code)
		l7_join(m.code, sizeof(m.code), code, NULL);
	s->rs = RS_IDLE;
	emit(s, &m, fn, ctx);
}

static void error(struct my_state *s, const struct l7_reader *r, l7_msg_fn fn, void *ctx)
{
	char code[L7_CODE_LEN] = "";
	if (r->have >= 3)
		snprintf(code, sizeof(code), "%u", l7_le16(r->at + 1));
	respond(s, L7_STATUS_FAILED, code, fn, ctx);
}

/* The end of a result set: another follows, or the response is over. */
static void terminator(struct my_state *s, const struct l7_reader *r, l7_msg_fn fn, void *ctx)
{
	if (status_flags(r->at, r->have) & SERVER_MORE_RESULTS_EXISTS)
		s->rs = RS_IDLE; /* the next result set is part of this response */
	else
		respond(s, L7_STATUS_OK, NULL, fn, ctx);
}

static void server_packet(struct my_state *s, uint8_t seq, const struct l7_reader *r,
			  uint32_t len, l7_msg_fn fn, void *ctx)
{
	const uint8_t *b = r->at;
	size_t n = r->have;

	if (!n)
		return;
	if (seq == 0 && b[0] == 0x0a) {
		/* the greeting: an auth exchange follows */
		s->greeting = s->auth = true;
		s->rs = RS_IDLE;
		s->c_n = s->p_n = 0;
		return;
	}
	if (s->auth) {
		if (b[0] == 0x00 || b[0] == 0xff)
			s->auth = false;
		return;
	}
	bool eof = b[0] == 0xfe && len < 0xffffff;
	if (seq == 1 && s->rs != RS_IDLE && s->rs != RS_INFILE) {
		/*
		 * A new response. After a prepare's definitions that is expected
		 * (no EOF with CLIENT_DEPRECATE_EOF); elsewhere the previous
		 * response's end was not seen.
		 */
		if (s->rs != RS_OPT_EOF || s->rs_cmd != COM_STMT_PREPARE)
			s->cnt.unparseable++;
		s->rs = RS_IDLE;
	}
	switch (s->rs) {
	case RS_IDLE: {
		struct my_cmd c = { .cmd = COM_QUERY };
		if (seq == 1 && !pop_cmd(s, &c))
			c.cmd = COM_QUERY; /* a command sent before we saw the connection */
		s->rs_cmd = c.cmd;
		if (b[0] == 0xff) {
			error(s, r, fn, ctx);
		} else if (b[0] == 0x00 && c.cmd == COM_STMT_PREPARE && n >= 9) {
			/* statement id, columns, parameters; their definitions follow */
			char id[16];
			snprintf(id, sizeof(id), "%u", l7_le32(b + 1));
			if (l7_stmts_put(&s->stmts, id, c.op, c.text))
				s->cnt.table_full++;
			uint16_t cols = l7_le16(b + 5), params = l7_le16(b + 7);
			respond(s, L7_STATUS_OK, NULL, fn, ctx);
			s->prep_cols = params ? cols : 0;
			s->defs_left = params ? params : cols;
			s->rs = s->defs_left ? RS_DEFS : RS_IDLE;
		} else if (b[0] == 0x00 || eof) {
			terminator(s, r, fn, ctx);
		} else if (b[0] == 0xfb) {
			s->rs = RS_INFILE;
		} else {
			uint64_t cols;
			size_t k = lenenc(b, n, &cols);
			if (!k || !cols) {
				s->cnt.unparseable++;
				respond(s, L7_STATUS_UNKNOWN, NULL, fn, ctx);
				break;
			}
			s->defs_left = cols > UINT32_MAX ? UINT32_MAX : (uint32_t)cols;
			s->prep_cols = 0;
			s->rs = RS_DEFS;
			/*
			 * MariaDB's metadata cache: a byte after the count says
			 * whether the definitions follow (0: the client has them).
			 */
			if (n == k + 1 && b[k] == 0)
				s->rs = RS_OPT_EOF;
		}
		break;
	}
	case RS_DEFS:
		if (b[0] == 0xff) {
			error(s, r, fn, ctx);
			break;
		}
		if (--s->defs_left)
			break;
		s->rs = RS_OPT_EOF;
		break;
	case RS_OPT_EOF:
		if (eof && n == 5) {
			/* the EOF after definitions (no CLIENT_DEPRECATE_EOF) */
			if (s->prep_cols) {
				s->defs_left = s->prep_cols;
				s->prep_cols = 0;
				s->rs = RS_DEFS;
			} else {
				s->rs = s->rs_cmd == COM_STMT_PREPARE ? RS_IDLE : RS_ROWS;
			}
			break;
		}
		if (s->prep_cols) {
			s->defs_left = s->prep_cols - 1; /* this packet is the first */
			s->prep_cols = 0;
			s->rs = s->defs_left ? RS_DEFS : RS_OPT_EOF;
			break;
		}
		if (s->rs_cmd == COM_STMT_PREPARE) {
			/* a prepare's definitions end without EOF: this packet starts the next response */
			s->rs = RS_IDLE;
			server_packet(s, seq, r, len, fn, ctx);
			break;
		}
		/* a row, or the terminator of an empty result */
		s->rs = RS_ROWS;
		/* fall through */
	case RS_ROWS:
		if (b[0] == 0xff)
			error(s, r, fn, ctx);
		else if (eof)
			terminator(s, r, fn, ctx);
		break;
	case RS_INFILE:
		if (b[0] == 0xff)
			error(s, r, fn, ctx);
		else if (b[0] == 0x00)
			terminator(s, r, fn, ctx);
		break;
	}
}

static void my_feed(void *sv, enum l7_dir dir, const uint8_t *data, size_t captured, size_t total,
		    l7_msg_fn fn, void *ctx)
{
	struct my_state *s = sv;
	struct my_dir *d = &s->d[dir];
	bool req = dir == L7_DIR_REQUEST, tls = s->tls;
	size_t pos = 0;

	if (d->lost) {
		if (!(req ? my_detect_request : my_detect_response)(data, captured))
			return;
		d->lost = false; /* resynchronised at this chunk */
		d->in_header = true;
		d->continued = d->skipping = false;
		l7_reader_next(&d->r, L7_U_FIXED, 4);
	}
	while (pos < total || (!d->in_header && !d->r.left)) {
		enum l7_take t = l7_reader_take(&d->r, data, captured, total, &pos);
		if (t == L7_TAKE_MORE)
			break;
		if (t == L7_TAKE_LOST) {
			s->cnt.lost++;
			d->lost = true;
			return;
		}
		if (d->in_header) {
			uint32_t len = l7_le24(d->r.at);
			d->seq = d->r.at[3];
			d->len = len;
			/* a continuation's payload belongs to the message before: pass it */
			d->skipping = d->continued;
			d->continued = len == 0xffffff;
			d->in_header = false;
			l7_reader_next(&d->r, d->skipping ? L7_U_SKIP : L7_U_BODY, len);
			continue;
		}
		if (d->r.uncaptured)
			s->cnt.truncated++;
		if (!d->skipping) {
			if (req)
				client_packet(s, d->seq, &d->r, d->len, fn, ctx);
			else
				server_packet(s, d->seq, &d->r, d->len, fn, ctx);
		}
		d->in_header = true;
		l7_reader_next(&d->r, L7_U_FIXED, 4);
		if (s->tls && !tls) {
			/* the rest of this chunk, if any, is the TLS handshake */
			return;
		}
	}
}

const struct l7_proto l7_proto_mysql = {
	.name = "mysql",
	.pair = L7_PAIR_FIFO,
	.default_port = 3306,
	.state_size = sizeof(struct my_state),
	.detect_request = my_detect_request,
	.detect_response = my_detect_response,
	.init = my_init,
	.feed = my_feed,
	.free = my_free,
	.counters = my_counters,
	.tls_started = my_tls_started,
};
