#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gzip.h"
#include "metrics/registry.h"
#include "util/clock.h"
#include "util/log.h"

/*
 * The limits (struct http_limits) hold every client to its share: a
 * connection over one is closed at once, one whose request head is late is
 * cut; each refusal and cut is counted.
 */
/* One open connection (libmicrohttpd's socket context). */
struct http_conn {
	struct http_conn *prev, *next;
	struct sockaddr_storage addr;
	int fd;
	uint64_t head_deadline_ns; /* 0: a request is being answered, no head awaited */
};

/* An open stream: what http_sse_send queued and the reader has not taken. */
struct http_sse {
	struct http_server *server;
	struct MHD_Connection *conn;
	struct http_sse *prev, *next; /* the server's streams */
	struct strbuf buf;
	size_t off;
	bool suspended; /* nothing to send: waiting for http_sse_send */
	bool closing;	/* the server stops: the reader ends the response */
	http_sse_closed_fn closed;
	void *ctx;
};

struct http_request {
	struct http_server *server;
	struct http_sse *stream; /* http_request_sse made one */
	struct MHD_Connection *conn;
	struct http_request *prev, *next; /* the server's suspended requests */
	bool answered;
	bool gzip; /* the client accepts a gzip body */
	int status;
	struct strbuf body;
	const char *type;
};

struct http_server {
	struct loop *loop;
	struct MHD_Daemon *d;
	struct loop_timer *timer;
	struct http_request *suspended; /* answered at the latest when the server stops */
	struct http_sse *streams;	/* ended when the server stops */
	http_handler_fn fn;
	void *ctx;
	unsigned port;
	struct http_limits limits;
	struct http_conn *conns;
	unsigned n_conns;
	struct metric *m_refused;
	uint64_t head_timeouts;
	uint64_t stream_drops;
};

#define T struct http_server
static const struct metric_def http_metrics[] = {
	{ "nodescope_http_connections_refused_total",
	  "HTTP connections closed at once because their source address already had "
	  "--http-max-per-client open (per_client) or the server --http-max-connections "
	  "(total).",
	  METRIC_COUNTER, METRIC_LABELS("reason"), METRIC_HANDLE(T, m_refused) },
	{ "nodescope_http_head_timeouts_total",
	  "HTTP connections cut because a request head took longer than --http-head-timeout "
	  "to arrive.",
	  METRIC_COUNTER, METRIC_VALUE(T, head_timeouts) },
	{ "nodescope_http_stream_messages_dropped_total",
	  "Messages not queued on a server-sent events stream (the web page's updates) because "
	  "its reader had not taken the 1 MiB already queued.",
	  METRIC_COUNTER, METRIC_VALUE(T, stream_drops) },
};
#undef T

static bool same_address(const struct sockaddr_storage *a, const struct sockaddr *b)
{
	if (a->ss_family != b->sa_family)
		return false;
	if (b->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (b->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
	return false;
}

/* Called before libmicrohttpd takes a connection: the limits. */
static enum MHD_Result http_accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct http_server *s = cls;
	const char *reason = NULL;
	unsigned same = 0;

	for (struct http_conn *c = s->conns; c; c = c->next)
		same += same_address(&c->addr, addr);
	if (same >= s->limits.max_per_client)
		reason = "per_client";
	else if (s->n_conns >= s->limits.max_connections)
		reason = "total";
	if (!reason)
		return MHD_YES;
	metric_add(s->m_refused, &reason, 1);
	return MHD_NO;
}

/* libmicrohttpd's own messages, in the agent's log format. */
static void http_log(void *cls, const char *fmt, va_list ap)
{
	log_vmsg(LOG_LEVEL_WARN, "libmicrohttpd", fmt, ap);
}

/* When a request head awaited from now is late. */
static uint64_t head_deadline(const struct http_server *s)
{
	return clock_mono_ns() + s->limits.head_timeout_s * 1000000000ull;
}

static void http_conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
			     enum MHD_ConnectionNotificationCode code)
{
	struct http_server *s = cls;
	struct http_conn *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (!c)
			return;
		*(c->prev ? &c->prev->next : &s->conns) = c->next;
		if (c->next)
			c->next->prev = c->prev;
		s->n_conns--;
		free(c);
		*socket_context = NULL;
		return;
	}
	/* Without its record the connection would escape the limits: refuse it. */
	const union MHD_ConnectionInfo *fd =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *addr =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	c = calloc(1, sizeof(*c));
	if (!c || !fd || !addr) {
		free(c);
		if (fd)
			shutdown(fd->connect_fd, SHUT_RDWR);
		return;
	}
	c->fd = fd->connect_fd;
	memcpy(&c->addr, addr->client_addr,
	       addr->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							 : sizeof(struct sockaddr_in));
	c->head_deadline_ns = head_deadline(s);
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	s->n_conns++;
	*socket_context = c;
}

