/*
 * The HTTP listener (libmicrohttpd) driven by the agent's epoll loop: no
 * thread of its own, and a timer armed only while a connection is open.
 */
#ifndef NODESCOPE_HTTP_SERVER_H
#define NODESCOPE_HTTP_SERVER_H

#include "loop/loop.h"
#include "util/strbuf.h"

struct http_server;
struct http_request;

/*
 * Fills body and content_type for a GET of path and returns the HTTP status;
 * or returns HTTP_LATER, keeps req and answers it once with
 * http_request_answer() from the loop (the connection waits, suspended,
 * while the loop goes on: how /metrics is served after sliced work).
 */
typedef int (*http_handler_fn)(void *ctx, const char *path, struct strbuf *body,
			       const char **content_type, struct http_request *req);
#define HTTP_LATER 0
/*
 * Or it calls http_request_sse(req, ...) and returns HTTP_SSE: the
 * response (of content_type) stays open and carries what http_sse_send
 * queues, until the client goes (server-sent events). Between messages its
 * connection waits suspended: no timer, no wakeup.
 */
#define HTTP_SSE 1
struct http_sse;
/* The stream's connection closed; the stream is freed after this returns. */
typedef void (*http_sse_closed_fn)(void *ctx, struct http_sse *st);
/* NULL without memory (the request then gets a 503). */
struct http_sse *http_request_sse(struct http_request *req, http_sse_closed_fn closed,
					void *ctx);
/*
 * Queues len bytes on the stream and wakes its connection; they leave at the
 * server's next run (http_server_run). -ENOBUFS when its reader has 1 MiB
 * unread (the message is dropped and counted), -EPIPE once it is closing.
 */
int http_sse_send(struct http_sse *st, const void *data, size_t len);

/* The ctx the handler was given (for the code that answers later). */
void *http_request_handler_ctx(const struct http_request *req);
/* The server answering req. */
struct http_server *http_request_server(const struct http_request *req);
/* Answers a request put off by HTTP_LATER; takes body's buffer. Not from inside a handler. */
void http_request_answer(struct http_request *req, int status, struct strbuf *body,
			 const char *content_type);

/*
 * What one client may hold, so no other local process (or pod, when the
 * agent listens on a pod IP) can keep a scraper out (the --http-* options).
 */
struct http_limits {
	unsigned max_per_client;  /* open connections per source address */
	unsigned max_connections; /* open connections in all */
	unsigned head_timeout_s;  /* to send each request head, from the accept or the last response */
	unsigned idle_timeout_s;  /* nothing moving either way: closed (libmicrohttpd's timeout) */
};

/*
 * listen is "HOST:PORT" or "[V6]:PORT". Registers the server's counters
 * (refused connections, late request heads) in r. Returns 0 or -errno
 * (message printed).
 */
struct metric_registry;
int http_server_start(struct loop *l, struct metric_registry *r, const char *listen,
		      const struct http_limits *limits, http_handler_fn fn, void *ctx,
		      struct http_server **out);
void http_server_stop(struct http_server *s);
/* Lets libmicrohttpd send what was queued (http_sse_send) outside its own fd's events. */
void http_server_run(struct http_server *s);
/* The port actually bound (useful with port 0). */
unsigned http_server_port(const struct http_server *s);

/* Parses "HOST:PORT" / "[V6]:PORT" into a socket address (pure). */
struct sockaddr_storage;
int http_parse_listen(const char *listen, struct sockaddr_storage *ss, unsigned *len);

#endif
