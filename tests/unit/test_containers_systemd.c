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

#include "containers/systemd_unit.h"

static char root[] = "/tmp/nodescope-unit-systemd-XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[512], cmd[600];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit_value),
		cmocka_unit_test(test_read_from_unit_dirs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
