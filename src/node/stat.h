/*
 * /proc/stat: the node's CPU time by mode (the "cpu " line) and its logical
 * cores (the "cpuN" lines), as Coroot exports them. Pure.
 */
#ifndef NODESCOPE_NODE_STAT_H
#define NODESCOPE_NODE_STAT_H

#include <stdint.h>

/* Coroot's modes, in /proc/stat's column order (guest time is already in user and nice). */
enum node_cpu_mode {
	NODE_CPU_USER,
	NODE_CPU_NICE,
	NODE_CPU_SYSTEM,
	NODE_CPU_IDLE,
	NODE_CPU_IOWAIT,
	NODE_CPU_IRQ,
	NODE_CPU_SOFTIRQ,
	NODE_CPU_STEAL,
	NODE_CPU_MODES
};

extern const char *const node_cpu_mode_names[NODE_CPU_MODES];

struct node_cpu {
	uint64_t ticks[NODE_CPU_MODES]; /* USER_HZ ticks since boot, all CPUs */
	unsigned logical_cores;
};

/*
 * Parses /proc/stat's text. Returns 0, or -EINVAL when its "cpu " line is
 * missing or has fewer than the eight numbers (kernels since 2.6.11 have
 * them all), or -ERANGE for a number past 64 bits; out is then unusable.
 */
int node_stat_parse(const char *text, struct node_cpu *out);

/* /proc/uptime's first field, seconds since boot: 0, or -EINVAL unless it is "<secs> <idle>". */
int node_uptime_parse(const char *text, double *out);

#endif
