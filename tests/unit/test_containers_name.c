/*
 * Container naming, step two: class + runtime metadata -> container_id and
 * app_id (Coroot's calcId and ContainerIdToOtelServiceName), with metadata
 * built in the test; the parsers' own output is tested in
 * test_containers_runtime.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "containers/name.h"

#define ID_A "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"

/* 2026-12-01 12:00 UTC, and the minute count a CronJob pod of then carries */
#define NOW 1796126400LL
#define NOW_MINUTE "29935440"
#define DAY (24 * 3600LL)

static struct containers_class classify(const char *path)
{
	struct containers_class c;

	assert_int_equal(containers_classify_path(path, &c), 0);
	return c;
}

static void name_of(const char *path, const struct containers_meta *md, int64_t now,
		    const char *want_id, const char *want_app, enum containers_id_source want_src)
{
	struct containers_class c = classify(path);
	struct containers_name n;

	assert_int_equal(containers_name(&c, md, now, &n), 0);
	if (strcmp(n.id, want_id) || strcmp(n.app_id, want_app) || n.source != want_src)
		fail_msg("%s: id \"%s\" app \"%s\" source %d, want \"%s\" \"%s\" %d", path, n.id,
			 n.app_id, n.source, want_id, want_app, want_src);
}

static void meta_labels(struct containers_meta *md, const char *const *kv)
{
	for (; kv && kv[0]; kv += 2)
		assert_int_equal(containers_meta_set_label(md, kv[0], kv[1]), 0);
}

static void test_without_metadata(void **state)
{
	name_of("/system.slice/nginx.service", NULL, NOW, "/system.slice/nginx.service", "",
		CONTAINERS_ID_COROOT);
	name_of("/system.slice/system-serial\\x2dgetty.slice", NULL, NOW,
		"/system.slice/system-serial-getty.slice", "", CONTAINERS_ID_COROOT);
	name_of("/podruntime/kubelet", NULL, NOW, "/talos/kubelet", "", CONTAINERS_ID_COROOT);
	/* what Coroot ignores keeps a name of ours */
	name_of("/user.slice/user-0.slice/session-3.scope", NULL, NOW,
		"/user.slice/user-0.slice/session-3.scope", "", CONTAINERS_ID_IGNORED);
	name_of("/", NULL, NOW, "/", "", CONTAINERS_ID_IGNORED);
	name_of("", NULL, NOW, "/", "", CONTAINERS_ID_IGNORED);
	name_of("/lxc.payload.web", NULL, NOW, "/lxc/web", "", CONTAINERS_ID_IGNORED);
	name_of("/machine.slice/libpod-conmon-" ID_A ".scope", NULL, NOW,
		"/machine.slice/libpod-conmon-" ID_A ".scope", "", CONTAINERS_ID_IGNORED);
	name_of("/kubepods/besteffort/pod1234", NULL, NOW, "/kubepods/besteffort/pod1234", "",
		CONTAINERS_ID_IGNORED);
	name_of("/process_api/abc", NULL, NOW, "/process_api/abc", "", CONTAINERS_ID_IGNORED);
	/* metadata needed, not given: the cgroup path */
	name_of("/docker/" ID_A, NULL, NOW, "/docker/" ID_A, "", CONTAINERS_ID_NO_METADATA);
}

