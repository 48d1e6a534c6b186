#include "log.h"

#include <errno.h>
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

/* who: what speaks ("nodescope", or "libbpf" for the library's own messages). */
void log_vmsg(enum log_level level, const char *who, const char *fmt, va_list ap)
{
	int saved = errno;
	char prefix[64];
	struct strbuf text = STRBUF_INIT, out = STRBUF_INIT;

	log_prefix(prefix, sizeof(prefix), (long long)clock_ns(CLOCK_REALTIME), level);
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
