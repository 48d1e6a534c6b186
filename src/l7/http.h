/*
 * HTTP/1.0 and 1.1 parsing over captured socket data. Pure: no BPF, no I/O,
 * no globals. The agent sees each read/write syscall as a chunk of `total`
 * bytes of which the first `captured` are known; the stream machine below
 * finds message heads, skips bodies (Content-Length, chunked) so the next
 * message on a keep-alive connection is found, and resynchronises at the next
 * chunk boundary when it loses track (uncaptured bytes inside a chunked body,
 * garbage).
 */
#ifndef NODESCOPE_L7_HTTP_H
#define NODESCOPE_L7_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_METHOD_LEN 16
#define HTTP_PATH_LEN 256
#define HTTP_MAX_HEAD 8192 /* a head longer than this is malformed */

enum http_result {
	HTTP_INVALID = -1,
	HTTP_COMPLETE = 0, /* a whole head was parsed */
	HTTP_NEED_MORE = 1,
};

enum http_body_kind {
	HTTP_BODY_NONE,
	HTTP_BODY_LENGTH,
	HTTP_BODY_CHUNKED,
	HTTP_BODY_UNTIL_CLOSE, /* a response without length: ends with the connection */
};

struct http_body {
	enum http_body_kind kind;
	uint64_t remaining; /* LENGTH: body bytes left; CHUNKED: bytes left in this chunk */
	int chunk_state;    /* CHUNKED: internal state of the chunk-framing machine */
};

struct http_request {
	char method[HTTP_METHOD_LEN]; /* "GET" */
	char path[HTTP_PATH_LEN];     /* without the query string or fragment; cut if longer */
	uint8_t version_minor;	      /* 0 or 1 */
	struct http_body body;
};

struct http_response {
	int status;
	uint8_t version_minor;
	struct http_body body;
};

/* Parses a request head from buf[0..len). On HTTP_COMPLETE *head_len is its length. */
int http_parse_request(const char *buf, size_t len, struct http_request *req, size_t *head_len);
/*
 * Parses a response head. no_body: the request was HEAD (or the caller knows
 * there is no body). 1xx, 204 and 304 never have a body.
 */
int http_parse_response(const char *buf, size_t len, bool no_body, struct http_response *resp,
			size_t *head_len);

/*
 * Consumes up to len body bytes; data may be NULL when the bytes were not
 * captured. Returns the bytes consumed (the rest belongs to the next
 * message; *done is set when the body ended), or -1 when the framing cannot
 * be followed (uncaptured bytes inside chunk framing, bad chunk size).
 */
long http_body_consume(struct http_body *b, const char *data, size_t len, bool *done);

/* Protocol detection from the first bytes of a connection's data. */
bool http_looks_like_request(const char *buf, size_t len);
bool http_looks_like_response(const char *buf, size_t len);

/* One message head found by the stream machine. */
struct http_msg {
	bool is_request;
	struct http_request req;   /* is_request */
	struct http_response resp; /* !is_request */
};

/*
 * Called for each head. For responses the return value says whether it has a
 * body to skip: return 1 if the matching request was HEAD (no body), 2 if it
 * was CONNECT (a 2xx then makes the connection a tunnel: HTTP_S_UPGRADED),
 * else 0. Requests ignore the return value.
 */
typedef int (*http_msg_fn)(void *ctx, const struct http_msg *m);

struct http_stream {
	bool requests;	    /* parses requests (else responses) */
	enum { HTTP_S_HEAD, HTTP_S_BODY, HTTP_S_LOST, HTTP_S_UPGRADED } state;
	/*
	 * A head split across chunks, gathered: HTTP_MAX_HEAD bytes allocated
	 * while one is (NULL otherwise). Most heads come whole, and two streams
	 * a connection would hold 16 KiB for nothing.
	 */
	char *head;
	size_t head_len;
	struct http_body body;
	uint64_t errors;    /* malformed heads or lost framing (each a resync) */
	uint64_t messages;
};

void http_stream_init(struct http_stream *s, bool requests);
/* Releases a head being gathered; s may be initialised again or freed after. */
void http_stream_free(struct http_stream *s);
/*
 * Feeds one syscall's data: data holds the first `captured` of `total` bytes.
 * Calls fn for every head found. Never reads past data[captured).
 */
void http_stream_feed(struct http_stream *s, const char *data, size_t captured, size_t total,
		      http_msg_fn fn, void *ctx);

/* The status label as Coroot gives it: "1xx" ... "5xx", "unknown" outside 100-599. */
const char *http_status_class(int status);

#endif
