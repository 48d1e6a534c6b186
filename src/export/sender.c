#include "sender.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "loop/loop.h"
#include "util/log.h"

struct rw_sender {
	struct rw_sender_opts o;
	CURLM *multi;
	CURL *easy;
	struct curl_slist *headers;
	struct loop_timer *timer;
	bool busy;
	char errbuf[CURL_ERROR_SIZE];
	struct rw_socket *sockets; /* in the loop now */
};

/* One of curl's sockets in the loop (curl's per-socket pointer). */
struct rw_socket {
	struct rw_sender *s;
	curl_socket_t fd;
	struct rw_socket *next;
};

static void socket_forget(struct rw_sender *s, struct rw_socket *sock)
{
	for (struct rw_socket **p = &s->sockets; *p; p = &(*p)->next) {
		if (*p == sock) {
			*p = sock->next;
			break;
		}
	}
	loop_del_fd(s->o.loop, sock->fd);
	free(sock);
}

static void check_done(struct rw_sender *s)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(s->multi, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		CURLcode rc = msg->data.result;
		long status = 0;
		if (rc == CURLE_OK)
			curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &status);
		char err[CURL_ERROR_SIZE];
		snprintf(err, sizeof(err), "%s", s->errbuf[0] ? s->errbuf : curl_easy_strerror(rc));
		curl_multi_remove_handle(s->multi, msg->easy_handle);
		s->busy = false;
		s->o.done(s->o.ctx, status, rc == CURLE_OK ? NULL : err);
	}
}

static void on_fd(void *ctx, uint32_t events)
{
	struct rw_socket *sock = ctx;
	struct rw_sender *s = sock->s;
	int flags = 0, running;

	if (events & EPOLLIN)
		flags |= CURL_CSELECT_IN;
	if (events & EPOLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (events & (EPOLLERR | EPOLLHUP))
		flags |= CURL_CSELECT_ERR;
	/* May free sock (CURL_POLL_REMOVE): nothing of it is used after. */
	curl_multi_socket_action(s->multi, sock->fd, flags, &running);
	check_done(s);
}

static void on_timer(void *ctx)
{
	struct rw_sender *s = ctx;
	int running;

	curl_multi_socket_action(s->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_done(s);
}

static int socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct rw_sender *s = userp;
	struct rw_socket *sock = socketp;

	if (what == CURL_POLL_REMOVE) {
		if (sock) {
			curl_multi_assign(s->multi, fd, NULL);
			socket_forget(s, sock);
		}
		return 0;
	}
	uint32_t events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	if (sock)
		return loop_mod_fd(s->o.loop, fd, events) ? -1 : 0;
	if (!(sock = malloc(sizeof(*sock))))
		return -1;
	*sock = (struct rw_socket){ s, fd, s->sockets };
	if (loop_add_fd(s->o.loop, fd, events, on_fd, sock)) {
		free(sock);
		return -1;
	}
	s->sockets = sock;
	curl_multi_assign(s->multi, fd, sock);
	return 0;
}

static int timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct rw_sender *s = userp;

	if (timeout_ms < 0)
		return loop_timer_disarm(s->timer) ? -1 : 0;
	return loop_timer_arm(s->timer, (uint64_t)timeout_ms * 1000000ull) ? -1 : 0;
}

/* The answer's body is not needed (an error's text would go to a log nobody reads). */
static size_t discard(char *data, size_t size, size_t n, void *ctx)
{
	return size * n;
}

static int header(struct rw_sender *s, const char *h)
{
	struct curl_slist *l = curl_slist_append(s->headers, h);
	if (!l)
		return -ENOMEM;
	s->headers = l;
	return 0;
}

int rw_sender_new(const struct rw_sender_opts *o, struct rw_sender **out)
{
	static bool curl_ready;
	if (!curl_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
			log_error("remote write: libcurl cannot start");
			return -EINVAL;
		}
		curl_ready = true;
	}
	struct rw_sender *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *o;
	int err = loop_timer_new(o->loop, on_timer, s, &s->timer);
	if (err) {
		free(s);
		return err;
	}
	s->multi = curl_multi_init();
	s->easy = curl_easy_init();
	char key[4096];
	snprintf(key, sizeof(key), "X-Api-Key: %s", o->api_key ? o->api_key : "");
	if (!s->multi || !s->easy || header(s, "Content-Encoding: snappy") ||
	    header(s, "Content-Type: application/x-protobuf") ||
	    header(s, "X-Prometheus-Remote-Write-Version: 0.1.0") ||
	    header(s, "Expect:") || /* no 100-continue round trip before large bodies */
	    (o->api_key && header(s, key))) {
		rw_sender_free(s);
		return -ENOMEM;
	}
	curl_multi_setopt(s->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
	curl_multi_setopt(s->multi, CURLMOPT_SOCKETDATA, s);
	curl_multi_setopt(s->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	curl_multi_setopt(s->multi, CURLMOPT_TIMERDATA, s);
	CURL *e = s->easy;
	CURLcode rc = curl_easy_setopt(e, CURLOPT_URL, o->url);
	if (rc == CURLE_OK && o->ca_file)
		rc = curl_easy_setopt(e, CURLOPT_CAINFO, o->ca_file);
	if (rc != CURLE_OK) {
		log_error("remote write: %s", curl_easy_strerror(rc));
		rw_sender_free(s);
		return -EINVAL;
	}
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, s->headers);
	curl_easy_setopt(e, CURLOPT_POST, 1L);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT, (long)o->timeout_s);
	curl_easy_setopt(e, CURLOPT_USERAGENT, o->user_agent);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, s->errbuf);
	/* Only the URL's own scheme: a redirect is not followed either. */
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	if (o->insecure) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	*out = s;
	return 0;
}

void rw_sender_free(struct rw_sender *s)
{
	if (!s)
		return;
	if (s->busy)
		curl_multi_remove_handle(s->multi, s->easy);
	if (s->multi)
		curl_multi_cleanup(s->multi); /* closes the connections it keeps */
	if (s->easy)
		curl_easy_cleanup(s->easy);
	curl_slist_free_all(s->headers);
	while (s->sockets) /* what curl did not say it was done with */
		socket_forget(s, s->sockets);
	free(s);
}

int rw_sender_post(struct rw_sender *s, const void *body, size_t len)
{
	if (s->busy)
		return -EBUSY;
	s->errbuf[0] = '\0';
	curl_easy_setopt(s->easy, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(s->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	if (curl_multi_add_handle(s->multi, s->easy) != CURLM_OK)
		return -ENOMEM;
	s->busy = true;
	return 0;
}

bool rw_sender_busy(const struct rw_sender *s)
{
	return s->busy;
}
