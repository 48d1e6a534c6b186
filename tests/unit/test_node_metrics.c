/*
 * The node collector (src/node/metrics.c) over a /proc of its own: the
 * captured files (tests/unit/data/node/) give Coroot's families with the
 * right units, and files that vanish or go bad cost a count in
 * nodescope_node_read_errors_total{source}, their families showing nothing
 * at that scrape, and come back when the files do.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics/registry.h"
#include "node/metrics.h"
#include "util/strbuf.h"

#define DATA "tests/unit/data/node/"

struct fixture {
	char dir[64];
	struct metric_registry *r;
	struct node_metrics *n;
	struct strbuf out;
};

static void sh(const char *fmt, const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), fmt, dir, dir);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	strcpy(f->dir, "/tmp/ns-nodeproc-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	sh("cp " DATA "stat " DATA "meminfo " DATA "uptime " DATA "diskstats %s/", f->dir);
	f->r = metric_registry_new();
	struct node_metrics_opts o = {
		.registry = f->r,
		.proc_root = f->dir,
		.dmi_root = f->dir, /* no DMI there */
		.cloud = { .region = "r1", .instance_type = "t3.small" },
		.no_net = true,
	};
	assert_int_equal(node_metrics_new(&o, &f->n), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	metric_registry_free(f->r);
	node_metrics_free(f->n);
	strbuf_free(&f->out);
	sh("rm -rf %s", f->dir);
	free(f);
	return 0;
}

/* One scrape's exposition. */
static const char *scrape(struct fixture *f)
{
	strbuf_reset(&f->out);
	metric_registry_write(f->r, &f->out);
	return strbuf_str(&f->out);
}

static void has(const char *text, const char *line)
{
	if (!strstr(text, line))
		fail_msg("no line %s in:\n%s", line, text);
}

/* A series line with a value the registry prints as %.17g. */
static void has_value(const char *text, const char *series, double v)
{
	char line[256];
	snprintf(line, sizeof(line), "%s %.17g\n", series, v);
	has(text, line);
}

static void lacks(const char *text, const char *what)
{
	if (strstr(text, what))
		fail_msg("%s in:\n%s", what, text);
}

static void put(struct fixture *f, const char *name, const char *text)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void test_captured_files(void **state)
{
	struct fixture *f = *state;
	const char *t = scrape(f);
	double hz = (double)sysconf(_SC_CLK_TCK);
	char line[128];

	/* Ticks in the kernel's USER_HZ, whatever it is. */
	snprintf(line, sizeof(line), "node_resources_cpu_usage_seconds_total{mode=\"idle\"} %.17g\n",
		 1444460 / hz);
	has(t, line);
	has(t, "node_resources_cpu_usage_seconds_total{mode=\"irq\"} 0\n");
	has(t, "# TYPE node_resources_cpu_usage_seconds_total counter\n");
	has(t, "node_resources_cpu_logical_cores 2\n");
	has_value(t, "node_uptime_seconds", 20833.82);
	/* KiB as 1024 bytes. */
	has(t, "node_resources_memory_total_bytes 25276071936\n");
	has(t, "node_resources_memory_available_bytes 23894876160\n");
	has(t, "node_resources_memory_cached_bytes 2212937728\n");
	/* vda only; sectors of 512 bytes, milliseconds. */
	has(t, "node_resources_disk_reads_total{device=\"vda\"} 1615930\n");
	has(t, "node_resources_disk_read_bytes_total{device=\"vda\"} 26826683392\n");
	has(t, "node_resources_disk_written_bytes_total{device=\"vda\"} 57741905920\n");
	has_value(t, "node_resources_disk_write_time_seconds_total{device=\"vda\"}", 1178.554);
	has_value(t, "node_resources_disk_io_time_seconds_total{device=\"vda\"}", 436.452);
	lacks(t, "loop0");
	lacks(t, "zram0");
	has(t, "node_cloud_info{provider=\"\",account_id=\"\",instance_id=\"\","
	       "instance_type=\"t3.small\",instance_life_cycle=\"\",region=\"r1\","
	       "availability_zone=\"\",availability_zone_id=\"\",local_ipv4=\"\",public_ipv4=\"\"} 1\n");
	has(t, "node_info{hostname=\"");
	has(t, "nodescope_node_read_errors_total{source=\"stat\"} 0\n");
	has(t, "nodescope_node_read_errors_total{source=\"netlink\"} 0\n");
}

