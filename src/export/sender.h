/*
 * One HTTP POST at a time to the remote-write URL, with libcurl's multi
 * interface driven by the agent's epoll loop: curl's sockets are loop fds
 * and its timeout one loop timer, armed only while a request is under way.
 * No thread and no blocking call: name resolution is curl's own resolver
 * thread, connect, TLS and the transfer are non-blocking, so a receiver
 * that is slow or gone never holds up the ring buffers.
 */
#ifndef NODESCOPE_EXPORT_SENDER_H
#define NODESCOPE_EXPORT_SENDER_H

#include <stdbool.h>
#include <stddef.h>

struct loop;
struct rw_sender;

/*
 * A request ended: status is the HTTP status (0 when none came: err says
 * why, curl's words). Called from the loop, never from inside post.
 */
typedef void (*rw_sender_done_fn)(void *ctx, long status, const char *err);

struct rw_sender_opts {
	struct loop *loop;
	const char *url;
	const char *api_key;	/* sent as X-Api-Key, as Coroot's agent does (NULL: none) */
	const char *ca_file;	/* trusted CAs besides the system's (NULL: the system's) */
	bool insecure;		/* do not verify the server's certificate */
	unsigned timeout_s;	/* a request's whole time */
	const char *user_agent;
	rw_sender_done_fn done;
	void *ctx;
};

/* Returns 0, or -errno / -EINVAL (curl could not be set up; a message says why). */
int rw_sender_new(const struct rw_sender_opts *o, struct rw_sender **out);
void rw_sender_free(struct rw_sender *s);
/* Starts a POST of body (which must stay valid until done). -EBUSY while one is under way. */
int rw_sender_post(struct rw_sender *s, const void *body, size_t len);
bool rw_sender_busy(const struct rw_sender *s);

#endif
