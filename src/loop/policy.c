#include "policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum stream_action stream_policy_on_wakeup(const struct stream_policy *p, bool timer_armed,
					   uint64_t pending)
{
	if (p->kind != NS_WAKEUP_BATCHED || !p->max_delay_ns)
		return STREAM_DRAIN;
	if (p->watermark && pending >= p->watermark)
		return STREAM_DRAIN;
	return timer_armed ? STREAM_WAIT : STREAM_ARM_TIMER;
}

/* A plain decimal number: strtoull alone would take a sign, blanks and overflow. */
static unsigned long long parse_digits(const char *s, char **end)
{
	if (*s < '0' || *s > '9') {
		*end = (char *)s;
		return 0;
	}
	errno = 0;
	unsigned long long v = strtoull(s, end, 10);
	if (errno) /* ERANGE */
		*end = (char *)s;
	return v;
}

int stream_policy_parse(const char *s, struct stream_policy *out)
{
	if (!strcmp(s, "immediate")) {
		*out = (struct stream_policy){ .kind = NS_WAKEUP_IMMEDIATE };
		return 0;
	}
	if (strncmp(s, "batched:", 8))
		return -EINVAL;
	char *end;
	unsigned long long ms = parse_digits(s + 8, &end);
	if (end == s + 8 || *end != ':' || ms == 0 || ms > 10000)
		return -EINVAL;
	const char *w = end + 1;
	unsigned long long wm = parse_digits(w, &end);
	if (end == w || *end || wm == 0)
		return -EINVAL;
	*out = (struct stream_policy){
		.kind = NS_WAKEUP_BATCHED,
		.max_delay_ns = ms * 1000000ull,
		.watermark = wm,
	};
	return 0;
}
