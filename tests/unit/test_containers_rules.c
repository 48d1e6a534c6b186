/*
 * Container naming, step one: /proc/PID/cgroup text -> cgroup path -> kind,
 * runtime id and (where no metadata is needed) container_id. Every cgroup
 * form of coroot-compat.md section A, the forms of Coroot's own fixtures (with
 * ids of our own), and the real files captured on the build machine
 * (tests/unit/data/containers/, see capture.sh there).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "data_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "containers/cgroup_path.h"
#include "containers/rules.h"

#define DATA "tests/unit/data/containers/"

/* Three 64-character ids (the rules want [a-z0-9]{64}). */
#define ID_A "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
#define ID_B "f00dfeed0123456789abcdef0123456789abcdef0123456789abcdef01234567"
#define ID_C "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"

enum { D = CONTAINERS_DOCKER, CRIO = CONTAINERS_CRIO, CTRD = CONTAINERS_CONTAINERD,
       POD = CONTAINERS_PODMAN, SB = CONTAINERS_SANDBOX, SYS = CONTAINERS_SYSTEMD,
       TAL = CONTAINERS_TALOS, LXC = CONTAINERS_LXC, MON = CONTAINERS_CONMON,
       ST = CONTAINERS_STANDALONE, UNK = CONTAINERS_UNKNOWN };

/* One cgroup path and what the rules make of it ("=" as id: the path itself). */
struct path_case {
	const char *path;
	int kind;
	const char *runtime_id;
	const char *id;
};

