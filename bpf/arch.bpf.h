/*
 * What differs between architectures on the BPF side, one header each in
 * bpf/arch/, chosen by the -D__TARGET_ARCH_<arch> the Makefile passes (the
 * same macro libbpf's bpf_tracing.h reads for PT_REGS_*). Each defines:
 *   NS_NR_<syscall>            the numbers the syscall dispatcher switches on;
 *   NS_REG_ARG{1,2,3,4,5}, NS_REG_SP, NS_REG_NR
 *                              the fields of the kernel pt_regs of sys_enter/exit
 *                              (read through NS_SYSCALL_REG, syscalls.bpf.h);
 *   ns_arch_syscall_compat()   a syscall from the 32-bit table (skipped);
 *   NS_GO_REG_ARG{0,1,2}, NS_GO_REG_G, ns_go_stack_abi_g()
 *                              Go's register ABI and where the goroutine is.
 */
#ifndef NODESCOPE_ARCH_BPF_H
#define NODESCOPE_ARCH_BPF_H

#if defined(__TARGET_ARCH_x86)
#include "arch/x86.bpf.h"
#elif defined(__TARGET_ARCH_arm64)
#include "arch/arm64.bpf.h"
#else
#error "nodescope: no bpf/arch header for this __TARGET_ARCH (x86 and arm64 exist)"
#endif

#endif
