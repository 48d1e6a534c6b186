/*
 * The cgroup files a container's resource metrics come from, parsed (pure:
 * text in, numbers out; the reading is cgroup_read.h). Units and choices are
 * the Coroot node agent's (cgroup/cpu.go, memory.go, psi.go), so the values
 * are the ones its users know:
 *  - CPU v1: cpuacct.usage (ns), cpu.stat throttled_time (ns),
 *    cpu.cfs_quota_us / cpu.cfs_period_us (a limit only when the quota > 0);
 *    v2: cpu.stat usage_usec and throttled_usec, cpu.max "QUOTA PERIOD" or
 *    "max PERIOD" (no limit).
 *  - memory v1: rss = total_rss + total_mapped_file, cache = total_cache,
 *    memory.limit_in_bytes (above 2^62: none); v2: rss = anon + file_mapped,
 *    cache = file, memory.max ("max": none).
 *  - PSI (v2 only): the total= of the "some" and "full" lines, in µs.
 * Each returns 0 or -EINVAL for text that is not what the kernel writes.
 */
#ifndef NODESCOPE_RESOURCES_CGROUP_PARSE_H
#define NODESCOPE_RESOURCES_CGROUP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Room for a cgroup path below its hierarchy's mount. */
#define CGROUP_DIR_MAX 512

/*
 * Where a process sits in each hierarchy the metrics read, from the text of
 * /proc/PID/cgroup, as Coroot reads it: "" for a hierarchy the process is at
 * the root of ("/" and "/init.scope" count as the root), "/lxc.payload.X/..."
 * cut to "/lxc.payload.X". v2 is the "0::" line.
 */
struct cgroup_dirs {
	char v2[CGROUP_DIR_MAX];
	char cpu[CGROUP_DIR_MAX];
	char cpuacct[CGROUP_DIR_MAX];
	char memory[CGROUP_DIR_MAX];
	char blkio[CGROUP_DIR_MAX];
};

/* 0, or -EINVAL when no line is "id:controllers:path". */
int cgroup_dirs_parse(const char *proc_cgroup_text, struct cgroup_dirs *out);

/* Coroot's choices: v1 CPU needs both cpu and cpuacct, else v2; v1 memory when set, else v2. */
static inline bool cgroup_dirs_cpu_v1(const struct cgroup_dirs *d)
{
	return d->cpu[0] && d->cpuacct[0];
}
static inline bool cgroup_dirs_memory_v1(const struct cgroup_dirs *d)
{
	return d->memory[0] != '\0';
}
/* Nothing to read: every hierarchy at its root (the host's own processes). */
static inline bool cgroup_dirs_root(const struct cgroup_dirs *d)
{
	return !d->v2[0] && !d->cpu[0] && !d->cpuacct[0] && !d->memory[0] && !d->blkio[0];
}

/* The value of "key VALUE" in a flat-keyed file (cpu.stat, memory.stat); -ENOENT if absent. */
int cgroup_kv_get(const char *text, const char *key, uint64_t *out);

/* One unsigned decimal number, surrounding blanks allowed (cpuacct.usage, limit files). */
int cgroup_parse_u64(const char *text, uint64_t *out);
/* The same, signed (cpu.cfs_quota_us is -1 when unset). */
int cgroup_parse_i64(const char *text, int64_t *out);

struct cgroup_cpu {
	double usage_s;
	double throttled_s;
	double limit_cores; /* 0: no quota */
};

int cgroup_cpu_v1_parse(const char *cpuacct_usage, const char *cpu_stat, const char *cfs_quota_us,
			const char *cfs_period_us, struct cgroup_cpu *out);
/* cpu_max NULL: the file is absent (no cpu controller in this tree), so no limit. */
int cgroup_cpu_v2_parse(const char *cpu_stat, const char *cpu_max, struct cgroup_cpu *out);

struct cgroup_memory {
	uint64_t rss;
	uint64_t cache;
	uint64_t limit; /* 0: none */
};

int cgroup_memory_v1_parse(const char *memory_stat, const char *limit_in_bytes,
			   struct cgroup_memory *out);
/* memory_max NULL: absent, so no limit. */
int cgroup_memory_v2_parse(const char *memory_stat, const char *memory_max,
			   struct cgroup_memory *out);

struct cgroup_pressure {
	double some_s;
	double full_s;
};

/* {cpu,memory,io}.pressure; a missing "full" line (older kernels' cpu) leaves 0. */
int cgroup_pressure_parse(const char *text, struct cgroup_pressure *out);

#endif
