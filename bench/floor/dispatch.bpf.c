// SPDX-License-Identifier: GPL-2.0
/*
 * Scratch copies of nodescope's syscall dispatcher (bpf/syscalls.bpf.c) with
 * the handlers stubbed out, for bench/syscall to find what a syscall nobody
 * watches pays above the floor: the switch at entry, and at exit the read
 * of the syscall number from the registers (a helper call through
 * BPF_CORE_READ in a raw_tp, a plain load in a tp_btf program). The
 * dispatch-l7 pair adds what the l7 handlers do for a read or write on an fd
 * that is no tracked socket (a pipe): the fd read and its slot in the l7
 * filter loaded; dispatch-l7-btf does the same as tp_btf programs.
 * Not nodescope's code: a measuring aid; keep the switches as bpf/'s are.
 */
#include "syscalls.bpf.h"
#include "l7_filter.h"

char LICENSE[] SEC("license") = "GPL";

#define DISP_WATCHED_ENTER                                                   \
	case NS_NR_connect:                                                  \
	case NS_NR_listen:                                                   \
	case NS_NR_close:                                                    \
	case NS_NR_write:                                                    \
	case NS_NR_sendto:                                                   \
	case NS_NR_writev:                                                   \
	case NS_NR_sendmsg:                                                  \
	case NS_NR_sendmmsg:                                                 \
	case NS_NR_sendfile:

#define DISP_WATCHED_EXIT                                                    \
	case NS_NR_connect:                                                  \
	case NS_NR_listen:                                                   \
	case NS_NR_accept:                                                   \
	case NS_NR_accept4:                                                  \
	case NS_NR_write:                                                    \
	case NS_NR_sendto:                                                   \
	case NS_NR_writev:                                                   \
	case NS_NR_sendmsg:                                                  \
	case NS_NR_sendmmsg:                                                 \
	case NS_NR_sendfile:                                                 \
	case NS_NR_read:                                                     \
	case NS_NR_recvfrom:                                                 \
	case NS_NR_readv:                                                    \
	case NS_NR_recvmsg:                                                  \
	case NS_NR_mmap:

/* The syscall number in the registers, as a plain load through a typed pointer. */
#if defined(__TARGET_ARCH_x86)
#define DISP_NR_BTF(regs) ((regs)->orig_ax)
#define DISP_ARG1_BTF(regs) ((regs)->di)
#define DISP_ARG2_BTF(regs) ((regs)->si)
#define DISP_SP_BTF(regs) ((regs)->sp)
#else
#define DISP_NR_BTF(regs) ((regs)->syscallno)
#define DISP_ARG1_BTF(regs) ((regs)->regs[0])
#define DISP_ARG2_BTF(regs) ((regs)->regs[1])
#define DISP_SP_BTF(regs) ((regs)->sp)
#endif

/* The compat check as the agent does it on kernels with a BTF task pointer. */
static __always_inline bool disp_compat(void)
{
	return bpf_get_current_task_btf()->thread_info.status & NS_TS_COMPAT;
}

/* A handler that is called (a bpf-to-bpf call, verified apart) and does nothing. */
__noinline int disp_handler(long id, __u64 arg)
{
	return arg == 0xdeadbeef ? (int)id : 0;
}

/* raw_tp, as bpf/syscalls.bpf.c: the switch on the id the hook is given. */
SEC("raw_tp/sys_enter")
int BPF_PROG(disp_enter, struct pt_regs *regs, long id)
{
	switch (id) {
	DISP_WATCHED_ENTER
		if (disp_compat())
			return 0;
		return disp_handler(id, NS_SYSCALL_REG(false, regs, NS_REG_ARG1));
	}
	return 0;
}

/* raw_tp, as bpf/syscalls.bpf.c: the id read from the registers, then the switch. */
SEC("raw_tp/sys_exit")
int BPF_PROG(disp_exit, struct pt_regs *regs, long ret)
{
	long id = NS_SYSCALL_REG(false, regs, NS_REG_NR);

	switch (id) {
	DISP_WATCHED_EXIT
		if (disp_compat())
			return 0;
		return disp_handler(id, ret);
	}
	return 0;
}

