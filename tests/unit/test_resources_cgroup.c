/*
 * The container resource parsers (src/resources/cgroup_parse.c) on cgroup
 * files captured from this machine (v1 and its hybrid v2 tree) and on a
 * hand-made pure-v2 layout (tests/unit/data/resources/README), and the
 * reader (cgroup_read.c) on fake hierarchies built from them: which
 * hierarchy is read, as Coroot chooses, and what a vanished cgroup gives.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resources/cgroup_parse.h"
#include "resources/cgroup_read.h"

#include "data_file.h"

#define DATA "tests/unit/data/resources/"


static void test_dirs_hybrid(void **state)
{
	struct cgroup_dirs d;
	const char *text = "12:blkio:/system.slice/x.service\n"
			   "11:cpu,cpuacct:/system.slice/x.service\n"
			   "10:memory:/system.slice/x.service\n"
			   "9:pids:/system.slice/x.service\n"
			   "1:name=systemd:/system.slice/x.service\n"
			   "0::/system.slice/x.service\n";
	assert_int_equal(cgroup_dirs_parse(text, &d), 0);
	assert_string_equal(d.v2, "/system.slice/x.service");
	assert_string_equal(d.cpu, "/system.slice/x.service");
	assert_string_equal(d.cpuacct, "/system.slice/x.service");
	assert_string_equal(d.memory, "/system.slice/x.service");
	assert_string_equal(d.blkio, "/system.slice/x.service");
	assert_true(cgroup_dirs_cpu_v1(&d));
	assert_true(cgroup_dirs_memory_v1(&d));

	/* This machine's own: cpu and cpuacct apart, at their roots; memory in a cgroup. */
	assert_int_equal(cgroup_dirs_parse(test_file_text(DATA "proc-cgroup-hybrid"), &d), 0);
	assert_string_equal(d.cpu, "");
	assert_string_equal(d.cpuacct, "");
	assert_string_equal(d.v2, "");
	assert_true(d.memory[0] == '/');
	assert_false(cgroup_dirs_cpu_v1(&d));
	assert_false(cgroup_dirs_root(&d));
}

static void test_dirs_v2_and_roots(void **state)
{
	struct cgroup_dirs d;

	assert_int_equal(cgroup_dirs_parse("0::/kubepods.slice/a/b\n", &d), 0);
	assert_string_equal(d.v2, "/kubepods.slice/a/b");
	assert_false(cgroup_dirs_cpu_v1(&d));
	assert_false(cgroup_dirs_memory_v1(&d));
	/* "/" and "/init.scope" are roots; lxc payloads are cut to the container. */
	assert_int_equal(cgroup_dirs_parse("4:memory:/init.scope\n0::/\n", &d), 0);
	assert_true(cgroup_dirs_root(&d));
	assert_int_equal(cgroup_dirs_parse("0::/lxc.payload.web/system.slice/a.service", &d), 0);
	assert_string_equal(d.v2, "/lxc.payload.web");
	/* Paths are cleaned as Go's path.Join does. */
	assert_int_equal(cgroup_dirs_parse("3:cpu:/a//b/../c/\n", &d), 0);
	assert_string_equal(d.cpu, "/a/c");
	/* Rooted: no ".." leads out of a hierarchy (found by fuzz_cgroup_files). */
	assert_int_equal(cgroup_dirs_parse("3:cpu:../../etc\n", &d), 0);
	assert_string_equal(d.cpu, "/etc");
	assert_int_equal(cgroup_dirs_parse("", &d), -EINVAL);
	assert_int_equal(cgroup_dirs_parse("garbage\nno colons", &d), -EINVAL);
}

