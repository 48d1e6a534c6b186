/*
 * container_info's systemd labels from unit files: the key reader on
 * hand-written unit texts, and the reader on a fake host root laid out as
 * systemd's unit directories (unit files, drop-ins, triggers by name and by
 * Unit=).
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
#include <sys/stat.h>
#include <unistd.h>

#include "containers/filter.h"
#include "containers/systemd_unit.h"
#include "data_file.h"

static char root[] = "/tmp/nodescope-unit-systemd-XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	test_file_put(path, text);
}

static void test_unit_value(void **state)
{
	char v[64];
	const char *text = "# Type=forking\n"
			   "[Unit]\nType=notthis\n"
			   "[Service]\n  Type = notify  \nExecStart=/bin/x \\\n  Type=continued\n"
			   ";Type=commented\n[Install]\nType=other\n";
	assert_int_equal(containers_unit_value(text, "Service", "Type", v, sizeof(v)), 1);
	assert_string_equal(v, "notify");
	assert_int_equal(containers_unit_value(text, "Service", "BusName", v, sizeof(v)), 0);
	assert_int_equal(containers_unit_value("[Service]\nType=oneshot\nType=\n", "Service", "Type",
					       v, sizeof(v)), 0); /* an empty assignment resets */
	assert_int_equal(containers_unit_value("[Service]\r\nType=dbus\r\n", "Service", "Type", v,
					       sizeof(v)), 1);
	assert_string_equal(v, "dbus");
	assert_int_equal(containers_unit_value("", "Service", "Type", v, sizeof(v)), 0);
	assert_int_equal(containers_unit_value("[Service]\nTypeX=1\n", "Service", "Type", v,
					       sizeof(v)), 0);
	char small[4];
	assert_int_equal(containers_unit_value("[Service]\nType=forking\n", "Service", "Type",
					       small, sizeof(small)), 1);
	assert_string_equal(small, "for");
}