static struct http_conn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i ? i->socket_context : NULL;
}

/*
 * Cuts the connections whose request head is late (shutdown: libmicrohttpd
 * sees the end of the stream and closes it itself); returns the next
 * deadline, 0 if none.
 */
static uint64_t http_cut_late(struct http_server *s, uint64_t now)
{
	uint64_t next = 0;

	for (struct http_conn *c = s->conns; c; c = c->next) {
		if (!c->head_deadline_ns)
			continue;
		if (c->head_deadline_ns <= now) {
			shutdown(c->fd, SHUT_RDWR);
			c->head_deadline_ns = 0;
			s->head_timeouts++;
		} else if (!next || c->head_deadline_ns < next) {
			next = c->head_deadline_ns;
		}
	}
	return next;
}

int http_parse_listen(const char *listen, struct sockaddr_storage *ss, unsigned *len)
{
	char host[128];
	const char *port_s;

	memset(ss, 0, sizeof(*ss));
	if (listen[0] == '[') {
		const char *end = strchr(listen, ']');
		if (!end || end[1] != ':' || (size_t)(end - listen - 1) >= sizeof(host))
			return -EINVAL;
		memcpy(host, listen + 1, end - listen - 1);
		host[end - listen - 1] = '\0';
		port_s = end + 2;
	} else {
		const char *colon = strrchr(listen, ':');
		if (!colon || (size_t)(colon - listen) >= sizeof(host))
			return -EINVAL;
		memcpy(host, listen, colon - listen);
		host[colon - listen] = '\0';
		port_s = colon + 1;
	}
	char *end;
	unsigned long port = strtoul(port_s, &end, 10);
	if (*port_s < '0' || *port_s > '9' || *end || port > 65535) /* no sign or blank */
		return -EINVAL;

	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host[0] ? host : "0.0.0.0", &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		*len = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		*len = sizeof(*sin6);
		return 0;
	}
	return -EINVAL;
}

/*
 * On every response: the page's scripts and styles come from this server only,
 * as separate resources (nothing inline runs), and nothing is framed or sniffed.
 */
static void add_safety_headers(struct MHD_Response *r)
{
	MHD_add_response_header(r, "Content-Security-Policy",
				"default-src 'none'; script-src 'self'; style-src 'self'; "
				"img-src 'self'; connect-src 'self'; base-uri 'none'; "
				"form-action 'none'; frame-ancestors 'none'");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
}

/*
 * Queues the response: status, body (its buffer handed over) and content
 * type; the body gzipped when the client accepts it (gzip: Accept-Encoding).
 */
static enum MHD_Result http_respond(struct MHD_Connection *conn, int status, struct strbuf body,
				    const char *type, bool gzip)
{
	if (gzip && !body.oom && body.len) {
		struct strbuf z = STRBUF_INIT;
		if (http_gzip(body.buf, body.len, &z) == 0) {
			strbuf_free(&body);
			body = z;
		} else {
			strbuf_free(&z);
			gzip = false; /* out of memory: sent plain, as the client also accepts */
		}
	} else {
		gzip = false;
	}
	if (body.oom) {
		strbuf_free(&body);
		return MHD_NO;
	}
	/* The response takes ownership of the buffer. */
	struct MHD_Response *r =
		body.buf ? MHD_create_response_from_buffer(body.len, body.buf, MHD_RESPMEM_MUST_FREE)
			 : MHD_create_response_from_buffer(0, (char *)"", MHD_RESPMEM_PERSISTENT);
	if (!r) {
		strbuf_free(&body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	add_safety_headers(r);
	if (gzip)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* What a stream may have queued and unread; past it a message is dropped (counted). */
#define HTTP_SSE_MAX_QUEUED (1u << 20)

/* libmicrohttpd asks for the stream's next bytes: what is queued, or it waits (suspended). */
static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct http_sse *st = cls;

	if (st->off < st->buf.len) {
		size_t n = st->buf.len - st->off < max ? st->buf.len - st->off : max;
		memcpy(buf, st->buf.buf + st->off, n);
		st->off += n;
		if (st->off == st->buf.len) {
			strbuf_reset(&st->buf);
			st->off = 0;
		}
		return (ssize_t)n;
	}
	if (st->closing)
		return MHD_CONTENT_READER_END_OF_STREAM;
	/* Nothing to send: no busy loop, no timer; http_sse_send resumes it. */
	MHD_suspend_connection(st->conn);
	st->suspended = true;
	return 0;
}

/* The stream's connection is gone (the client left, or the server stops). */
static void sse_free(void *cls)
{
	struct http_sse *st = cls;
	struct http_server *s = st->server;

	*(st->prev ? &st->prev->next : &s->streams) = st->next;
	if (st->next)
		st->next->prev = st->prev;
	if (st->closed)
		st->closed(st->ctx, st);
	strbuf_free(&st->buf);
	free(st);
}

struct http_sse *http_request_sse(struct http_request *req, http_sse_closed_fn closed,
					void *ctx)
{
	struct http_sse *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->server = req->server;
	st->conn = req->conn;
	st->buf = (struct strbuf)STRBUF_INIT;
	st->closed = closed;
	st->ctx = ctx;
	req->stream = st;
	return st;
}

int http_sse_send(struct http_sse *st, const void *data, size_t len)
{
	if (st->closing)
		return -EPIPE;
	if (st->buf.len - st->off + len > HTTP_SSE_MAX_QUEUED) {
		st->server->stream_drops++;
		return -ENOBUFS;
	}
	strbuf_append(&st->buf, data, len);
	if (st->buf.oom) {
		strbuf_reset(&st->buf);
		st->off = 0;
		st->server->stream_drops++;
		return -ENOMEM;
	}
	if (st->suspended) {
		st->suspended = false;
		MHD_resume_connection(st->conn);
	}
	return 0;
}

/* Starts the stream the handler made: its response ends only when the connection does. */
static enum MHD_Result sse_respond(struct MHD_Connection *conn, struct http_sse *st,
				      const char *type)
{
	struct http_server *s = st->server;
	struct MHD_Response *r =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, sse_read, st, sse_free);
	if (!r) {
		if (st->closed)
			st->closed(st->ctx, st);
		strbuf_free(&st->buf);
		free(st);
		return MHD_NO;
	}
	st->next = s->streams;
	if (s->streams)
		s->streams->prev = st;
	s->streams = st;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	add_safety_headers(r);
	enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r); /* sse_free runs when the connection is done with it */
	return ret;
}