static void test_docker_and_podman(void **state)
{
	struct containers_meta md = CONTAINERS_META_INIT;

	assert_int_equal(containers_meta_set_string(&md.name, "shop-web-1"), 0);
	name_of("/docker/" ID_A, &md, NOW, "/docker/shop-web-1", "", CONTAINERS_ID_COROOT);
	name_of("/system.slice/docker-" ID_A ".scope", &md, NOW, "/docker/shop-web-1", "",
		CONTAINERS_ID_COROOT);
	name_of("/libpod_parent/libpod-" ID_A, &md, NOW, "/podman/shop-web-1", "",
		CONTAINERS_ID_COROOT);
	name_of("/machine.slice/libpod-" ID_A ".scope", &md, NOW, "/podman/shop-web-1", "",
		CONTAINERS_ID_COROOT);
	/* containerd outside Kubernetes has no name: Coroot skips it */
	containers_meta_free(&md);
	name_of("/kubepods/pod1/cri-containerd-" ID_A, &md, NOW, "/kubepods/pod1/cri-containerd-" ID_A,
		"", CONTAINERS_ID_IGNORED);
	assert_int_equal(containers_meta_set_string(&md.name, ""), 0);
	name_of("/docker/" ID_A, &md, NOW, "/docker/" ID_A, "", CONTAINERS_ID_IGNORED);
	containers_meta_free(&md);
}

static void test_kubernetes(void **state)
{
	struct containers_meta md = CONTAINERS_META_INIT;
	static const char *const deployment[] = {
		"io.kubernetes.pod.name", "checkout-64cd4f9686-mvtnb",
		"io.kubernetes.pod.namespace", "shop",
		"io.kubernetes.container.name", "app", NULL,
	};

	meta_labels(&md, deployment);
	name_of("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podab.slice/cri-containerd-" ID_A
		".scope", &md, NOW, "/k8s/shop/checkout-64cd4f9686-mvtnb/app", "/k8s/shop/checkout",
		CONTAINERS_ID_COROOT);
	/* k8s labels win over the docker name */
	assert_int_equal(containers_meta_set_string(&md.name, "k8s_app_checkout"), 0);
	name_of("/kubepods/burstable/podab/" ID_A, &md, NOW,
		"/k8s/shop/checkout-64cd4f9686-mvtnb/app", "/k8s/shop/checkout", CONTAINERS_ID_COROOT);

	/* the pause container (dockershim's "POD") and a nameless one are skipped */
	assert_int_equal(containers_meta_set_label(&md, "io.kubernetes.container.name", "POD"), 0);
	name_of("/kubepods/burstable/podab/" ID_A, &md, NOW, "/kubepods/burstable/podab/" ID_A, "",
		CONTAINERS_ID_IGNORED);
	assert_int_equal(containers_meta_set_label(&md, "io.kubernetes.container.name", ""), 0);
	name_of("/kubepods/burstable/podab/crio-" ID_A, &md, NOW, "/kubepods/burstable/podab/crio-" ID_A,
		"", CONTAINERS_ID_IGNORED);
	containers_meta_free(&md);

	/* no namespace label: an empty part, as Coroot's Sprintf gives */
	static const char *const no_ns[] = { "io.kubernetes.pod.name", "web-0",
					     "io.kubernetes.container.name", "c", NULL };
	meta_labels(&md, no_ns);
	name_of("/docker/" ID_A, &md, NOW, "/k8s//web-0/c", "", CONTAINERS_ID_COROOT);
	containers_meta_free(&md);
}

static void cronjob(const char *pod, int64_t now, const char *want, const char *want_app)
{
	struct containers_meta md = CONTAINERS_META_INIT;
	const char *const labels[] = { "io.kubernetes.pod.name", pod, "io.kubernetes.pod.namespace",
				       "batch", "io.kubernetes.container.name", "job", NULL };

	meta_labels(&md, labels);
	name_of("/kubepods/besteffort/pod9/" ID_A, &md, now, want, want_app, CONTAINERS_ID_COROOT);
	containers_meta_free(&md);
}