static const struct path_case path_cases[] = {
	/* docker */
	{ "/docker/" ID_A, D, ID_A, "" },
	{ "/system.slice/docker-" ID_A ".scope", D, ID_A, "" },
	{ "/docker/not-an-id", UNK, "", "=" },	/* Coroot: "invalid docker cgroup" */
	{ "/system.slice/docker-abc.scope", UNK, "", "=" },
	{ "/docker/" ID_A "9", D, ID_A, "" }, /* a longer run: its first 64 */
	/* kubepods, cgroupfs and systemd drivers */
	{ "/kubepods/burstable/pod6a4ce4a0-0000-11ea-b2a7-0cc47ac5979e/" ID_A, D, ID_A, "" },
	{ "/kubepods/besteffort/pod0d08203e-255a-11e9-8cd9-0007cb0b2cc8/" ID_A "/kube-proxy", D,
	  ID_A, "" },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod8712f785_1a3e.slice/docker-" ID_A
	  ".scope", D, ID_A, "" },
	{ "/kubepods/poda48c12e8-255a-11e9-8cd9-0007cb0b2cc8/crio-" ID_B, CRIO, ID_B, "" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod2942c55e.slice/crio-" ID_B
	  ".scope", CRIO, ID_B, "" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podea19ff5d.slice/crio-" ID_B
	  ".scope/container", CRIO, ID_B, "" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podea19ff5d.slice/crio-conmon-" ID_B
	  ".scope", MON, "", "=" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod3e61c214.slice/cri-containerd-" ID_C,
	  CTRD, ID_C, "" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod3e61c214.slice/cri-containerd-" ID_C
	  ".scope", CTRD, ID_C, "" },
	{ "/system.slice/containerd.service/kubepods-burstable-pod4ed02c0b_0df8.slice:cri-containerd:" ID_C,
	  CTRD, ID_C, "" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod3e61c214.slice", SB, "", "=" },
	{ "/kubepods/burstable/pod6a4ce4a0-0000-11ea-b2a7-0cc47ac5979e", SB, "", "=" },
	/* systemd services under the system slices */
	{ "/system.slice/ssh.service", SYS, "", "/system.slice/ssh.service" },
	{ "/system.slice/system-serial\\x2dgetty.slice", SYS, "", "/system.slice/system-serial-getty.slice" },
	{ "/system.slice/system-postgresql.slice/postgresql@9.4-main.service", SYS, "",
	  "/system.slice/system-postgresql.slice" },
	{ "/runtime.slice/kubelet.service", SYS, "", "/runtime.slice/kubelet.service" },
	{ "/reserved.slice/kubelet.service", SYS, "", "/reserved.slice/kubelet.service" },
	{ "/kube.slice/kubelet.service", SYS, "", "/kube.slice/kubelet.service" },
	{ "/azure.slice/walinuxagent.service", SYS, "", "/azure.slice/walinuxagent.service" },
	{ "/podruntime.slice/kubelet.service", SYS, "", "/podruntime.slice/kubelet.service" },
	{ "/system.slice/run-ra2ddf9594bbf4a1986439b594f89eb0f.scope", ST, "", "=" },
	{ "/system.slice/cri-containerd-" ID_C ".scope", ST, "", "=" },
	{ "/system.slice/crio-conmon-" ID_B ".scope", MON, "", "=" },
	{ "/system.slice", UNK, "", "=" },
	/* talos */
	{ "/init", TAL, "", "/talos/init" },
	{ "/podruntime/kubelet", TAL, "", "/talos/kubelet" },
	{ "/podruntime/runtime", TAL, "", "/talos/runtime" },
	{ "/system/dashboard", TAL, "", "/talos/dashboard" },
	/* lxc: detected, ignored by Coroot */
	{ "/lxc/mysql-primary-db", LXC, "", "/lxc/mysql-primary-db" },
	{ "/lxc.payload.first", LXC, "", "/lxc/first" },
	{ "/lxc", UNK, "", "=" },
	{ "/lxc.monitor.first", ST, "", "=" },
	/* podman: machine.slice, rootless user.slice, --cgroups=split, cgroupfs */
	{ "/machine.slice/libpod-" ID_A ".scope", POD, ID_A, "" },
	{ "/machine.slice/libpod-conmon-" ID_A ".scope", MON, "", "=" },
	{ "/machine.slice/qemu-1-fedora.scope", ST, "", "=" },
	{ "/user.slice/user-1000.slice/user@1000.service/libpod-" ID_B ".scope", POD, ID_B, "" },
	{ "/user.slice/user-1000.slice/user@1000.service/libpod-conmon-" ID_B ".scope", MON, "", "=" },
	{ "/user.slice/user-1000.slice/user@1000.service/libpod-" ID_B ".scope/x", ST, "", "=" },
	{ "/system.slice/myapp.service/libpod-payload-" ID_C, POD, ID_C, "" },
	{ "/system.slice/myapp.service/libpod-conmon-" ID_C, MON, "", "=" },
	{ "/libpod_parent/libpod-" ID_A, POD, ID_A, "" },
	{ "/libpod_parent/conmon", MON, "", "=" },
	/* standalone: Coroot ignores them */
	{ "/user.slice/user-1000.slice/session-1.scope", ST, "", "=" },
	{ "/init.scope", ST, "", "=" },
	{ "/systemd/system.slice", ST, "", "=" },
	{ "/", ST, "", "/" },
	{ "", ST, "", "/" },
	{ "/mycg", ST, "", "=" },
	/* unknown: named by their path */
	{ "/process_api/32967932d3570ab7a8e82434e216c5a8", UNK, "", "=" },
	{ "/a/b/c", UNK, "", "=" },
	{ "/machine/qemu", UNK, "", "=" },
};

static void check_class(const struct containers_class *c, const char *path, int kind,
			const char *runtime_id, const char *id)
{
	if ((int)c->kind != kind)
		fail_msg("%s: kind %s (rule \"%s\"), want %s", path,
			 containers_kind_info(c->kind)->name, c->rule,
			 containers_kind_info(kind)->name);
	assert_string_equal(c->runtime_id, runtime_id);
	assert_string_equal(c->id, !strcmp(id, "=") ? path : id);
	/* the kinds that need metadata always carry an id to read it by */
	assert_int_equal(containers_kind_info(c->kind)->needs_metadata,
			 strlen(c->runtime_id) == CONTAINERS_RUNTIME_ID_LEN);
}