static void test_cpu_v1(void **state)
{
	struct cgroup_cpu c;

	assert_int_equal(cgroup_cpu_v1_parse(test_file_text(DATA "v1/cpuacct.usage"), test_file_text(DATA "v1/cpu.stat"),
					     test_file_text(DATA "v1/cpu.cfs_quota_us"),
					     test_file_text(DATA "v1/cpu.cfs_period_us"), &c),
			 0);
	assert_float_equal(c.usage_s, 1.618920893, 1e-9);
	assert_float_equal(c.throttled_s, 5.234775837, 1e-9);
	assert_float_equal(c.limit_cores, 0.2, 1e-12);
	/* No quota (-1): no limit. */
	assert_int_equal(cgroup_cpu_v1_parse("5\n", "throttled_time 0\n",
					     test_file_text(DATA "v1/unlimited.cfs_quota_us"), "100000\n", &c),
			 0);
	assert_float_equal(c.limit_cores, 0, 0);
	assert_int_equal(cgroup_cpu_v1_parse("x\n", "throttled_time 0\n", "-1\n", "100000\n", &c),
			 -EINVAL);
	assert_int_equal(cgroup_cpu_v1_parse("5\n", "nr_periods 1\n", "-1\n", "100000\n", &c),
			 -EINVAL);
}

static void test_cpu_v2(void **state)
{
	struct cgroup_cpu c;

	/* The hybrid tree has no cpu controller: usage only, no throttling, no cpu.max. */
	assert_int_equal(cgroup_cpu_v2_parse(test_file_text(DATA "hybrid-v2/cpu.stat"), NULL, &c), 0);
	assert_float_equal(c.usage_s, 1.618920, 1e-9);
	assert_float_equal(c.throttled_s, 0, 0);
	assert_float_equal(c.limit_cores, 0, 0);

	assert_int_equal(cgroup_cpu_v2_parse(test_file_text(DATA "v2/cpu.stat"), test_file_text(DATA "v2/cpu.max"), &c),
			 0);
	assert_float_equal(c.usage_s, 8.123456, 1e-9);
	assert_float_equal(c.throttled_s, 2.5, 1e-9);
	assert_float_equal(c.limit_cores, 0.5, 1e-12);
	assert_int_equal(cgroup_cpu_v2_parse(test_file_text(DATA "v2/cpu.stat"),
					     test_file_text(DATA "v2/unlimited.cpu.max"), &c),
			 0);
	assert_float_equal(c.limit_cores, 0, 0);

	assert_int_equal(cgroup_cpu_v2_parse("user_usec 1\n", NULL, &c), -EINVAL);
	assert_int_equal(cgroup_cpu_v2_parse("usage_usec 1\n", "100000\n", &c), -EINVAL);
	assert_int_equal(cgroup_cpu_v2_parse("usage_usec 1\n", "max max\n", &c), -EINVAL);
	assert_int_equal(cgroup_cpu_v2_parse("usage_usec 1\nthrottled_usec -3\n", NULL, &c),
			 -EINVAL);
	assert_int_equal(cgroup_cpu_v2_parse("usage_usec 99999999999999999999999\n", NULL, &c),
			 -EINVAL);
}

static void test_memory(void **state)
{
	struct cgroup_memory m;

	/* v1: rss = total_rss + total_mapped_file, cache = total_cache. */
	assert_int_equal(cgroup_memory_v1_parse(test_file_text(DATA "v1/memory.stat"),
						test_file_text(DATA "v1/memory.limit_in_bytes"), &m),
			 0);
	assert_int_equal(m.rss, 67112960ull + 188416ull);
	assert_int_equal(m.cache, 188416ull);
	assert_int_equal(m.limit, 268435456ull);
	/* The root's "limit" (2^63 - 4096) is no limit. */
	assert_int_equal(cgroup_memory_v1_parse(test_file_text(DATA "v1/memory.stat"),
						test_file_text(DATA "v1/unlimited.limit_in_bytes"), &m),
			 0);
	assert_int_equal(m.limit, 0);

	/* v2: rss = anon + file_mapped, cache = file. */
	assert_int_equal(cgroup_memory_v2_parse(test_file_text(DATA "v2/memory.stat"),
						test_file_text(DATA "v2/memory.max"), &m),
			 0);
	assert_int_equal(m.rss, 104857600ull + 10485760ull);
	assert_int_equal(m.cache, 52428800ull);
	assert_int_equal(m.limit, 536870912ull);
	assert_int_equal(cgroup_memory_v2_parse(test_file_text(DATA "v2/memory.stat"),
						test_file_text(DATA "v2/unlimited.memory.max"), &m),
			 0);
	assert_int_equal(m.limit, 0);
	assert_int_equal(cgroup_memory_v2_parse(test_file_text(DATA "v2/memory.stat"), NULL, &m), 0);
	assert_int_equal(m.limit, 0);
	/* "file" is not "file_mapped": keys match whole. */
	assert_int_equal(cgroup_memory_v2_parse("anon 1\nfile_mapped 2\n", NULL, &m), -EINVAL);
	assert_int_equal(cgroup_memory_v1_parse("total_rss 1\n", "5\n", &m), -EINVAL);
}