/* The exit's register read alone, no switch. */
SEC("raw_tp/sys_exit")
int BPF_PROG(disp_exit_read_only, struct pt_regs *regs, long ret)
{
	long id = NS_SYSCALL_REG(false, regs, NS_REG_NR);

	return id == -2 ? 1 : 0;
}

/* tp_btf: the registers are a typed pointer, the id a plain load. */
SEC("tp_btf/sys_enter")
int BPF_PROG(btf_disp_enter, struct pt_regs *regs, long id)
{
	switch (id) {
	DISP_WATCHED_ENTER
		if (disp_compat())
			return 0;
		return disp_handler(id, DISP_ARG1_BTF(regs));
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(btf_disp_exit, struct pt_regs *regs, long ret)
{
	long id = DISP_NR_BTF(regs);

	switch (id) {
	DISP_WATCHED_EXIT
		if (disp_compat())
			return 0;
		return disp_handler(id, ret);
	}
	return 0;
}

/*
 * The l7 handlers' common case, for an fd that is no tracked socket: the
 * fd read, its slot in a filter like nodescope's (bpf/l7_filter.h) loaded
 * and found zero. Nothing here ever sets a slot; the stamp and the lookup
 * behind it are the path of a tracked socket, kept so the programs match.
 */
__u32 disp_filter[NS_L7_FILTER_SLOTS];

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64[4]);
} disp_socks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[3]);
} disp_write_starts SEC(".maps");

static __always_inline bool disp_maybe_tracked(__u64 fd)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	return *(volatile __u32 *)&disp_filter[ns_l7_filter_slot(tgid, (__s32)fd)] != 0;
}

__noinline int disp_l7_enter(__u64 fd)
{
	__u32 zero = 0;
	__u64 *w = bpf_map_lookup_elem(&disp_write_starts, &zero);

	if (w) {
		w[0] = bpf_ktime_get_ns();
		w[1] = bpf_get_current_pid_tgid();
		w[2] = fd;
	}
	return 0;
}

__noinline int disp_l7_exit(__u64 fd, __u64 arg2, long ret)
{
	__u64 key = (bpf_get_current_pid_tgid() >> 32) << 32 | (__u32)fd;

	if (!bpf_map_lookup_elem(&disp_socks, &key))
		return 0;
	return (int)(arg2 + ret);
}

/* The filter before the compat check, as bpf/syscalls.bpf.c has it. */
#define DISP_L7_ENTER(id, fd)                                                \
	(!disp_maybe_tracked(fd) || disp_compat() || (id) == NS_NR_close ? 0 : disp_l7_enter(fd))
#define DISP_L7_EXIT(fd, arg2, ret)                                          \
	(!disp_maybe_tracked(fd) || disp_compat() ? 0 : disp_l7_exit(fd, arg2, ret))

SEC("raw_tp/sys_enter")
int BPF_PROG(disp_l7_sys_enter, struct pt_regs *regs, long id)
{
	switch (id) {
	DISP_WATCHED_ENTER
		return DISP_L7_ENTER(id, NS_SYSCALL_REG(false, regs, NS_REG_ARG1));
	}
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(disp_l7_sys_exit, struct pt_regs *regs, long ret)
{
	long id = NS_SYSCALL_REG(false, regs, NS_REG_NR);

	switch (id) {
	DISP_WATCHED_EXIT
		return DISP_L7_EXIT(NS_SYSCALL_REG(false, regs, NS_REG_ARG1),
				    NS_SYSCALL_REG(false, regs, NS_REG_ARG2), ret);
	}
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(btf_l7_sys_enter, struct pt_regs *regs, long id)
{
	switch (id) {
	DISP_WATCHED_ENTER
		return DISP_L7_ENTER(id, DISP_ARG1_BTF(regs));
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(btf_l7_sys_exit, struct pt_regs *regs, long ret)
{
	long id = DISP_NR_BTF(regs);

	switch (id) {
	DISP_WATCHED_EXIT
		return DISP_L7_EXIT(DISP_ARG1_BTF(regs), DISP_ARG2_BTF(regs), ret);
	}
	return 0;
}