static void test_paths(void **state)
{
	for (size_t i = 0; i < sizeof(path_cases) / sizeof(path_cases[0]); i++) {
		const struct path_case *t = &path_cases[i];
		struct containers_class c;

		assert_int_equal(containers_classify_path(t->path, &c), 0);
		check_class(&c, t->path, t->kind, t->runtime_id, t->id);
		assert_string_equal(c.cgroup, t->path);
	}
}

/* Whole /proc/PID/cgroup texts: which hierarchy's path is picked, then its kind. */
struct text_case {
	const char *name, *text, *base;
	const char *path; /* the picked cgroup path */
	int kind;
	const char *runtime_id;
};

static const struct text_case text_cases[] = {
	{ "v1 systemd service",
	  "11:perf_event:/\n10:devices:/system.slice/docker.service\n9:freezer:/\n8:cpuset:/\n"
	  "7:cpu,cpuacct:/system.slice/docker.service\n6:blkio:/system.slice/docker.service\n"
	  "5:memory:/system.slice/docker.service\n4:hugetlb:/\n3:net_cls,net_prio:/\n"
	  "2:pids:/system.slice/docker.service\n1:name=systemd:/system.slice/docker.service\n",
	  "", "/system.slice/docker.service", SYS, "" },
	{ "v1 docker",
	  "7:cpu,cpuacct:/docker/" ID_A "\n5:memory:/docker/" ID_A "\n1:name=systemd:/docker/" ID_A,
	  "", "/docker/" ID_A, D, ID_A },
	{ "v1 kubepods",
	  "3:cpu,cpuacct:/kubepods/burstable/pod6a4ce4a0/" ID_A "\n10:memory:/kubepods/burstable/pod6a4ce4a0/" ID_A "\n",
	  "", "/kubepods/burstable/pod6a4ce4a0/" ID_A, D, ID_A },
	{ "v2 kubepods.slice",
	  "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod8712f785.slice/docker-" ID_A ".scope\n",
	  "", "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod8712f785.slice/docker-" ID_A ".scope",
	  D, ID_A },
	{ "v1 kubepods wins over a v2 path (hybrid kubelet)",
	  "12:memory:/kubepods/burstable/pod8833712d/" ID_B "\n2:cpu,cpuacct:/kubepods/burstable/pod8833712d/" ID_B
	  "\n1:name=systemd:/kubepods/burstable/pod8833712d/" ID_B "\n0::/reserved.slice/containerd.service\n",
	  "", "/kubepods/burstable/pod8833712d/" ID_B, D, ID_B },
	{ "memory under kubepods wins when cpu is not",
	  "4:memory:/kubepods/pod1/" ID_B "\n2:cpu,cpuacct:/system.slice/x.service\n0::/y.slice/z\n", "",
	  "/kubepods/pod1/" ID_B, D, ID_B },
	{ "hybrid: a v2 path wins over v1 cpu",
	  "7:cpu,cpuacct:/system.slice/a.service\n0::/system.slice/b.service\n", "",
	  "/system.slice/b.service", SYS, "" },
	{ "hybrid: v2 at the root, v1 cpu then memory",
	  "0::/\n5:memory:/system.slice/m.service\n7:cpu:/system.slice/c.service\n", "",
	  "/system.slice/c.service", SYS, "" },
	{ "v1 and v2 the same service",
	  "12:perf_event:/\n11:devices:/system.slice/ssh.service\n6:memory:/system.slice/ssh.service\n"
	  "5:pids:/system.slice/ssh.service\n4:cpu,cpuacct:/\n1:name=systemd:/system.slice/ssh.service\n"
	  "0::/system.slice/ssh.service\n", "", "/system.slice/ssh.service", SYS, "" },
	{ "init.scope counts as unset, name=systemd last",
	  "10:blkio:/init.scope\n8:memory:/init.scope\n7:pids:/init.scope\n2:cpu,cpuacct:/\n"
	  "1:name=systemd:/system.slice/springboot.service\n", "",
	  "/system.slice/springboot.service", SYS, "" },
	{ "pids is not a hierarchy Coroot looks at",
	  "11:pids:/system.slice/a.service\n5:cpu,cpuacct:/\n1:name=systemd:/system.slice/b.service\n", "",
	  "/system.slice/b.service", SYS, "" },
	{ "devices is not either",
	  "2:devices:/system.slice/system-getty.slice\n1:name=systemd:/system.slice/system-getty.slice/getty@tty1.service\n",
	  "", "/system.slice/system-getty.slice/getty@tty1.service", SYS, "" },
	{ "talos", "0::/podruntime/runtime\n", "", "/podruntime/runtime", TAL, "" },
	{ "v2 docker, v1 systemd at the root",
	  "1:name=systemd:/\n0::/system.slice/docker-" ID_C ".scope\n", "",
	  "/system.slice/docker-" ID_C ".scope", D, ID_C },
	{ "lxc payload cut to its top",
	  "0::/lxc.payload.first/system.slice/systemd-logind.service\n", "", "/lxc.payload.first", LXC,
	  "" },
	{ "everything at the root", "1:name=systemd:/\n0::/\n", "", "", ST, "" },
	{ "path holding colons",
	  "0::/system.slice/containerd.service/kubepods-pod4ed02c0b.slice:cri-containerd:" ID_C "\n", "",
	  "/system.slice/containerd.service/kubepods-pod4ed02c0b.slice:cri-containerd:" ID_C, CTRD, ID_C },
	{ "CRLF-free trailing garbage lines are skipped", "junk\n0::/docker/" ID_A "\nmore junk", "",
	  "/docker/" ID_A, D, ID_A },
	/* the agent in its own cgroup namespace: paths relative to its cgroup */
	{ "base: a path outside the agent's namespace",
	  "0::/../../../../system.slice/docker-" ID_C ".scope",
	  "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podc83d0428.slice/docker-" ID_A ".scope",
	  "/system.slice/docker-" ID_C ".scope", D, ID_C },
	{ "base: the agent's own cgroup", "0::/\n",
	  "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podc83d0428.slice/docker-" ID_A ".scope",
	  "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podc83d0428.slice/docker-" ID_A ".scope",
	  D, ID_A },
	{ "base: a sibling", "0::/../other", "/docker/" ID_A, "/docker/other", UNK, "" },
	{ "base: a child", "0::/sub", "/system.slice/x.service", "/system.slice/x.service/sub", SYS, "" },
};

