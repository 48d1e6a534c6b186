/*
 * The database and cache protocol parsers, one interface for all, declared
 * as data: a table of protocols the tracker dispatches through.
 *
 * Each parser is pure (no BPF, no I/O, no globals) and owns one connection's
 * state for both directions: the client's bytes (L7_DIR_REQUEST) and the
 * server's (L7_DIR_RESPONSE), fed one syscall at a time in the order they
 * happened. `data` holds the first `captured` of `total` bytes; the rest were
 * not copied, so a parser skips what it cannot see and, when it loses the
 * framing, waits for a chunk that starts at a message boundary (the same
 * test as detection) to resynchronise. Each message found is handed to a
 * callback as a struct l7_msg; requests and responses are paired by
 * src/l7/pair.h, in order or by id as the table says.
 */
#ifndef NODESCOPE_L7_PROTO_H
#define NODESCOPE_L7_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define L7_OP_LEN 32	/* "query", "execute", "GET", "find" */
#define L7_TEXT_LEN 256 /* statement or key form, literals stripped */
#define L7_CODE_LEN 32 /* SQLSTATE "42P01", MySQL "1064", Redis "WRONGTYPE", "grpc:FAILED_PRECONDITION" */

enum l7_dir { L7_DIR_REQUEST, L7_DIR_RESPONSE };

enum l7_status { L7_STATUS_OK, L7_STATUS_FAILED, L7_STATUS_UNKNOWN };

/*
 * How a message takes part in pairing (src/l7/pair.h):
 * - L7_MSG_REQUEST: a request; one later response completes it.
 * - L7_MSG_REQUEST_NOREPLY: a request the server does not answer (memcached
 *   noreply, MySQL COM_STMT_CLOSE, Mongo moreToCome): counted, never paired.
 * - L7_MSG_REQUEST_UNTIL_SYNC: a request answered by several responses and
 *   completed by the next L7_MSG_SYNC_REPLY (PostgreSQL's simple Query: one
 *   CommandComplete per statement, then ReadyForQuery); its replies fold
 *   their status into it.
 * - L7_MSG_SYNC: not a request, a barrier (PostgreSQL's Sync).
 * - L7_MSG_RESPONSE: the response to the oldest request (or to `id`).
 * - L7_MSG_SYNC_REPLY: completes everything up to the oldest barrier;
 *   requests still waiting before it were skipped by the server (PostgreSQL
 *   discards the rest of a batch after an error) and are reported failed.
 * - L7_MSG_PUSH: server data that answers no request (pub/sub messages,
 *   RESP3 pushes): neither paired nor counted unpaired.
 * - L7_MSG_LOST: not from a parser but from l7_proto_feed(): the response
 *   direction lost its framing, so an unknown number of responses went
 *   unseen (not for one_in_flight protocols); the requests waiting are forgotten rather than paired with the
 *   wrong responses. (A request-side loss keeps them: the requests before it
 *   still come first; the unseen ones' responses then count as unpaired or
 *   shift the pairs until the connection is quiet.)
 * - L7_MSG_HANDSHAKE: a message of a start-up or auth exchange, part of no
 *   request nor answer: neither paired nor counted, it only ends what the
 *   tracker dates as the message under way, so the first request after it
 *   (and its answer) is dated by its own first chunk, not the exchange's.
 */
enum l7_msg_kind {
	L7_MSG_REQUEST,
	L7_MSG_REQUEST_NOREPLY,
	L7_MSG_REQUEST_UNTIL_SYNC,
	L7_MSG_SYNC,
	L7_MSG_RESPONSE,
	L7_MSG_SYNC_REPLY,
	L7_MSG_PUSH,
	L7_MSG_LOST,
	L7_MSG_HANDSHAKE,
};

struct l7_msg {
	enum l7_msg_kind kind;
	/* requests */
	char op[L7_OP_LEN];
	char text[L7_TEXT_LEN]; /* literals stripped; "" when not available */
	/* responses */
	enum l7_status status;
	char code[L7_CODE_LEN]; /* the error's code when failed, else "" */
	/* both: the protocol's pairing id (Mongo requestID / responseTo) when has_id */
	bool has_id;
	uint64_t id;
};

typedef void (*l7_msg_fn)(void *ctx, const struct l7_msg *m);

/*
 * A message of this kind with every string empty, status OK and no id. The
 * one way a parser starts a message: `= { .kind = ... }` zeroes all of its
 * ~330 bytes, a `rep stos` that was an eighth of the agent's CPU under
 * pgbench (two messages a query); readers stop at each string's NUL.
 */
static inline void l7_msg_init(struct l7_msg *m, enum l7_msg_kind kind)
{
	m->kind = kind;
	m->op[0] = '\0';
	m->text[0] = '\0';
	m->status = L7_STATUS_OK;
	m->code[0] = '\0';
	m->has_id = false;
	m->id = 0;
}

/* Reports a start-up or auth message (L7_MSG_HANDSHAKE). */
static inline void l7_handshake(l7_msg_fn fn, void *ctx)
{
	struct l7_msg m;
	l7_msg_init(&m, L7_MSG_HANDSHAKE);
	fn(ctx, &m);
}