static enum MHD_Result http_answer(void *cls, struct MHD_Connection *conn, const char *url,
				   const char *method, const char *version,
				   const char *upload_data, size_t *upload_size, void **req_cls)
{
	struct http_server *s = cls;
	struct http_request *req = *req_cls;
	struct strbuf body = STRBUF_INIT;
	const char *type = "text/plain; charset=utf-8";
	int status;

	if (req) { /* resumed: the answer is in (or the server is stopping) */
		if (!req->answered)
			return MHD_NO;
		struct strbuf b = req->body;
		req->body = (struct strbuf)STRBUF_INIT;
		return http_respond(conn, req->status, b, req->type, req->gzip);
	}
	/* The head is in: no deadline while it is answered. */
	struct http_conn *c = conn_of(conn);
	if (c)
		c->head_deadline_ns = 0;
	bool gzip = http_accepts_gzip(
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING));
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
		strbuf_puts(&body, "only GET and HEAD\n");
		return http_respond(conn, status, body, type, false);
	}
	req = calloc(1, sizeof(*req));
	if (!req)
		return MHD_NO;
	req->server = s;
	req->conn = conn;
	req->gzip = gzip;
	status = s->fn(s->ctx, url, &body, &type, req);
	if (status == HTTP_SSE && req->stream) {
		struct http_sse *st = req->stream;
		free(req);
		strbuf_free(&body);
		return sse_respond(conn, st, type);
	}
	if (status == HTTP_SSE) { /* the handler could not make one */
		status = 503;
		strbuf_puts(&body, "out of memory\n");
	}
	if (status != HTTP_LATER) {
		free(req);
		return http_respond(conn, status, body, type, gzip);
	}
	*req_cls = req; /* freed when the request completes (http_completed) */
	req->next = s->suspended;
	if (s->suspended)
		s->suspended->prev = req;
	s->suspended = req;
	MHD_suspend_connection(conn);
	return MHD_YES;
}