static void test_texts(void **state)
{
	for (size_t i = 0; i < sizeof(text_cases) / sizeof(text_cases[0]); i++) {
		const struct text_case *t = &text_cases[i];
		struct containers_class c;
		char path[CONTAINERS_PATH_MAX];

		assert_int_equal(containers_cgroup_path(t->text, t->base, path, sizeof(path)), 0);
		if (strcmp(path, t->path))
			fail_msg("%s: picked \"%s\", want \"%s\"", t->name, path, t->path);
		assert_int_equal(containers_classify(t->text, t->base, &c), 0);
		if ((int)c.kind != t->kind)
			fail_msg("%s: kind %s", t->name, containers_kind_info(c.kind)->name);
		assert_string_equal(c.runtime_id, t->runtime_id);
		assert_string_equal(c.cgroup, t->path);
	}
}

static void test_text_errors(void **state)
{
	struct containers_class c;
	char small[8], big[3 * CONTAINERS_PATH_MAX];

	assert_int_equal(containers_classify("", "", &c), -EINVAL);
	assert_int_equal(containers_classify("no colons here\nnor here", "", &c), -EINVAL);
	assert_int_equal(containers_classify("one:colon", "", &c), -EINVAL);
	/* paths no kernel writes: a relative base or path */
	assert_int_equal(containers_classify("0::/docker/x", "rel/base", &c), -EINVAL);
	assert_int_equal(containers_classify_path("docker/" ID_A, &c), -EINVAL);
	assert_int_equal(containers_classify("0::docker/x\n4:memory:/m/n\n", "", &c), 0);
	assert_string_equal(c.cgroup, "/m/n");
	assert_int_equal(containers_cgroup_path("0::/a/long/path", "", small, sizeof(small)),
			 -ENAMETOOLONG);
	/* a path longer than any buffer here */
	memcpy(big, "0::/", 4);
	memset(big + 4, 'a', sizeof(big) - 5);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(containers_classify(big, "", &c), -ENAMETOOLONG);
	assert_int_equal(containers_classify_path(big + 3, &c), -ENAMETOOLONG);
}