static void test_cronjob(void **state)
{
	cronjob("report-" NOW_MINUTE "-khz2f", NOW, "/k8s-cronjob/batch/report/job", "");
	cronjob("nightly-report-" NOW_MINUTE "-khz2f", NOW, "/k8s-cronjob/batch/nightly-report/job", "");
	/* within the window on both sides, strictly */
	cronjob("report-" NOW_MINUTE "-khz2f", NOW + 7 * DAY - 1, "/k8s-cronjob/batch/report/job", "");
	cronjob("report-" NOW_MINUTE "-khz2f", NOW - 7 * DAY + 1, "/k8s-cronjob/batch/report/job", "");
	/* out of it: an ordinary pod (whose 8 digits read as a deployment's hash) */
	cronjob("report-" NOW_MINUTE "-khz2f", NOW + 7 * DAY, "/k8s/batch/report-" NOW_MINUTE "-khz2f/job",
		"/k8s/batch/report");
	cronjob("report-" NOW_MINUTE "-khz2f", NOW - 8 * DAY,
		"/k8s/batch/report-" NOW_MINUTE "-khz2f/job", "/k8s/batch/report");
	/* not the pattern: a vowel in the suffix, 7 digits, 9 digits */
	cronjob("report-" NOW_MINUTE "-kaz2f", NOW, "/k8s/batch/report-" NOW_MINUTE "-kaz2f/job", "");
	cronjob("report-2993544-khz2f", NOW, "/k8s/batch/report-2993544-khz2f/job", "/k8s/batch/report");
	cronjob("report-129935440-khz2f", NOW, "/k8s/batch/report-129935440-khz2f/job",
		"/k8s/batch/report");
	/* unanchored, as Coroot's regexp: a longer tail still matches */
	cronjob("report-" NOW_MINUTE "-khz2fx", NOW, "/k8s-cronjob/batch/report/job", "");
}

static void test_swarm_and_nomad(void **state)
{
	struct containers_meta md = CONTAINERS_META_INIT;
	static const char *const swarm[] = {
		"com.docker.swarm.task.name", "shop_web.2.k2w6vnqy6umm5ptuyg0e4pmmq",
		"com.docker.swarm.service.name", "shop_web",
		"com.docker.stack.namespace", "shop", NULL,
	};

	meta_labels(&md, swarm);
	assert_int_equal(containers_meta_set_string(&md.name, "shop_web.2.k2w6"), 0);
	name_of("/docker/" ID_A, &md, NOW, "/swarm/shop/web/2", "", CONTAINERS_ID_COROOT);
	assert_int_equal(containers_meta_set_label(&md, "com.docker.stack.namespace", ""), 0);
	name_of("/docker/" ID_A, &md, NOW, "/swarm/_/shop_web/2", "", CONTAINERS_ID_COROOT);
	/* a task name with one dot is not a swarm task */
	assert_int_equal(containers_meta_set_label(&md, "com.docker.swarm.task.name", "web.2"), 0);
	name_of("/docker/" ID_A, &md, NOW, "/docker/shop_web.2.k2w6", "", CONTAINERS_ID_COROOT);
	containers_meta_free(&md);

	static const char *const nomad[][2] = {
		{ "NOMAD_ALLOC_ID", "5b3f9c2e-0d1a-4e7b-8c6f-2a9d1e0b7c4f" },
		{ "NOMAD_GROUP_NAME", "api" },
		{ "NOMAD_JOB_NAME", "shop" },
		{ "NOMAD_NAMESPACE", "default" },
		{ "NOMAD_TASK_NAME", "server" },
	};
	assert_int_equal(containers_meta_set_string(&md.name, "server-5b3f"), 0);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(containers_meta_set_env(&md, nomad[i][0], nomad[i][1]), 0);
	name_of("/docker/" ID_A, &md, NOW, "/docker/server-5b3f", "", CONTAINERS_ID_COROOT);
	assert_int_equal(containers_meta_set_env(&md, nomad[4][0], nomad[4][1]), 0);
	name_of("/docker/" ID_A, &md, NOW, "/nomad/default/shop/api/5b3f9c2e-0d1a-4e7b-8c6f-2a9d1e0b7c4f/server",
		"", CONTAINERS_ID_COROOT);
	containers_meta_free(&md);
}

