#include "nice.h"

#include "util/log.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

void nice_switch_init(struct nice_switch *n, int urgent, int bulk, bool at_urgent,
		      int (*set)(int nice))
{
	*n = (struct nice_switch){ .urgent = urgent, .bulk = bulk, .set = set, .cur = urgent,
				   .on = at_urgent && bulk > urgent && set };
}

/* Sets the thread to what its state asks for. A failure stops the switching, said once. */
static void nice_apply(struct nice_switch *n)
{
	if (!n->on)
		return;
	int want = n->open && !n->urgent_reads ? n->bulk : n->urgent;
	if (want == n->cur)
		return;
	int err = n->set(want);
	if (err) {
		/* Raising needs CAP_SYS_NICE (or RLIMIT_NICE): it may have been dropped since. */
		log_warn("cannot move to nice %d: %s; staying at %d", want, strerror(-err), n->cur);
		n->on = false;
		return;
	}
	n->cur = want;
}

/* One of the two counts (batches open, urgent reads under way) up or down; never below 0. */
static void nice_count(struct nice_switch *n, bool urgent, bool up)
{
	if (!n)
		return;
	unsigned *c = urgent ? &n->urgent_reads : &n->open;
	if (up)
		(*c)++;
	else if (*c)
		(*c)--;
	else
		return;
	nice_apply(n);
}

void nice_batch_opened(struct nice_switch *n) { nice_count(n, false, true); }
void nice_batch_closed(struct nice_switch *n) { nice_count(n, false, false); }
void nice_urgent_enter(struct nice_switch *n) { nice_count(n, true, true); }
void nice_urgent_leave(struct nice_switch *n) { nice_count(n, true, false); }

int nice_set_thread(int nice)
{
	return setpriority(PRIO_PROCESS, 0, nice) ? -errno : 0;
}
