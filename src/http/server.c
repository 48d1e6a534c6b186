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
#include "util/log.h"

struct http_request {
	struct http_server *server;
	struct MHD_Connection *conn;
	struct http_request *prev, *next; /* the server's suspended requests */
	bool answered;
	int status;
	struct strbuf body;
	const char *type;
};

struct http_server {
	struct loop *loop;
	struct MHD_Daemon *d;
	struct loop_timer *timer;
	struct http_request *suspended; /* answered at the latest when the server stops */
	http_handler_fn fn;
	void *ctx;
	unsigned port;
};

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

/* Queues the response: status, body (its buffer handed over) and content type. */
static enum MHD_Result http_respond(struct MHD_Connection *conn, int status, struct strbuf body,
				    const char *type)
{
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
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
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
		return http_respond(conn, req->status, b, req->type);
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
		strbuf_puts(&body, "only GET and HEAD\n");
		return http_respond(conn, status, body, type);
	}
	req = calloc(1, sizeof(*req));
	if (!req)
		return MHD_NO;
	req->server = s;
	req->conn = conn;
	status = s->fn(s->ctx, url, &body, &type, req);
	if (status != HTTP_LATER) {
		free(req);
		return http_respond(conn, status, body, type);
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
	struct http_request *req = *req_cls;
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

/* After every run, arm the timer only if libmicrohttpd has a deadline. */
static void http_reschedule(struct http_server *s)
{
	MHD_UNSIGNED_LONG_LONG ms;
	if (MHD_get_timeout(s->d, &ms) == MHD_YES)
		loop_timer_arm(s->timer, ms * 1000000ull);
	else
		loop_timer_disarm(s->timer);
}

static void http_on_fd(void *ctx, uint32_t events)
{
	struct http_server *s = ctx;
	MHD_run(s->d);
	http_reschedule(s);
}

static void http_on_timer(void *ctx)
{
	http_on_fd(ctx, 0);
}

int http_server_start(struct loop *l, const char *listen, http_handler_fn fn, void *ctx,
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
	s->fn = fn;
	s->ctx = ctx;
	unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	s->d = MHD_start_daemon(flags, 0, NULL, NULL, http_answer, s, MHD_OPTION_SOCK_ADDR, &ss,
				MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_CONNECTION_LIMIT,
				64u, MHD_OPTION_NOTIFY_COMPLETED, http_completed, NULL,
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