/* Go's path.Join: the base-path arithmetic. */
static void test_path_join(void **state)
{
	static const char *const cases[][3] = {
		{ "", "/a/b", "/a/b" },
		{ "/x/y", "/../../a", "/a" },
		{ "/x/y", "/../../../../a", "/a" },
		{ "/x", "/", "/x" },
		{ "", "", "" },
		{ "", "/", "/" },
		{ "/", "..", "/" },
		{ "/a", "b/./c//d/..", "/a/b/c" },
		{ "", "a/../../b", "../b" },
		{ "", "a/..", "." },
		{ "", ".", "." },
		{ "a", "b/", "a/b" },
		{ "//a//", "//b//", "/a/b" },
		{ "", "../../x/../y", "../../y" },
	};
	char out[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(containers_path_join(cases[i][0], cases[i][1], out, sizeof(out)), 0);
		if (strcmp(out, cases[i][2]))
			fail_msg("join(\"%s\", \"%s\") = \"%s\", want \"%s\"", cases[i][0], cases[i][1],
				 out, cases[i][2]);
	}
	assert_int_equal(containers_path_join("/abc", "def", out, 8), -ENAMETOOLONG);
	assert_int_equal(containers_path_join("/abc", "de", out, 8), 0);
}

static char *slurp_text(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), DATA "%s", name);
	return test_file_text(path);
}

static void trim(char *s)
{
	s[strcspn(s, "\n")] = '\0';
}

/*
 * The real files of the build machine: podman (cgroupfs manager) and its
 * monitor, a containerd task in a kubepods cgroup, a docker container, the
 * machine's own cgroup.
 */
static void test_captured(void **state)
{
	struct containers_class c;
	char id[80];

	snprintf(id, sizeof(id), "%s", slurp_text("podman.id"));
	trim(id);
	assert_int_equal(containers_classify(slurp_text("podman.cgroup"), "", &c), 0);
	assert_int_equal(c.kind, CONTAINERS_PODMAN);
	assert_string_equal(c.runtime_id, id);
	assert_string_equal(c.rule, "podman (cgroupfs)");

	assert_int_equal(containers_classify(slurp_text("podman-conmon.cgroup"), "", &c), 0);
	assert_int_equal(c.kind, CONTAINERS_CONMON);
	assert_string_equal(c.id, "/libpod_parent/conmon");

	snprintf(id, sizeof(id), "%s", slurp_text("containerd.id"));
	trim(id);
	assert_int_equal(containers_classify(slurp_text("containerd.cgroup"), "", &c), 0);
	/* a bare id under kubepods: Coroot says docker, and asks dockerd then containerd */
	assert_int_equal(c.kind, CONTAINERS_DOCKER);
	assert_string_equal(c.runtime_id, id);

	snprintf(id, sizeof(id), "%s", slurp_text("docker.id"));
	trim(id);
	assert_int_equal(containers_classify(slurp_text("docker.cgroup"), "", &c), 0);
	assert_int_equal(c.kind, CONTAINERS_DOCKER);
	assert_string_equal(c.runtime_id, id);
	assert_string_equal(c.rule, "docker");

	/* hybrid mode, only memory below the root: an unknown kind, named by its path */
	assert_int_equal(containers_classify(slurp_text("host-self.cgroup"), "", &c), 0);
	assert_int_equal(c.kind, CONTAINERS_UNKNOWN);
	assert_string_equal(c.id, "/process_api/32967932d3570ab7a8e82434e216c5a8");
}