static void test_app_id(void **state)
{
	static const char *const cases[][2] = {
		/* deployment: -<replicaset hash>-<5> */
		{ "/k8s/otel-demo/otel-demo-frauddetection-64cd4f9686-mvtnb/frauddetection",
		  "/k8s/otel-demo/otel-demo-frauddetection" },
		{ "/k8s/coroot/pyroscope-df884bb79-hhxtv/pyroscope", "/k8s/coroot/pyroscope" },
		{ "/k8s/a/b-1-bcdfg/c", "/k8s/a/b" },
		{ "/k8s/a/b-0123456789-bcdfg/c", "/k8s/a/b" },
		/* 11 hex digits: not a replicaset hash, and not a daemonset either */
		{ "/k8s/a/b-01234567890-bcdfg/c", "/k8s/a/b-01234567890" },
		/* daemonset: -<5> */
		{ "/k8s/coroot/coroot-node-agent-np9pk/node-agent", "/k8s/coroot/coroot-node-agent" },
		/* statefulset: -<n> */
		{ "/k8s/default/cassandra-main-12/cassandra", "/k8s/default/cassandra-main" },
		{ "/k8s/default/web-0/nginx", "/k8s/default/web" },
		/* a cronjob's pod outside the window reads as a deployment */
		{ "/k8s/default/hello-28283967-khz2f/xz", "/k8s/default/hello" },
		/* none of them */
		{ "/k8s/default/standalone-pod/c", "" },
		{ "/k8s/default/pod.with.dots-0/c", "" },
		{ "/k8s/default/web-0/", "" },
		{ "/k8s/default/web-0", "" },
		{ "/k8s//web-0/c", "" },
		{ "/k8s/Upper/web-0/c", "" },
		{ "/k8s-cronjob/batch/report/job", "" },
		{ "/system.slice/k3s.service", "" },
		{ "/docker/container_name", "" },
		{ "/swarm/shop/web/2", "" },
		{ "", "" },
		{ "/k8s/", "" },
	};
	char out[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(containers_app_id(cases[i][0], out, sizeof(out)), 0);
		if (strcmp(out, cases[i][1]))
			fail_msg("app_id(\"%s\") = \"%s\", want \"%s\"", cases[i][0], out, cases[i][1]);
	}
	assert_int_equal(containers_app_id("/k8s/a/b-0/c", out, 6), -ENAMETOOLONG);
}

static void test_meta(void **state)
{
	struct containers_meta md = CONTAINERS_META_INIT;
	char big[CONTAINERS_META_MAX_VALUE + 2];

	assert_null(containers_meta_label(&md, "a"));
	assert_int_equal(containers_meta_set_label(&md, "a", "1"), 0);
	assert_int_equal(containers_meta_set_label(&md, "a", "2"), 0);
	assert_int_equal(md.n_labels, 1);
	assert_string_equal(containers_meta_label(&md, "a"), "2");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(containers_meta_set_label(&md, "big", big), -E2BIG);
	assert_null(containers_meta_label(&md, "big"));
	for (int i = 1; i < CONTAINERS_META_MAX_LABELS; i++) {
		char k[16];
		snprintf(k, sizeof(k), "k%d", i);
		assert_int_equal(containers_meta_set_label(&md, k, "v"), 0);
	}
	assert_int_equal(containers_meta_set_label(&md, "one-too-many", "v"), -E2BIG);
	assert_int_equal(containers_meta_set_label(&md, "k7", "replaced"), 0);
	containers_meta_free(&md);
	assert_int_equal(md.n_labels, 0);
	containers_meta_free(&md); /* twice is harmless */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_without_metadata), cmocka_unit_test(test_docker_and_podman),
		cmocka_unit_test(test_kubernetes),	 cmocka_unit_test(test_cronjob),
		cmocka_unit_test(test_swarm_and_nomad),	 cmocka_unit_test(test_app_id),
		cmocka_unit_test(test_meta),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
