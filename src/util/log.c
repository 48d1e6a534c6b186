#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "strbuf.h"

static const char *const level_names[] = { "error", "warn", "info", "debug" };

int log_prefix(char *out, unsigned long outlen, long long t_ns, enum log_level level)
{
	time_t s = (time_t)(t_ns / 1000000000ll);
	struct tm tm;
	char when[32];

	gmtime_r(&s, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	return snprintf(out, outlen, "%s.%03lldZ %s ", when, (t_ns / 1000000ll) % 1000,
			level_names[level <= LOG_LEVEL_DEBUG ? level : LOG_LEVEL_DEBUG]);
}

/* The token bucket; its lock is held for the arithmetic only. */
static struct {
	pthread_mutex_t lock;
	bool on;
	double per_second, burst, tokens;
	long long last_ns;
	unsigned long long suppressed, unsaid;
} limit = { .lock = PTHREAD_MUTEX_INITIALIZER };

void log_rate_limit(double per_second, unsigned burst)
{
	pthread_mutex_lock(&limit.lock);
	limit.on = true;
	limit.per_second = per_second;
	limit.burst = limit.tokens = burst;
	limit.last_ns = clock_ns(CLOCK_MONOTONIC);
	pthread_mutex_unlock(&limit.lock);
}

unsigned long long log_suppressed_total(void)
{
	pthread_mutex_lock(&limit.lock);
	unsigned long long n = limit.suppressed;
	pthread_mutex_unlock(&limit.lock);
	return n;
}

/* Whether a message may be written now; *unsaid: how many were held back before it. */
static bool log_allowed(unsigned long long *unsaid)
{
	bool ok = true;

	pthread_mutex_lock(&limit.lock);
	if (limit.on) {
		long long now = clock_ns(CLOCK_MONOTONIC);
		limit.tokens += (double)(now - limit.last_ns) / 1e9 * limit.per_second;
		if (limit.tokens > limit.burst)
			limit.tokens = limit.burst;
		limit.last_ns = now;
		ok = limit.tokens >= 1;
		if (ok)
			limit.tokens -= 1;
	}
	if (ok) {
		*unsaid = limit.unsaid;
		limit.unsaid = 0;
	} else {
		limit.suppressed++;
		limit.unsaid++;
	}
	pthread_mutex_unlock(&limit.lock);
	return ok;
}

/* who: what speaks ("nodescope", or "libbpf" for the library's own messages). */
void log_vmsg(enum log_level level, const char *who, const char *fmt, va_list ap)
{
	int saved = errno;
	char prefix[64];
	struct strbuf text = STRBUF_INIT, out = STRBUF_INIT;
	unsigned long long unsaid;

	if (!log_allowed(&unsaid))
		return;
	log_prefix(prefix, sizeof(prefix), (long long)clock_ns(CLOCK_REALTIME), level);
	if (unsaid)
		strbuf_printf(&out,
			      "%snodescope: %llu log lines not written (--log-per-second, "
			      "--log-burst)\n",
			      prefix, unsaid);
	strbuf_vprintf(&text, fmt, ap);
	const char *p = strbuf_str(&text);
	do {
		size_t n = strcspn(p, "\n");
		strbuf_printf(&out, "%s%s: %.*s\n", prefix, who, (int)n, p);
		p += n;
		if (*p == '\n')
			p++;
	} while (*p);
	if (!out.oom) {
		const char *b = out.buf;
		size_t left = out.len;
		while (left) {
			ssize_t w = write(STDERR_FILENO, b, left);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break; /* nowhere left to say it */
			b += w;
			left -= (size_t)w;
		}
	}
	strbuf_free(&text);
	strbuf_free(&out);
	errno = saved;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, "nodescope", fmt, ap);
	va_end(ap);
}
