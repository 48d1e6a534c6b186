// SPDX-License-Identifier: GPL-2.0
/*
 * The floor: empty programs on the hooks nodescope attaches (the SEC() names
 * of bpf/), and on the other ways to hook the same syscalls. What a
 * traced process pays for these is the least any BPF agent on those hooks
 * can cost it; bench/ measures nodescope against it. build/bench-floor
 * loads the programs of one set (bench/floor/floor.c) and attaches them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

/* nodescope's hooks: bpf/syscalls.bpf.c, proc.bpf.c, threads.bpf.c, files.bpf.c, tcp.bpf.c. */
SEC("raw_tp/sys_enter")
int floor_sys_enter(void *ctx) { return 0; }
SEC("raw_tp/sys_exit")
int floor_sys_exit(void *ctx) { return 0; }
SEC("tracepoint/sched/sched_process_exec")
int floor_exec(void *ctx) { return 0; }
SEC("tracepoint/sched/sched_process_exit")
int floor_exit(void *ctx) { return 0; }
SEC("raw_tp/sched_process_fork")
int floor_fork(void *ctx) { return 0; }
SEC("tracepoint/oom/mark_victim")
int floor_oom(void *ctx) { return 0; }
SEC("raw_tp/inet_sock_set_state")
int floor_sock_state(void *ctx) { return 0; }
SEC("raw_tp/tcp_retransmit_skb")
int floor_retransmit(void *ctx) { return 0; }

/* The same syscalls hooked other ways: the classic (perf) raw_syscalls tracepoints... */
SEC("tracepoint/raw_syscalls/sys_enter")
int tp_sys_enter(void *ctx) { return 0; }
SEC("tracepoint/raw_syscalls/sys_exit")
int tp_sys_exit(void *ctx) { return 0; }

/* ...the per-syscall tracepoints of the syscalls bench/syscall loops on... */
SEC("tracepoint/syscalls/sys_enter_read")
int tp_enter_read(void *ctx) { return 0; }
SEC("tracepoint/syscalls/sys_exit_read")
int tp_exit_read(void *ctx) { return 0; }
SEC("tracepoint/syscalls/sys_enter_write")
int tp_enter_write(void *ctx) { return 0; }
SEC("tracepoint/syscalls/sys_exit_write")
int tp_exit_write(void *ctx) { return 0; }
SEC("tracepoint/syscalls/sys_enter_getpid")
int tp_enter_getpid(void *ctx) { return 0; }
SEC("tracepoint/syscalls/sys_exit_getpid")
int tp_exit_getpid(void *ctx) { return 0; }

/* ...and BTF-typed raw tracepoints (no trampoline: attached as raw tracepoints). */
SEC("tp_btf/sys_enter")
int btf_sys_enter(void *ctx) { return 0; }
SEC("tp_btf/sys_exit")
int btf_sys_exit(void *ctx) { return 0; }
