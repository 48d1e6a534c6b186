#define _GNU_SOURCE /* setns, pthread_attr_setsigmask_np */
#include "cloud_fetch.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "loop/loop.h"
#include "util/netns.h"

/* No metadata document comes near this; more is no metadata service. */
#define BODY_MAX (64 * 1024)

const char *const cloud_outcome_names[CLOUD_OUTCOMES] = {
	"answered", "unreachable", "bad_status", "malformed",
};

struct cloud_fetch {
	struct loop *loop;
	int fd; /* the loop's end */
	cloud_fetch_fn fn;
	void *ctx;
};

/* The thread's own: it frees it. */
struct job {
	const struct cloud_provider *p;
	char netns_path[64];
	int fd; /* the thread's end */
	struct timespec deadline;
	CURL *easy;
	char errbuf[CURL_ERROR_SIZE];
	size_t body_len;
	char body[BODY_MAX];
	struct cloud_answers answers;
	struct cloud_result result;
};

static size_t on_body(char *data, size_t size, size_t n, void *userp)
{
	struct job *j = userp;
	size_t len = size * n;

	if (len > sizeof(j->body) - j->body_len)
		return 0; /* curl stops with CURLE_WRITE_ERROR */
	memcpy(j->body + j->body_len, data, len);
	j->body_len += len;
	return len;
}

static long ms_left(const struct job *j)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (j->deadline.tv_sec - now.tv_sec) * 1000 +
	       (j->deadline.tv_nsec - now.tv_nsec) / 1000000;
}

static int fail(struct job *j, enum cloud_outcome o, const char *url, const char *what)
{
	j->result.outcome = o;
	snprintf(j->result.error, sizeof(j->result.error), "%.200s: %.200s", url, what);
	return -1;
}

/* One request: 0 when its labels are in (or it was optional and is skipped), -1 on failure. */
static int ask(struct job *j, const char *base, const struct cloud_request *rq)
{
	const struct cloud_provider *p = j->p;
	char url[512], token_header[CLOUD_TOKEN_MAX + 64], what[64];
	struct curl_slist *headers = NULL;
	long left = ms_left(j), status = 0;

	snprintf(url, sizeof(url), "%s%s", base, rq->path);
	if (left <= 0)
		return fail(j, CLOUD_UNREACHABLE, url, "no time left before the deadline");
	if (p->header)
		headers = curl_slist_append(headers, p->header);
	if (rq->header)
		headers = curl_slist_append(headers, rq->header);
	if (p->token_header && rq->fields[0].label != CLOUD_TOKEN) {
		snprintf(token_header, sizeof(token_header), p->token_header, j->answers.token);
		headers = curl_slist_append(headers, token_header);
	}
	CURL *e = j->easy;
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, rq->method); /* NULL: GET */
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, left);
	j->body_len = 0;
	j->errbuf[0] = '\0';
	CURLcode rc = curl_easy_perform(e);
	curl_slist_free_all(headers);
	if (rc == CURLE_WRITE_ERROR)
		return fail(j, CLOUD_MALFORMED, url, "an answer larger than 64 KiB");
	if (rc != CURLE_OK)
		return fail(j, CLOUD_UNREACHABLE, url,
			    j->errbuf[0] ? j->errbuf : curl_easy_strerror(rc));
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		if (rq->optional)
			return 0;
		snprintf(what, sizeof(what), "HTTP status %ld", status);
		return fail(j, CLOUD_BAD_STATUS, url, what);
	}
	/* An optional answer that cannot be read leaves its labels as they were: "". */
	struct cloud_answers saved;
	if (rq->optional)
		saved = j->answers;
	if (cloud_parse(rq, j->body, j->body_len, &j->answers)) {
		if (!rq->optional)
			return fail(j, CLOUD_MALFORMED, url, "an answer that cannot be read");
		j->answers = saved;
	}
	return 0;
}

/* Every request of the row from one base: 0, or -1 with the result saying why. */
static int ask_all(struct job *j, const char *base)
{
	for (size_t i = 0; i < CLOUD_MAX_REQUESTS && j->p->requests[i].path; i++)
		if (ask(j, base, &j->p->requests[i]))
			return -1;
	return 0;
}

