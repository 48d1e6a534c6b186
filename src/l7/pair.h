/*
 * Pairing a connection's requests with their responses, exactly: every
 * pipelined or batched request gets its own response, so its own latency and
 * status. In order (PostgreSQL, MySQL, Redis, Memcached: the server answers
 * in request order) or by id (MongoDB: responseTo names the requestID). The
 * message kinds that drive it are described in proto.h.
 */
#ifndef NODESCOPE_L7_PAIR_H
#define NODESCOPE_L7_PAIR_H

#include "proto.h"

/*
 * Requests waiting per connection. The queue grows as a client pipelines
 * deeper (redis-benchmark -P, a PostgreSQL batch) and starts small: a pool
 * of idle connections costs little.
 */
#define L7_PAIR_MAX 1024
#define L7_PAIR_FIRST 4

struct l7_pending {
	enum l7_msg_kind kind; /* REQUEST, REQUEST_UNTIL_SYNC or SYNC */
	bool has_id;
	uint64_t id;
	uint64_t ts_ns; /* when the request was seen (the caller's clock) */
	enum l7_status status; /* UNTIL_SYNC: folded from its replies so far */
	char code[L7_CODE_LEN];
	char op[L7_OP_LEN];
	char text[L7_TEXT_LEN];
};

/*
 * A completed request: its response's status and code. skipped: no reply of
 * its own, the server passed over it (an error earlier in its batch): status
 * is failed. req is the queued entry itself, valid during the call: fn must
 * not call into the same pairing.
 */
typedef void (*l7_pair_fn)(void *ctx, const struct l7_pending *req, enum l7_status status,
			   const char *code, bool skipped);

struct l7_pair {
	enum l7_pair_mode mode;
	struct l7_counters *cnt; /* where table_full and unpaired are counted */
	struct l7_pending *q; /* a ring of cap entries (NULL until the first request) */
	unsigned cap, head, n;
	/*
	 * In order: requests that found the queue full. Their place is kept
	 * (responses are taken in order) but nothing of them is: their
	 * responses are passed over.
	 */
	uint64_t ghosts;
};

void l7_pair_init(struct l7_pair *p, enum l7_pair_mode mode, struct l7_counters *cnt);
/*
 * A request-side message (REQUEST, REQUEST_UNTIL_SYNC, SYNC; others are
 * ignored). Returns 0 when queued, -1 when the queue was full (counted).
 */
int l7_pair_request(struct l7_pair *p, const struct l7_msg *m, uint64_t ts_ns);
/*
 * A response-side message (RESPONSE, SYNC_REPLY): calls fn for each request
 * it completes. L7_MSG_LOST (in order only) forgets the waiting requests.
 */
void l7_pair_response(struct l7_pair *p, const struct l7_msg *m, l7_pair_fn fn, void *ctx);
/* Requests waiting (not counting ghosts). */
static inline unsigned l7_pair_waiting(const struct l7_pair *p)
{
	return p->n;
}
/* Forget everything waiting (the connection switched to TLS, or was lost). */
void l7_pair_reset(struct l7_pair *p);
/* Frees the queue (the struct stays the caller's). */
void l7_pair_free(struct l7_pair *p);

#endif
