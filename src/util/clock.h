/* Nanosecond clock readings: the one place the agent asks the time. */
#ifndef NODESCOPE_UTIL_CLOCK_H
#define NODESCOPE_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC: the clock of bpf_ktime_get_ns() and of every event's ts_ns. */
static inline uint64_t clock_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

#endif