/* The drop points of one parser (both directions), summed per protocol by the tracker. */
struct l7_counters {
	uint64_t messages;    /* messages reported */
	uint64_t unparseable; /* malformed data: the framing was lost, resynchronising */
	uint64_t truncated;   /* a message only partly captured: framed past, its content cut */
	uint64_t lost;	      /* framing lost to uncaptured bytes (a header not captured) */
	uint64_t table_full;  /* a prepared statement or pending request dropped: table full */
	uint64_t unpaired;    /* responses with no request waiting (counted by the pairing) */
	/*
	 * Header blocks with fields not decoded (HTTP/2: naming HPACK entries
	 * lost with the table's past, a connection seen from its middle or a
	 * block not captured); their message is still counted.
	 */
	uint64_t undecoded;
};

/* The counters as data, for a metric table: name and offset in struct l7_counters. */
struct l7_counter_field {
	const char *name;
	size_t offset;
};
extern const struct l7_counter_field l7_counter_fields[];
extern const size_t l7_n_counter_fields;
void l7_counters_add(struct l7_counters *sum, const struct l7_counters *c);

enum l7_pair_mode { L7_PAIR_FIFO, L7_PAIR_BY_ID };

/*
 * Which of Coroot's metric families a protocol's requests are counted in
 * (the infix is the protocol's name).
 */
enum l7_family {
	/* container_<name>_queries_total{status} + _queries_duration_seconds_total, and the
	 * _inbound_ pair (PostgreSQL, MySQL, Redis, memcached, MongoDB, ClickHouse, Cassandra) */
	L7_FAMILY_QUERIES,
	/* container_<name>_requests_total ... the same shape (Kafka, ZooKeeper, Dubbo) */
	L7_FAMILY_REQUESTS,
	/*
	 * container_<name>_messages_total{status, method}: no histogram, no inbound
	 * (RabbitMQ, NATS). Each message is an L7_MSG_REQUEST_NOREPLY whose op is
	 * "produce" (the client publishes) or "consume" (the server delivers).
	 */
	L7_FAMILY_MESSAGES,
	/*
	 * HTTP's own families (container_http_requests_total...): HTTP/2 and
	 * gRPC, whose code is the status label ("2xx", "grpc:OK"). Not in the
	 * table: the tracker counts these with HTTP/1's.
	 */
	L7_FAMILY_HTTP,
};

/*
 * One protocol. detect_*: do these first bytes of a chunk (a message
 * boundary, not necessarily the connection's start) look like this
 * protocol's client / server data? They are cheap and reject garbage and the
 * other protocols; the tracker should pick a protocol from the client's
 * side (detect_request) and use detect_response to confirm or resync. The
 * state is state_size bytes the caller allocates; init() prepares it (0, or
 * a negative errno), free() releases what the parser allocated since (the
 * state itself stays the caller's). counters() gives the state's counters.
 */
struct l7_proto {
	const char *name; /* metric infix: container_<name>_queries_total */
	enum l7_family family;
	enum l7_pair_mode pair;
	int default_port; /* a hint only, never used to decide */
	/*
	 * The client waits for each answer before the next request (ClickHouse):
	 * after a loss of framing the next answer is still the waiting request's,
	 * so no L7_MSG_LOST.
	 */
	bool one_in_flight;
	size_t state_size;
	bool (*detect_request)(const uint8_t *data, size_t len);
	bool (*detect_response)(const uint8_t *data, size_t len);
	int (*init)(void *state);
	/* Called through l7_proto_feed only, which makes captured <= total (0 when !data). */
	void (*feed)(void *state, enum l7_dir dir, const uint8_t *data, size_t captured,
		     size_t total, l7_msg_fn fn, void *ctx);
	void (*free)(void *state); /* NULL: nothing allocated past the state */
	struct l7_counters *(*counters)(void *state);
	/*
	 * After a PostgreSQL SSLRequest answered 'S' or a MySQL SSL request: the
	 * raw bytes from now on are TLS records. The tracker stops feeding them
	 * and feeds the TLS library's plaintext to the same state, which goes on
	 * where the protocol does (the start-up, the rest of the auth exchange).
	 */
	bool (*tls_started)(void *state); /* NULL: the protocol never switches to TLS itself */
};

static inline void l7_proto_free(const struct l7_proto *p, void *state)
{
	if (p->free)
		p->free(state);
}

static inline bool l7_proto_tls_started(const struct l7_proto *p, void *state)
{
	return p->tls_started && p->tls_started(state);
}

extern const struct l7_proto *const l7_protos[];
extern const size_t l7_n_protos;
/*
 * Feeds one chunk through p->feed (what the tracker calls): when the
 * response direction lost its framing on the way, fn also gets an L7_MSG_LOST.
 */
void l7_proto_feed(const struct l7_proto *p, void *state, enum l7_dir dir, const uint8_t *data,
		   size_t captured, size_t total, l7_msg_fn fn, void *ctx);
const struct l7_proto *l7_proto_by_name(const char *name);

extern const struct l7_proto l7_proto_postgres, l7_proto_mysql, l7_proto_mongo, l7_proto_redis,
	l7_proto_memcached, l7_proto_clickhouse, l7_proto_kafka, l7_proto_zookeeper,
	l7_proto_nats, l7_proto_rabbitmq, l7_proto_cassandra;

/* Status labels as Coroot gives them. */
const char *l7_status_name(enum l7_status s);

/* out = a, then a space and b when b is not empty; cut to cap bytes with the NUL. */
void l7_join(char *out, size_t cap, const char *a, const char *b);

/* Copies a NUL-terminated, bounded, printable form of [p, p+n) into out (control bytes -> '?'). */
void l7_copy_printable(char *out, size_t cap, const void *p, size_t n);

#endif