static void test_pressure(void **state)
{
	struct cgroup_pressure p;

	assert_int_equal(cgroup_pressure_parse(test_file_text(DATA "hybrid-v2/cpu.pressure"), &p), 0);
	assert_float_equal(p.some_s, 5.314421, 1e-9);
	assert_float_equal(p.full_s, 5.314385, 1e-9);
	assert_int_equal(cgroup_pressure_parse(test_file_text(DATA "hybrid-v2/io.pressure"), &p), 0);
	assert_float_equal(p.some_s, 0.000372, 1e-12);
	/* Kernels before 5.13 have no "full" line in cpu.pressure. */
	assert_int_equal(cgroup_pressure_parse(test_file_text(DATA "v2/cpu.pressure.no-full"), &p), 0);
	assert_float_equal(p.some_s, 1.5, 1e-9);
	assert_float_equal(p.full_s, 0, 0);
	assert_int_equal(cgroup_pressure_parse("", &p), -EINVAL);
	assert_int_equal(cgroup_pressure_parse("some avg10=0.00\n", &p), -EINVAL);
	assert_int_equal(cgroup_pressure_parse("some total=x\n", &p), -EINVAL);
	assert_int_equal(cgroup_pressure_parse("what total=1\n", &p), -EINVAL);
	assert_int_equal(cgroup_pressure_parse("some xtotal=5 total=7\n", &p), 0);
	assert_float_equal(p.some_s, 7e-6, 1e-15);
}

/* A fake cgroupfs root in a temp dir: hierarchies and their files. */
static char root[64];

static void put(const char *rel, const char *src_or_text, bool is_file)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	test_file_put(path, is_file ? test_file_text(src_or_text) : src_or_text);
}

static int setup(void **state)
{
	strcpy(root, "/tmp/ns-cgroup-XXXXXX");
	assert_non_null(mkdtemp(root));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd);
}

