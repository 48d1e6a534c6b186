#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node/identity.h"

/* A fake root with the given files (NULL text: absent). */
static void make_root(char *root, const char *machine_id, const char *dbus_id, const char *uuid)
{
	strcpy(root, "/tmp/ns-identity-XXXXXX");
	assert_non_null(mkdtemp(root));
	const struct { const char *dir, *file, *text; } files[] = {
		{ "/etc", "/etc/machine-id", machine_id },
		{ "/var/lib/dbus", "/var/lib/dbus/machine-id", dbus_id },
		{ "/sys/devices/virtual/dmi/id", "/sys/devices/virtual/dmi/id/product_uuid", uuid },
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (!files[i].text)
			continue;
		char p[512], cmd[600];
		snprintf(cmd, sizeof(cmd), "mkdir -p %s%s", root, files[i].dir);
		assert_int_equal(system(cmd), 0);
		snprintf(p, sizeof(p), "%s%s", root, files[i].file);
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fputs(files[i].text, f);
		fclose(f);
	}
}

static void remove_root(const char *root)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static void test_machine_id_first(void **state)
{
	char root[64];
	struct node_identity id;

	make_root(root, "3d1219c7c4c5404aaa1f6d2a48adfda4\n", "ffff\n",
		  "EC2A1B3C-0000-1111-2222-333344445555\n");
	node_identity_read(root, &id);
	assert_string_equal(id.machine_id, "3d1219c7c4c5404aaa1f6d2a48adfda4");
	assert_string_equal(id.system_uuid, "EC2A1B3C-0000-1111-2222-333344445555");
	remove_root(root);
}

static void test_dbus_then_dmi(void **state)
{
	char root[64];
	struct node_identity id;

	make_root(root, "\n", "abcd\n", NULL); /* an empty machine-id (first boot) */
	node_identity_read(root, &id);
	assert_string_equal(id.machine_id, "abcd");
	assert_string_equal(id.system_uuid, "");
	remove_root(root);

	make_root(root, NULL, NULL, "ec2a1b3c-0000-1111-2222-333344445555\n");
	node_identity_read(root, &id);
	assert_string_equal(id.machine_id, "ec2a1b3c000011112222333344445555");
	assert_string_equal(id.system_uuid, "ec2a1b3c-0000-1111-2222-333344445555");
	remove_root(root);
}

static void test_nothing_readable(void **state)
{
	char root[64];
	struct node_identity id;

	make_root(root, NULL, NULL, NULL);
	node_identity_read(root, &id);
	assert_string_equal(id.machine_id, "");
	assert_string_equal(id.system_uuid, "");
	remove_root(root);
}

static void test_clean(void **state)
{
	char out[8];

	node_identity_clean("  ab-cd \r\nzz", 1, out, sizeof(out));
	assert_string_equal(out, "abcd");
	node_identity_clean("0123456789", 0, out, sizeof(out)); /* cut to fit */
	assert_string_equal(out, "0123456");
	node_identity_clean("", 0, out, sizeof(out));
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_machine_id_first),
		cmocka_unit_test(test_dbus_then_dmi),
		cmocka_unit_test(test_nothing_readable),
		cmocka_unit_test(test_clean),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