static void enter_netns(struct job *j)
{
	if (netns_is_own(j->netns_path))
		return;
	int fd = open(j->netns_path, O_RDONLY | O_CLOEXEC);
	/* This thread's namespace only: the agent's other threads stay where they are. */
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		snprintf(j->result.netns, sizeof(j->result.netns), "cannot enter %s (%s)",
			 j->netns_path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void *fetch_main(void *arg)
{
	struct job *j = arg;

	enter_netns(j);
	j->easy = curl_easy_init();
	if (!j->easy) {
		fail(j, CLOUD_UNREACHABLE, j->p->bases[0], "no curl handle");
	} else {
		CURL *e = j->easy;
		curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(e, CURLOPT_NOPROXY, "*"); /* a proxy cannot reach a link-local address */
		curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
		curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(e, CURLOPT_WRITEDATA, j);
		curl_easy_setopt(e, CURLOPT_ERRORBUFFER, j->errbuf);
		for (int b = 0; b < 2 && j->p->bases[b]; b++) {
			j->answers = (struct cloud_answers){ 0 };
			j->result.outcome = CLOUD_ANSWERED;
			if (!ask_all(j, j->p->bases[b]))
				break;
		}
		curl_easy_cleanup(e);
	}
	if (j->result.outcome == CLOUD_ANSWERED) {
		j->result.cloud = j->answers.cloud;
		cloud_derive(j->p, &j->result.cloud);
	}
	/* The loop's end may be closed already (the agent is stopping): then nobody wants it. */
	send(j->fd, &j->result, sizeof(j->result), MSG_NOSIGNAL);
	close(j->fd);
	free(j);
	return NULL;
}

static void on_result(void *ctx, uint32_t events)
{
	struct cloud_fetch *f = ctx;
	struct cloud_result r;

	ssize_t n = recv(f->fd, &r, sizeof(r), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n != (ssize_t)sizeof(r)) {
		r = (struct cloud_result){ .outcome = CLOUD_UNREACHABLE };
		snprintf(r.error, sizeof(r.error), "the metadata thread ended without an answer");
	}
	loop_del_fd(f->loop, f->fd);
	close(f->fd);
	f->fd = -1;
	f->fn(f->ctx, &r);
}

int cloud_fetch_start(struct loop *l, const struct cloud_provider *p, const char *netns_path,
		      unsigned deadline_ms, cloud_fetch_fn fn, void *ctx, struct cloud_fetch **out)
{
	int fds[2], err;

	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return -EIO;
	struct cloud_fetch *f = calloc(1, sizeof(*f));
	struct job *j = calloc(1, sizeof(*j));
	if (!f || !j) {
		free(f);
		free(j);
		return -ENOMEM;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds)) {
		err = -errno;
		free(f);
		free(j);
		return err;
	}
	*f = (struct cloud_fetch){ .loop = l, .fd = fds[0], .fn = fn, .ctx = ctx };
	j->p = p;
	j->fd = fds[1];
	snprintf(j->netns_path, sizeof(j->netns_path), "%s", netns_path);
	clock_gettime(CLOCK_MONOTONIC, &j->deadline);
	j->deadline.tv_sec += deadline_ms / 1000;
	j->deadline.tv_nsec += (long)(deadline_ms % 1000) * 1000000;
	if (j->deadline.tv_nsec >= 1000000000) {
		j->deadline.tv_sec++;
		j->deadline.tv_nsec -= 1000000000;
	}
	if ((err = loop_add_fd(l, f->fd, EPOLLIN, on_result, f)))
		goto fail;

	pthread_attr_t attr;
	pthread_t t;
	sigset_t all;
	if ((err = -pthread_attr_init(&attr))) {
		loop_del_fd(l, f->fd);
		goto fail;
	}
	/* Detached, every signal blocked (the loop's signalfd takes them). */
	sigfillset(&all);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setsigmask_np(&attr, &all);
	err = -pthread_create(&t, &attr, fetch_main, j);
	pthread_attr_destroy(&attr);
	if (err) {
		loop_del_fd(l, f->fd);
		goto fail;
	}
	*out = f;
	return 0;
fail:
	close(fds[0]);
	close(fds[1]);
	free(f);
	free(j);
	return err;
}

void cloud_fetch_free(struct cloud_fetch *f)
{
	if (!f)
		return;
	if (f->fd >= 0) {
		loop_del_fd(f->loop, f->fd);
		close(f->fd);
	}
	free(f);
}