static void test_read_hybrid(void **state)
{
	struct cgroup_roots r;
	struct cgroup_dirs d;
	struct cgroup_cpu c;
	struct cgroup_memory m;
	struct cgroup_pressure p;

	/* Not a cgroup2 mount at ROOT/unified: v2 is read at ROOT itself. */
	cgroup_roots_find(root, &r);
	assert_string_equal(r.v1, root);
	assert_string_equal(r.v2, root);
	snprintf(r.v2, sizeof(r.v2), "%s/unified", root); /* as on a hybrid host */

	put("cpu/s/x/cpu.stat", DATA "v1/cpu.stat", true);
	put("cpu/s/x/cpu.cfs_quota_us", DATA "v1/cpu.cfs_quota_us", true);
	put("cpu/s/x/cpu.cfs_period_us", DATA "v1/cpu.cfs_period_us", true);
	put("cpuacct/s/x/cpuacct.usage", DATA "v1/cpuacct.usage", true);
	put("memory/s/x/memory.stat", DATA "v1/memory.stat", true);
	put("memory/s/x/memory.limit_in_bytes", DATA "v1/memory.limit_in_bytes", true);
	put("unified/s/x/cpu.stat", DATA "hybrid-v2/cpu.stat", true);
	put("unified/s/x/cpu.pressure", DATA "hybrid-v2/cpu.pressure", true);

	assert_int_equal(cgroup_dirs_parse("5:cpu:/s/x\n4:cpuacct:/s/x\n3:memory:/s/x\n0::/s/x\n", &d),
			 0);
	/* v1 CPU (both cpu and cpuacct set) and memory; pressure from v2. */
	assert_int_equal(cgroup_read_cpu(&r, &d, &c), 0);
	assert_float_equal(c.limit_cores, 0.2, 1e-12);
	assert_float_equal(c.throttled_s, 5.234775837, 1e-9);
	assert_int_equal(cgroup_read_memory(&r, &d, &m), 0);
	assert_int_equal(m.limit, 268435456ull);
	assert_int_equal(cgroup_read_pressure(&r, &d, "cpu", &p), 0);
	assert_float_equal(p.some_s, 5.314421, 1e-9);
	/* The cgroup is there, its memory.pressure is not (this tree has no memory controller). */
	assert_int_equal(cgroup_read_pressure(&r, &d, "memory", &p), -ENODATA);

	/* Only cpuacct in v1 (no cpu): Coroot reads the v2 cpu.stat, without throttling. */
	assert_int_equal(cgroup_dirs_parse("4:cpuacct:/s/x\n0::/s/x\n", &d), 0);
	assert_int_equal(cgroup_read_cpu(&r, &d, &c), 0);
	assert_float_equal(c.usage_s, 1.618920, 1e-9);
	assert_float_equal(c.limit_cores, 0, 0);
	/* No v1 memory, and the v2 cgroup has no memory.stat: nothing to read. */
	assert_int_equal(cgroup_read_memory(&r, &d, &m), -ENODATA);

	/* Gone: the cgroup directory is not there. */
	assert_int_equal(cgroup_dirs_parse("5:cpu:/s/y\n4:cpuacct:/s/y\n3:memory:/s/y\n0::/s/y\n", &d),
			 0);
	assert_int_equal(cgroup_read_cpu(&r, &d, &c), -ENOENT);
	assert_int_equal(cgroup_read_memory(&r, &d, &m), -ENOENT);
	assert_int_equal(cgroup_read_pressure(&r, &d, "io", &p), -ENOENT);
	/* All at the root: nothing. */
	assert_int_equal(cgroup_dirs_parse("5:cpu:/\n0::/\n", &d), 0);
	assert_int_equal(cgroup_read_cpu(&r, &d, &c), -ENODATA);
	assert_int_equal(cgroup_read_memory(&r, &d, &m), -ENODATA);
	/* Garbage in a file. */
	put("memory/s/z/memory.stat", "total_rss what\n", false);
	put("memory/s/z/memory.limit_in_bytes", "1\n", false);
	assert_int_equal(cgroup_dirs_parse("3:memory:/s/z\n", &d), 0);
	assert_int_equal(cgroup_read_memory(&r, &d, &m), -EINVAL);
}

static void test_read_pure_v2(void **state)
{
	struct cgroup_roots r;
	struct cgroup_dirs d;
	struct cgroup_cpu c;
	struct cgroup_memory m;

	cgroup_roots_find(root, &r);
	put("kubepods.slice/a/cpu.stat", DATA "v2/cpu.stat", true);
	put("kubepods.slice/a/cpu.max", DATA "v2/cpu.max", true);
	put("kubepods.slice/a/memory.stat", DATA "v2/memory.stat", true);
	put("kubepods.slice/a/memory.max", DATA "v2/memory.max", true);
	assert_int_equal(cgroup_dirs_parse("0::/kubepods.slice/a\n", &d), 0);
	assert_int_equal(cgroup_read_cpu(&r, &d, &c), 0);
	assert_float_equal(c.limit_cores, 0.5, 1e-12);
	assert_float_equal(c.throttled_s, 2.5, 1e-9);
	assert_int_equal(cgroup_read_memory(&r, &d, &m), 0);
	assert_int_equal(m.rss, 104857600ull + 10485760ull);
	assert_int_equal(m.limit, 536870912ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dirs_hybrid),
		cmocka_unit_test(test_dirs_v2_and_roots),
		cmocka_unit_test(test_cpu_v1),
		cmocka_unit_test(test_cpu_v2),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_pressure),
		cmocka_unit_test_setup_teardown(test_read_hybrid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_pure_v2, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
