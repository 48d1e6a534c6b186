/*
 * The agent's messages: every line it writes to stderr goes through here, as
 *   2026-12-03T17:46:48.123Z info nodescope: ready
 * (UTC time to the millisecond, the level, who speaks: nodescope, or the
 * library whose message it passes on), then the message, one write(2)
 * per message so lines of concurrent writers (the link closer's threads) do
 * not interleave. A message of several lines gets the prefix on each.
 *
 * As Coroot's agent (--log-per-second, --log-burst): a token bucket lets
 * messages through, burst at once and per_second on average; the others are
 * counted, and the next message written says how many went unsaid.
 */
#ifndef NODESCOPE_UTIL_LOG_H
#define NODESCOPE_UTIL_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_LEVEL_ERROR,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(enum log_level level, const char *who, const char *fmt, va_list ap);

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)

/* Limits the messages from now on (off until called). Thread-safe, as the messages are. */
void log_rate_limit(double per_second, unsigned burst);
/* Messages not written for the limit, since start. */
unsigned long long log_suppressed_total(void);

/* The prefix for a message at time t_ns (CLOCK_REALTIME) into out (pure; for tests). */
int log_prefix(char *out, unsigned long outlen, long long t_ns, enum log_level level);

#endif