/* Whatever this machine's /proc/self/cgroup says, it gets a kind and an id. */
static void test_self(void **state)
{
	char text[4096];
	int fd = open("/proc/self/cgroup", O_RDONLY);
	struct containers_class c;

	assert_true(fd >= 0);
	ssize_t n = read(fd, text, sizeof(text) - 1);
	close(fd);
	assert_true(n > 0);
	text[n] = '\0';
	assert_int_equal(containers_classify(text, "", &c), 0);
	assert_true(c.kind < CONTAINERS_KIND_COUNT);
	if (!containers_kind_info(c.kind)->needs_metadata)
		assert_true(c.id[0] == '/');
}

/* What is reported by default: containers, named or not; not what Coroot says is none. */
static void test_id_reported(void **state)
{
	static const char *const reported[] = {
		"/k8s/ns/pod/ctr", "/k8s-cronjob/ns/job/ctr", "/docker/web", "/system.slice/nginx.service",
		"/talos/init", "/lxc/web", "/process_api/68a7", "/kubepods/besteffort/pod1/"
		"0123456789012345678901234567890123456789012345678901234567890123",
	};
	static const char *const unreported[] = {
		"/", "", NULL, "/user.slice/user-0.slice/session-3.scope", "/init.scope",
		"/system.slice/cron-job.scope", "/machine.slice", "/kubepods/burstable/pod1",
		"/system.slice/crio-conmon-0123456789012345678901234567890123456789012345678901234567890123.scope",
		"/toplevel",
	};
	for (size_t i = 0; i < sizeof(reported) / sizeof(reported[0]); i++)
		if (!containers_id_reported(reported[i]))
			fail_msg("%s: not reported", reported[i]);
	for (size_t i = 0; i < sizeof(unreported) / sizeof(unreported[0]); i++)
		if (containers_id_reported(unreported[i]))
			fail_msg("%s: reported", unreported[i] ? unreported[i] : "NULL");
}

/* What a series may show: names, and ids of kinds that need none; not a runtime's cgroup path. */
static void test_id_named(void **state)
{
	static const char *const named[] = {
		"/k8s/ns/pod/ctr", "/docker/web", "/podman/web", "/system.slice/nginx.service", "/",
		"", NULL, "/lxc/web", "/kubepods/burstable/pod1",
	};
	static const char *const unnamed[] = {
		"/docker/0123456789012345678901234567890123456789012345678901234567890123",
		"/kubepods/besteffort/pod1/0123456789012345678901234567890123456789012345678901234567890123",
		"/system.slice/docker-0123456789012345678901234567890123456789012345678901234567890123.scope",
		"/libpod_parent/libpod-0123456789012345678901234567890123456789012345678901234567890123",
	};
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (!containers_id_named(named[i]))
			fail_msg("%s: not named", named[i] ? named[i] : "NULL");
	for (size_t i = 0; i < sizeof(unnamed) / sizeof(unnamed[0]); i++)
		if (containers_id_named(unnamed[i]))
			fail_msg("%s: named", unnamed[i]);
}

static void test_kind_info(void **state)
{
	for (int k = 0; k < CONTAINERS_KIND_COUNT; k++)
		assert_non_null(containers_kind_info(k)->name);
	assert_string_equal(containers_kind_info(CONTAINERS_CONTAINERD)->name, "cri-containerd");
	assert_string_equal(containers_kind_info((enum containers_kind)99)->name, "unknown");
	assert_true(containers_kind_info(CONTAINERS_STANDALONE)->coroot_ignores);
	assert_false(containers_kind_info(CONTAINERS_SYSTEMD)->coroot_ignores);
	assert_true(containers_kind_info(CONTAINERS_PODMAN)->needs_metadata);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),	     cmocka_unit_test(test_texts),
		cmocka_unit_test(test_text_errors),  cmocka_unit_test(test_path_join),
		cmocka_unit_test(test_captured),     cmocka_unit_test(test_self),
		cmocka_unit_test(test_kind_info), cmocka_unit_test(test_id_reported),
		cmocka_unit_test(test_id_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
