#include "policy.h"

enum stream_action stream_policy_on_wakeup(const struct stream_policy *p, bool timer_armed,
					   uint64_t pending)
{
	if (p->kind != NS_WAKEUP_BATCHED || !p->max_delay_ns)
		return STREAM_DRAIN;
	if (p->watermark && pending >= p->watermark)
		return STREAM_DRAIN;
	return timer_armed ? STREAM_WAIT : STREAM_ARM_TIMER;
}
