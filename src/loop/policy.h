/*
 * What a stream reader does when its ring buffer signals or its flush timer
 * fires. Pure, so the policy is tested apart from the kernel.
 */
#ifndef NODESCOPE_LOOP_POLICY_H
#define NODESCOPE_LOOP_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "events.h"

enum stream_action {
	STREAM_DRAIN,	  /* consume everything now (and disarm the flush timer) */
	STREAM_ARM_TIMER, /* leave the data, flush after max_delay */
	STREAM_WAIT,	  /* a flush is already scheduled; nothing to do */
};

struct stream_policy {
	enum ns_wakeup_policy kind;
	uint64_t max_delay_ns; /* batched only */
	uint64_t watermark;    /* batched only: bytes pending that force a drain */
};

/* The ring buffer woke us; pending = bytes not yet consumed. */
enum stream_action stream_policy_on_wakeup(const struct stream_policy *p, bool timer_armed,
					   uint64_t pending);

#endif