static void test_files_gone_and_back(void **state)
{
	struct fixture *f = *state;
	char path[128];

	for (const char *const *name = (const char *const[]){ "stat", "meminfo", "uptime",
							      "diskstats", NULL };
	     *name; name++) {
		snprintf(path, sizeof(path), "%s/%s", f->dir, *name);
		assert_int_equal(unlink(path), 0);
	}
	const char *t = scrape(f);
	lacks(t, "node_resources_cpu_usage_seconds_total{");
	lacks(t, "\nnode_resources_cpu_logical_cores ");
	lacks(t, "\nnode_resources_memory_total_bytes ");
	lacks(t, "\nnode_uptime_seconds ");
	lacks(t, "node_resources_disk_reads_total{");
	has(t, "nodescope_node_read_errors_total{source=\"stat\"} 1\n");
	has(t, "nodescope_node_read_errors_total{source=\"meminfo\"} 1\n");
	has(t, "nodescope_node_read_errors_total{source=\"uptime\"} 1\n");
	has(t, "nodescope_node_read_errors_total{source=\"diskstats\"} 1\n");
	has(t, "# TYPE node_resources_cpu_usage_seconds_total counter\n");

	sh("cp " DATA "stat " DATA "meminfo " DATA "uptime " DATA "diskstats %s/", f->dir);
	t = scrape(f);
	has(t, "node_resources_cpu_logical_cores 2\n");
	has(t, "node_resources_disk_reads_total{device=\"vda\"} 1615930\n");
	has(t, "nodescope_node_read_errors_total{source=\"stat\"} 1\n");
}

static void test_malformed(void **state)
{
	struct fixture *f = *state;

	put(f, "stat", "cpu 1 2 3\ncpu0 1 2 3\n");
	put(f, "meminfo", "MemTotal: lots\n");
	put(f, "uptime", "garbage\n");
	/* One bad line among good ones: the good ones stay. */
	put(f, "diskstats", "8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n8 16 sdb 1 2\n"
			    "8 32 sdc 9 2 3 4 5 6 7 8 9 10 11\n");
	const char *t = scrape(f);
	lacks(t, "node_resources_cpu_usage_seconds_total{");
	lacks(t, "\nnode_resources_memory_total_bytes ");
	lacks(t, "\nnode_uptime_seconds ");
	has(t, "node_resources_disk_reads_total{device=\"sda\"} 1\n");
	has(t, "node_resources_disk_reads_total{device=\"sdc\"} 9\n");
	lacks(t, "device=\"sdb\"");
	has(t, "nodescope_node_read_errors_total{source=\"stat\"} 1\n");
	has(t, "nodescope_node_read_errors_total{source=\"meminfo\"} 1\n");
	has(t, "nodescope_node_read_errors_total{source=\"uptime\"} 1\n");
	has(t, "nodescope_node_read_errors_total{source=\"diskstats\"} 1\n");

	/* A disk gone from the file is gone from the exposition. */
	put(f, "diskstats", "8 32 sdc 10 2 3 4 5 6 7 8 9 10 11\n");
	t = scrape(f);
	lacks(t, "device=\"sda\"");
	has(t, "node_resources_disk_reads_total{device=\"sdc\"} 10\n");
	has(t, "nodescope_node_read_errors_total{source=\"diskstats\"} 1\n");
	/* An old kernel's meminfo: no MemAvailable series rather than a 0. */
	put(f, "meminfo", "MemTotal: 2 kB\nMemFree: 1 kB\nCached: 1 kB\n");
	t = scrape(f);
	has(t, "node_resources_memory_total_bytes 2048\n");
	lacks(t, "\nnode_resources_memory_available_bytes ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_captured_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_gone_and_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
