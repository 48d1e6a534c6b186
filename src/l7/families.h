/*
 * The metric families of one L7 protocol, with Coroot's names: a count by
 * status and a latency histogram, outbound (by destination) and inbound (the
 * server's side), or a message count by method for the messaging protocols.
 * HTTP's are the "requests" shape under the name "http".
 */
#ifndef NODESCOPE_L7_FAMILIES_H
#define NODESCOPE_L7_FAMILIES_H

#include "proto.h"

struct metric_registry;
struct metric;

/* Coroot's latency buckets in seconds, shared by every L7 and DNS histogram. */
#define L7_DURATION_BOUNDS 11
extern const double l7_duration_bounds[L7_DURATION_BOUNDS];

struct l7_families {
	enum l7_family kind;
	struct metric *count, *duration;       /* outbound; MESSAGES: count only */
	struct metric *in_count, *in_duration; /* inbound; NULL for MESSAGES */
};

/*
 * Registers container_<name>_<queries|requests|messages>... for a protocol;
 * max_series caps each family (per-container families). Returns 0 or -EINVAL.
 */
int l7_families_register(struct metric_registry *r, const char *name, enum l7_family kind,
			 unsigned max_series, struct l7_families *out);

#endif
