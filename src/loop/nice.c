#include "nice.h"

#include "util/log.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

void nice_switch_init(struct nice_switch *n, int urgent, int bulk, bool at_urgent,
		      int (*set)(int nice))
{
	*n = (struct nice_switch){ .urgent = urgent, .bulk = bulk, .set = set,
				   .on = at_urgent && bulk > urgent && set };
}

void nice_bulk_enter(struct nice_switch *n)
{
	if (!n || !n->on || n->depth++)
		return;
	int err = n->set(n->bulk);
	if (err) {
		/* Still at urgent: nothing to return from. */
		log_warn("cannot read batched records at nice %d: %s; reading them at %d", n->bulk,
			 strerror(-err), n->urgent);
		n->on = false;
		n->depth = 0;
	}
}

void nice_bulk_leave(struct nice_switch *n)
{
	if (!n || !n->on || !n->depth || --n->depth)
		return;
	int err = n->set(n->urgent);
	if (err) {
		/* Raising needs CAP_SYS_NICE (or RLIMIT_NICE): stay where we are, and say so once. */
		log_warn("cannot return to nice %d after reading batched records: %s; running at %d",
			 n->urgent, strerror(-err), n->bulk);
		n->on = false;
	}
}

int nice_set_thread(int nice)
{
	return setpriority(PRIO_PROCESS, 0, nice) ? -errno : 0;
}
