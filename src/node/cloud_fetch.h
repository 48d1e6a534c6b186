/*
 * Asks a cloud provider's instance metadata service once, as Coroot does at
 * its start, without holding the agent up: a detached thread enters the
 * host's network namespace (where the link-local service answers; the
 * agent's own may be a pod's), asks every request of the provider's row
 * (node/cloud_meta.h) with one deadline for the lot, and hands the result
 * back as one message on a socket the event loop waits on. Nothing is
 * polled and no timer is armed; a service that is down, slow or answers
 * garbage ends in a result that says so, within the deadline.
 */
#ifndef NODESCOPE_NODE_CLOUD_FETCH_H
#define NODESCOPE_NODE_CLOUD_FETCH_H

#include "node/cloud.h"
#include "node/cloud_meta.h"

struct loop;
struct cloud_fetch;

enum cloud_outcome {
	CLOUD_ANSWERED,
	CLOUD_UNREACHABLE, /* no connection, or no answer before the deadline */
	CLOUD_BAD_STATUS,  /* a request that matters answered other than 200 */
	CLOUD_MALFORMED,   /* an answer that is not what the provider sends */
	CLOUD_OUTCOMES
};

extern const char *const cloud_outcome_names[CLOUD_OUTCOMES];

struct cloud_result {
	enum cloud_outcome outcome;
	char error[512];   /* what went wrong (outcome != CLOUD_ANSWERED) */
	char netns[200];   /* why the host's network namespace was not used, or "" */
	struct node_cloud cloud; /* the labels the service gave ("" for the others) */
};

typedef void (*cloud_fetch_fn)(void *ctx, const struct cloud_result *r);

/*
 * Starts asking p's service from the network namespace of netns_path
 * ("/proc/1/ns/net"), all within deadline_ms; fn(ctx, result) is called
 * from the loop once, unless cloud_fetch_free() comes first. 0 or -errno.
 */
int cloud_fetch_start(struct loop *l, const struct cloud_provider *p, const char *netns_path,
		      unsigned deadline_ms, cloud_fetch_fn fn, void *ctx, struct cloud_fetch **out);

/* Forgets the answer still to come (the thread ends on its own). NULL-safe. */
void cloud_fetch_free(struct cloud_fetch *f);

#endif