static void test_read_from_unit_dirs(void **state)
{
	struct containers_systemd sd;

	assert_non_null(mkdtemp(root));
	put("/lib/systemd/system/backup.service", "[Service]\nType=oneshot\nExecStart=/bin/true\n");
	put("/lib/systemd/system/backup.timer", "[Timer]\nOnCalendar=daily\n");
	put("/lib/systemd/system/web.service", "[Service]\nExecStart=/bin/web\n");
	put("/etc/systemd/system/web.service.d/10-type.conf", "[Service]\nType=notify\n");
	put("/lib/systemd/system/bus.service", "[Service]\nBusName=org.x\n");
	put("/lib/systemd/system/job.service", "[Service]\nType=simple\n");
	put("/run/systemd/system/nightly.timer", "[Timer]\nUnit=job.service\n");
	put("/lib/systemd/system/other.service", "[Service]\n");
	put("/lib/systemd/system/other.socket", "[Socket]\nUnit=web.service\n"); /* not other's */
	put("/etc/systemd/system/masked.service", "[Service]\nType=forking\n");
	put("/lib/systemd/system/masked.service", "[Service]\nType=oneshot\n");

	assert_int_equal(containers_systemd_read(root, "backup.service", &sd), 0);
	assert_string_equal(sd.type, "oneshot");
	assert_string_equal(sd.triggered_by, "backup.timer");
	assert_int_equal(containers_systemd_read(root, "web.service", &sd), 0);
	assert_string_equal(sd.type, "notify"); /* the drop-in wins */
	assert_string_equal(sd.triggered_by, "other.socket");
	assert_int_equal(containers_systemd_read(root, "bus.service", &sd), 0);
	assert_string_equal(sd.type, "dbus");
	assert_string_equal(sd.triggered_by, "");
	assert_int_equal(containers_systemd_read(root, "job.service", &sd), 0);
	assert_string_equal(sd.triggered_by, "nightly.timer");
	assert_int_equal(containers_systemd_read(root, "other.service", &sd), 0);
	assert_string_equal(sd.type, "simple");
	assert_string_equal(sd.triggered_by, ""); /* its socket triggers web.service */
	assert_int_equal(containers_systemd_read(root, "masked.service", &sd), 0);
	assert_string_equal(sd.type, "forking"); /* /etc before /lib */
	assert_int_equal(containers_systemd_read(root, "gone.service", &sd), -ENOENT);
	assert_int_equal(containers_systemd_read(root, "backup.timer", &sd), -ENOENT);

	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static void test_unit_of_container_id(void **state)
{
	char u[64];
	containers_systemd_unit_of("/system.slice/nginx.service", u, sizeof(u));
	assert_string_equal(u, "nginx.service");
	/* the first .service element, as Coroot's split finds it */
	containers_systemd_unit_of("/system.slice/a.service/sub.service", u, sizeof(u));
	assert_string_equal(u, "a.service");
	containers_systemd_unit_of("/system.slice/foo.slice/bar", u, sizeof(u));
	assert_string_equal(u, "bar");
	containers_systemd_unit_of("/", u, sizeof(u));
	assert_string_equal(u, "");
}

/* Coroot's IsSystemService on what the unit files say. */
static void test_system_service_rule(void **state)
{
	const struct containers_systemd none = { "", "" }, oneshot = { "oneshot", "" },
					 dbus = { "dbus", "" }, timer = { "simple", "x.timer" },
					 socket = { "simple", "x.socket" }, notify = { "notify", "" };
	assert_true(containers_systemd_system_service("x.service", &oneshot));
	assert_true(containers_systemd_system_service("x.service", &dbus));
	assert_true(containers_systemd_system_service("x.service", &timer));
	assert_false(containers_systemd_system_service("x.service", &socket));
	assert_false(containers_systemd_system_service("nginx.service", &notify));
	const char *const system[] = { "systemd-journald.service", "dbus.service",
				       "dbus-broker.service", "getty@tty1.service",
				       "serial-getty@ttyS0.service", "system-getty.slice",
				       "snapd.service", "packagekit.service",
				       "unattended-upgrades.service", "multipathd.service",
				       "qemu-guest-agent.service", "irqbalance.service",
				       "networkd-dispatcher.service", "rpcbind.service" };
	for (size_t i = 0; i < sizeof(system) / sizeof(system[0]); i++)
		assert_true(containers_systemd_system_service(system[i], &none));
	const char *const others[] = { "nginx.service", "my-systemd-thing.service",
				       "postgresql.service", "docker.service" };
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		assert_false(containers_systemd_system_service(others[i], &none));
}

/* --skip-systemd-system-services through the filter, from unit files below a root. */
static void test_filter_skips_system_services(void **state)
{
	struct containers_filter *on, *off;
	char why[128];
	struct containers_filter_opts o = { .skip_system_services = true, .root = root };

	strcpy(root, "/tmp/nodescope-unit-systemd-XXXXXX"); /* another test made one before */
	assert_non_null(mkdtemp(root));
	put("/lib/systemd/system/backup.service", "[Service]\nType=oneshot\nExecStart=/bin/true\n");
	put("/lib/systemd/system/report.service", "[Service]\nExecStart=/bin/report\n");
	put("/lib/systemd/system/report.timer", "[Timer]\nOnCalendar=daily\n");
	put("/lib/systemd/system/bus.service", "[Service]\nBusName=org.x\n");
	put("/lib/systemd/system/web.service", "[Service]\nType=notify\n");
	put("/etc/systemd/system/web.service.d/10-type.conf", "[Service]\nType=oneshot\n");
	put("/lib/systemd/system/app.service", "[Service]\nType=simple\n");
	assert_int_equal(containers_filter_new(&o, &on, why, sizeof(why)), 0);
	o.skip_system_services = false;
	assert_int_equal(containers_filter_new(&o, &off, why, sizeof(why)), 0);

	const char *const skipped[] = { "/system.slice/backup.service", "/system.slice/report.service",
					"/system.slice/bus.service", "/system.slice/web.service",
					"/system.slice/systemd-udevd.service" /* no unit file */ };
	for (size_t i = 0; i < sizeof(skipped) / sizeof(skipped[0]); i++) {
		assert_true(containers_filter_skips(on, skipped[i]));
		assert_false(containers_filter_skips(off, skipped[i]));
	}
	const char *const kept[] = { "/system.slice/app.service", "/system.slice/nginx.service",
				     "/docker/systemd-x", "/k8s/ns/dbus/app", "/" };
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		assert_false(containers_filter_skips(on, kept[i]));
	assert_false(containers_filter_skips(NULL, "/system.slice/systemd-udevd.service"));
	containers_filter_free(on);
	containers_filter_free(off);

	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* The allow and deny lists: regular expressions anywhere in the id, one a line. */
static void test_filter_lists(void **state)
{
	struct containers_filter *f;
	char why[128];
	const char *allow[] = { "^/k8s/prod/", "/docker/web-[0-9]+$\n(^|/)api\r\n" };
	const char *deny[] = { "canary" };
	struct containers_filter_opts o = { allow, 2, deny, 1, false, "" };

	assert_int_equal(containers_filter_new(&o, &f, why, sizeof(why)), 0);
	assert_false(containers_filter_skips(f, "/k8s/prod/shop/web"));
	assert_false(containers_filter_skips(f, "/docker/web-12"));
	assert_false(containers_filter_skips(f, "/podman/api"));
	assert_true(containers_filter_skips(f, "/k8s/dev/shop/web"));	   /* no allow pattern */
	assert_true(containers_filter_skips(f, "/docker/web-12x"));
	assert_true(containers_filter_skips(f, "/k8s/prod/shop/canary")); /* denied first */
	containers_filter_free(f);

	/* Without an allowlist everything not denied is kept; an empty pattern matches all. */
	const char *deny2[] = { "" };
	struct containers_filter_opts o2 = { NULL, 0, deny2, 1, false, "" };
	assert_int_equal(containers_filter_new(&o2, &f, why, sizeof(why)), 0);
	assert_true(containers_filter_skips(f, "/docker/x"));
	containers_filter_free(f);

	assert_int_equal(containers_filter_check("ok\n(bad", why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "'(bad'"));
	assert_int_equal(containers_filter_check("a\nb\n", why, sizeof(why)), 0);
	const char *bad[] = { "good", "x[" };
	struct containers_filter_opts o3 = { bad, 2, NULL, 0, false, "" };
	assert_int_equal(containers_filter_new(&o3, &f, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "'x['"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit_value),
		cmocka_unit_test(test_read_from_unit_dirs),
		cmocka_unit_test(test_unit_of_container_id),
		cmocka_unit_test(test_system_service_rule),
		cmocka_unit_test(test_filter_skips_system_services),
		cmocka_unit_test(test_filter_lists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
