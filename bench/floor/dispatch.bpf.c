// SPDX-License-Identifier: GPL-2.0
/*
 * Scratch copies of nodescope's syscall dispatcher (bpf/syscalls.bpf.c) with
 * the handlers stubbed out, for bench/syscall to find what a syscall nobody
 * watches pays above the floor: the switch at entry, and at exit the read
 * of the syscall number from the registers (a helper call through
 * BPF_CORE_READ in a raw_tp, a plain load in a tp_btf program).
 * Not nodescope's code: a measuring aid; keep the switches as bpf/'s are.
 */
#include "syscalls.bpf.h"

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
	case NS_NR_sendfile:                                                 \
	case NS_NR_read:                                                     \
	case NS_NR_recvfrom:                                                 \
	case NS_NR_readv:                                                    \
	case NS_NR_recvmsg:

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
#else
#define DISP_NR_BTF(regs) ((regs)->syscallno)
#define DISP_ARG1_BTF(regs) ((regs)->regs[0])
#endif

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
		if (ns_syscall_compat(regs))
			return 0;
		return disp_handler(id, NS_SYSCALL_ARG1(regs));
	}
	return 0;
}

/* raw_tp, as bpf/syscalls.bpf.c: the id read from the registers, then the switch. */
SEC("raw_tp/sys_exit")
int BPF_PROG(disp_exit, struct pt_regs *regs, long ret)
{
	long id = NS_SYSCALL_NR(regs);

	switch (id) {
	DISP_WATCHED_EXIT
		if (ns_syscall_compat(regs))
			return 0;
		return disp_handler(id, ret);
	}
	return 0;
}

/* The exit's register read alone, no switch. */
SEC("raw_tp/sys_exit")
int BPF_PROG(disp_exit_read_only, struct pt_regs *regs, long ret)
{
	long id = NS_SYSCALL_NR(regs);

	return id == -2 ? 1 : 0;
}

/* tp_btf: the registers are a typed pointer, the id a plain load. */
SEC("tp_btf/sys_enter")
int BPF_PROG(btf_disp_enter, struct pt_regs *regs, long id)
{
	switch (id) {
	DISP_WATCHED_ENTER
		if (ns_syscall_compat(regs))
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
		if (ns_syscall_compat(regs))
			return 0;
		return disp_handler(id, ret);
	}
	return 0;
}