static void http_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			   enum MHD_RequestTerminationCode toe)
{
	struct http_server *s = cls;
	struct http_request *req = *req_cls;
	struct http_conn *c = conn_of(conn);

	/* Kept alive: the next head has its time from now. */
	if (c && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		c->head_deadline_ns = head_deadline(s);
	if (!req)
		return;
	strbuf_free(&req->body);
	free(req);
	*req_cls = NULL;
}

static void http_reschedule(struct http_server *s);

void *http_request_handler_ctx(const struct http_request *req)
{
	return req->server->ctx;
}

struct http_server *http_request_server(const struct http_request *req)
{
	return req->server;
}

/* Gives req its answer and resumes its connection (MHD sends it at its next run). */
static void request_resume(struct http_request *req, int status, struct strbuf *body,
			   const char *type)
{
	struct http_server *s = req->server;

	*(req->prev ? &req->prev->next : &s->suspended) = req->next;
	if (req->next)
		req->next->prev = req->prev;
	req->prev = req->next = NULL;
	req->status = status;
	req->body = *body;
	*body = (struct strbuf)STRBUF_INIT;
	req->type = type;
	req->answered = true;
	MHD_resume_connection(req->conn);
}

void http_request_answer(struct http_request *req, int status, struct strbuf *body,
			 const char *type)
{
	struct http_server *s = req->server;

	request_resume(req, status, body, type);
	MHD_run(s->d);
	http_reschedule(s);
}

/*
 * After every run, arm the timer only if libmicrohttpd has a deadline or a
 * connection still owes its request head.
 */
static void http_reschedule(struct http_server *s)
{
	MHD_UNSIGNED_LONG_LONG ms;
	uint64_t now = clock_mono_ns();
	uint64_t next = http_cut_late(s, now);
	uint64_t wait = next ? next - now : 0;

	if (MHD_get_timeout(s->d, &ms) == MHD_YES && (!next || ms * 1000000ull < wait)) {
		wait = ms * 1000000ull;
		next = 1;
	}
	if (next)
		loop_timer_arm(s->timer, wait);
	else
		loop_timer_disarm(s->timer);
}

static void http_on_fd(void *ctx, uint32_t events)
{
	struct http_server *s = ctx;
	MHD_run(s->d);
	http_reschedule(s);
}

void http_server_run(struct http_server *s)
{
	http_on_fd(s, 0);
}

static void http_on_timer(void *ctx)
{
	http_on_fd(ctx, 0);
}

int http_server_start(struct loop *l, struct metric_registry *r, const char *listen,
		      const struct http_limits *limits, http_handler_fn fn, void *ctx,
		      struct http_server **out)
{
	struct sockaddr_storage ss;
	unsigned len;

	if (http_parse_listen(listen, &ss, &len)) {
		log_error("bad --listen address '%s' (want HOST:PORT or [V6]:PORT)", listen);
		return -EINVAL;
	}
	struct http_server *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->loop = l;
	s->limits = *limits;
	s->fn = fn;
	s->ctx = ctx;
	if (metric_register_defs(r, http_metrics, METRIC_DEFS_COUNT(http_metrics), s, 0)) {
		free(s);
		return -EINVAL;
	}
	unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* libmicrohttpd's own cap above ours, so ours (counted) is the one that refuses. */
	/* The logger first: libmicrohttpd complains (through its own logger) otherwise. */
	s->d = MHD_start_daemon(flags, 0, http_accept_policy, s, http_answer, s,
				MHD_OPTION_EXTERNAL_LOGGER, http_log, s,
				MHD_OPTION_SOCK_ADDR, &ss, MHD_OPTION_CONNECTION_TIMEOUT,
				limits->idle_timeout_s, MHD_OPTION_CONNECTION_LIMIT,
				limits->max_connections + 64u, MHD_OPTION_NOTIFY_COMPLETED,
				http_completed, s, MHD_OPTION_NOTIFY_CONNECTION, http_conn_notify, s,
				MHD_OPTION_END);
	if (!s->d) {
		int err = errno ? errno : EADDRINUSE;
		log_error("cannot listen on %s: %s", listen, strerror(err));
		free(s);
		return -err;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_EPOLL_FD);
	const union MHD_DaemonInfo *pinfo = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = pinfo ? pinfo->port : 0;
	int err = loop_timer_new(l, http_on_timer, s, &s->timer);
	if (!err)
		err = loop_add_fd(l, info->epoll_fd, EPOLLIN, http_on_fd, s);
	if (err) {
		MHD_stop_daemon(s->d);
		free(s);
		return err;
	}
	*out = s;
	return 0;
}

void http_server_stop(struct http_server *s)
{
	if (!s)
		return;
	/* libmicrohttpd refuses to stop with a connection suspended (it aborts). */
	while (s->suspended) {
		struct strbuf b = STRBUF_INIT;
		strbuf_puts(&b, "the agent is stopping\n");
		request_resume(s->suspended, 503, &b, "text/plain; charset=utf-8");
	}
	/* Each stream's reader ends its response; nobody is told of its close any more. */
	for (struct http_sse *st = s->streams; st; st = st->next) {
		st->closing = true;
		st->closed = NULL;
		if (st->suspended) {
			st->suspended = false;
			MHD_resume_connection(st->conn);
		}
	}
	if (s->streams)
		MHD_run(s->d);
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_EPOLL_FD);
	if (info)
		loop_del_fd(s->loop, info->epoll_fd);
	MHD_stop_daemon(s->d);
	free(s);
}

unsigned http_server_port(const struct http_server *s)
{
	return s->port;
}
