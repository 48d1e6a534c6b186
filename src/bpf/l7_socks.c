#include "l7_socks.h"

#include <bpf/bpf.h>
#include <errno.h>

#include "events.h"
#include "l7_filter.h"

int l7_socks_adopt(int map_fd, struct ns_l7_filter *filter, uint32_t tgid, int32_t fd,
		   const struct ns_l7_sock *ls)
{
	uint64_t key = (uint64_t)tgid << 32 | (uint32_t)fd;
	/*
	 * Raised before the entry goes in and lowered if it did not: a tracked
	 * socket's slot is never 0. The epoch after the count, as the BPF side
	 * does (bpf/l7_filter.h).
	 */
	uint32_t *slot = &filter->slots[ns_l7_filter_slot(tgid, fd)];
	int err;

	__atomic_fetch_add(slot, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&filter->epoch, 1, __ATOMIC_SEQ_CST);
	if (!bpf_map_update_elem(map_fd, &key, ls, BPF_NOEXIST))
		return 0;
	err = -errno;
	__atomic_fetch_sub(slot, 1, __ATOMIC_SEQ_CST);
	return err;
}
