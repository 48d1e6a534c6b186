/*
 * Runtime metadata: the JSON parsers on real and hand-written state files
 * (tests/unit/data/containers/README.md says which is which), their refusal
 * of truncated and garbage input, and the readers on a fake host root laid
 * out as each runtime lays out its state, through to the final names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "containers/name.h"
#include "containers/runtime_json.h"
#include "containers/runtime_read.h"
#include "containers/runtime_roots.h"

#include <arpa/inet.h>

#include "fixture.h"

#define DATA "tests/unit/data/containers/"
#define NOW 1796126400LL

/* the captured docker container (data/containers/docker.id) */
#define DOCKER_ID "c71ebbee35bda19ef21a48ace20141aa3ae32ed3914ad156668d5ae12e50c458"
#define ABSENT_ID "1111111111111111111111111111111111111111111111111111111111111111"
#define CRIO_ID "7e5f5a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f"

static char *data(const char *name, size_t *len)
{
	char path[256];

	snprintf(path, sizeof(path), DATA "%s", name);
	char *b = (char *)slurp(path, len);
	b[*len] = '\0';
	return b;
}

static void id_of(const char *name, char *id)
{
	size_t len;
	char *b = data(name, &len);

	snprintf(id, 65, "%s", b);
	free(b);
	assert_int_equal(strlen(id), 64);
}

/* ---- parsers ---------------------------------------------------------- */

static void test_parse_docker(void **state)
{
	struct containers_meta md = CONTAINERS_META_INIT;
	size_t len;
	char *b = data("docker.config.v2.json", &len);

	assert_int_equal(containers_parse_docker_config(b, len, &md), 0);
	assert_string_equal(md.name, "shop-web-1"); /* the leading '/' dropped */
	assert_string_equal(md.image, "nodescope-busybox:test");
	assert_string_equal(containers_meta_label(&md, "com.docker.compose.service"), "web");
	assert_int_equal(md.n_labels, 1);
	/* only NOMAD_* of the environment is kept */
	assert_int_equal(md.n_env, 1);
	assert_string_equal(containers_meta_env(&md, "NOMAD_TASK_NAME"), "web");
	containers_meta_free(&md);
	free(b);

	/* Go's encoder writes '<' '>' '&' as \u003c ...: read back as themselves */
	static const char esc[] = "{\"Name\":\"/a\",\"Config\":{\"Labels\":{\"m\":\"x \\u003cy@z\\u003e \\u0026\"}}}";
	assert_int_equal(containers_parse_docker_config(esc, strlen(esc), &md), 0);
	assert_string_equal(containers_meta_label(&md, "m"), "x <y@z> &");
	containers_meta_free(&md);
}

static void test_parse_podman(void **state)
{
	struct containers_meta md = CONTAINERS_META_INIT;
	size_t len;
	char id[65], *b = data("podman.config.json", &len);

	assert_int_equal(containers_parse_oci_config(b, len, &md), 0);
	free(b);
	assert_null(md.name);
	assert_null(md.image);
	assert_string_equal(containers_meta_label(&md, "io.container.manager"), "libpod");
	assert_string_equal(containers_meta_label(&md, "io.kubernetes.pod.namespace"), "demo-ns");
	assert_null(containers_meta_label(&md, "io.kubernetes.pod.name"));
	assert_string_equal(containers_meta_env(&md, "NOMAD_JOB_NAME"), "job1");

	id_of("podman.id", id);
	b = data("podman.containers.json", &len);
	assert_int_equal(containers_parse_storage_index(b, len, id, &md), 0);
	assert_string_equal(md.name, "ns-fixture");
	assert_string_equal(md.image, "localhost/nodescope-busybox:test");
	containers_meta_free(&md);
	assert_int_equal(containers_parse_storage_index(b, len, CRIO_ID, &md), -ENOENT);
	assert_non_null(strstr(containers_json_last_error(), "no container"));
	containers_meta_free(&md);
	free(b);
}

static void test_parse_containerd(void **state)
{
	struct containers_meta md = CONTAINERS_META_INIT;
	size_t len;
	char *b = data("containerd.config.json", &len);

	assert_int_equal(containers_parse_oci_config(b, len, &md), 0);
	free(b);
	/* the CRI plugin's annotations under the names Coroot reads */
	assert_string_equal(containers_meta_label(&md, "io.kubernetes.pod.name"), "web-7d4b9c8f6d-x2x7q");
	assert_string_equal(containers_meta_label(&md, "io.kubernetes.pod.namespace"), "shop");
	assert_string_equal(containers_meta_label(&md, "io.kubernetes.container.name"), "web");
	assert_string_equal(md.image, "docker.io/library/busybox:fixture");
	assert_null(md.name);
	containers_meta_free(&md);

	/* a sandbox has no container-name annotation: no container name label */
	static const char sandbox[] =
		"{\"ociVersion\":\"1.0.2\",\"annotations\":{\"io.kubernetes.cri.container-type\":\"sandbox\","
		"\"io.kubernetes.cri.sandbox-name\":\"web-0\",\"io.kubernetes.cri.sandbox-namespace\":\"shop\"}}";
	assert_int_equal(containers_parse_oci_config(sandbox, strlen(sandbox), &md), 0);
	assert_string_equal(containers_meta_label(&md, "io.kubernetes.pod.name"), "web-0");
	assert_null(containers_meta_label(&md, "io.kubernetes.container.name"));
	containers_meta_free(&md);
}

static void test_parse_crio(void **state)
{
	struct containers_meta md = CONTAINERS_META_INIT;
	size_t len;
	char *b = data("crio.config.json", &len);

	assert_int_equal(containers_parse_oci_config(b, len, &md), 0);
	free(b);
	assert_string_equal(containers_meta_label(&md, "io.kubernetes.pod.name"), "cache-0");
	assert_string_equal(containers_meta_label(&md, "io.kubernetes.container.name"), "redis");
	/* a pod label only in io.kubernetes.cri-o.Labels */
	assert_string_equal(containers_meta_label(&md, "app"), "cache");
	assert_string_equal(md.image, "docker.io/library/redis:7.2");
	containers_meta_free(&md);

	/* an annotation wins over the same key in the Labels string */
	static const char both[] = "{\"ociVersion\":\"1\",\"annotations\":{\"io.kubernetes.pod.name\":\"a\","
				   "\"io.kubernetes.cri-o.Labels\":\"{\\\"io.kubernetes.pod.name\\\":\\\"b\\\"}\"}}";
	assert_int_equal(containers_parse_oci_config(both, strlen(both), &md), 0);
	assert_string_equal(containers_meta_label(&md, "io.kubernetes.pod.name"), "a");
	containers_meta_free(&md);
	/* a Labels string that is not JSON costs only those labels */
	static const char odd[] = "{\"ociVersion\":\"1\",\"annotations\":{\"io.kubernetes.cri-o.Labels\":\"{oops\"}}";
	assert_int_equal(containers_parse_oci_config(odd, strlen(odd), &md), 0);
	assert_int_equal(md.n_labels, 1);
	containers_meta_free(&md);
}

typedef int (*parser)(const char *, size_t, struct containers_meta *);

static int parse_index(const char *b, size_t n, struct containers_meta *md)
{
	char id[65];

	id_of("podman.id", id);
	return containers_parse_storage_index(b, n, id, md);
}

/* Every cut of a real file before its last closing bracket is refused. */
static void truncations(const char *name, parser p)
{
	size_t len;
	char *b = data(name, &len);
	size_t end = len;

	while (end > 0 && b[end - 1] != '}' && b[end - 1] != ']')
		end--;
	for (size_t n = 0; n < end; n += n < 64 || end - n < 64 ? 1 : 7) {
		struct containers_meta md = CONTAINERS_META_INIT;
		char *cut = malloc(n ? n : 1); /* exact size: ASan sees a read past it */

		memcpy(cut, b, n);
		int rc = p(cut, n, &md);
		if (rc != -EINVAL)
			fail_msg("%s cut to %zu bytes: %d, want -EINVAL", name, n, rc);
		containers_meta_free(&md);
		free(cut);
	}
	free(b);
}

static void test_truncated(void **state)
{
	truncations("docker.config.v2.json", containers_parse_docker_config);
	truncations("podman.config.json", containers_parse_oci_config);
	truncations("containerd.config.json", containers_parse_oci_config);
	truncations("crio.config.json", containers_parse_oci_config);
	truncations("podman.containers.json", parse_index);
}

static void test_garbage(void **state)
{
	static const char *const junk[] = {
		"", " ", "null", "0", "\"str\"", "[]", "{}", "{\"Config\":[]}", "{\"ociVersion\":1}",
		"\x7f" "ELF\x02\x01\x01", "{\"a\":\"\\u0000\"}", "{\"a\":\"\xff\xfe\"}", "{\"a\":1,}",
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "{\"ociVersion\":\"1\"} x",
	};
	static const parser parsers[] = { containers_parse_docker_config, containers_parse_oci_config,
					  parse_index };

	for (size_t p = 0; p < 3; p++) {
		for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
			struct containers_meta md = CONTAINERS_META_INIT;
			int rc = parsers[p](junk[i], strlen(junk[i]), &md);
			/* an empty index is fine JSON without the container */
			int want = p == 2 && !strcmp(junk[i], "[]") ? -ENOENT : -EINVAL;
			containers_meta_free(&md);
			if (rc != want)
				fail_msg("parser %zu, \"%s\": %d, want %d", p, junk[i], rc, want);
			assert_true(containers_json_last_error()[0] != '\0');
		}
	}
	/* wrong shapes inside otherwise fine files are not errors: those fields are absent */
	static const char odd_docker[] = "{\"Name\":7,\"Config\":{\"Image\":[],\"Labels\":{\"a\":1,\"b\":\"ok\"},"
					 "\"Env\":[\"NOMAD_X\",3,\"NOMAD_Y=1\"]}}";
	struct containers_meta md = CONTAINERS_META_INIT;
	assert_int_equal(containers_parse_docker_config(odd_docker, strlen(odd_docker), &md), 0);
	assert_null(md.name);
	assert_null(md.image);
	assert_int_equal(md.n_labels, 1);
	assert_int_equal(md.n_env, 1);
	containers_meta_free(&md);
	/* a jansson error says where */
	assert_int_equal(containers_parse_docker_config("{\"a\":", 5, &md), -EINVAL);
	assert_non_null(strstr(containers_json_last_error(), "line 1"));
	containers_meta_free(&md);
}

/* Whether md publishes family ip:port. */
static bool has_port(const struct containers_meta *md, int family, const char *ip, uint16_t port)
{
	uint8_t want[16] = { 0 };

	assert_int_equal(inet_pton(family, ip, want), 1);
	for (size_t i = 0; i < md->n_ports; i++)
		if (md->ports[i].family == family && md->ports[i].port == port &&
		    !memcmp(md->ports[i].ip, want, 16))
			return true;
	return false;
}

/* Docker's published ports: the running container's NetworkSettings.Ports, else PortBindings. */
static void test_parse_docker_ports(void **state)
{
	struct containers_meta md = CONTAINERS_META_INIT;
	size_t len, hlen;
	char *b = data("docker-ports.config.v2.json", &len);
	char *h = data("docker-ports.hostconfig.json", &hlen);

	assert_int_equal(containers_parse_docker_config(b, len, &md), 0);
	assert_int_equal(md.n_ports, 3);
	assert_true(md.ports_final);
	assert_true(has_port(&md, AF_INET, "127.0.0.1", 24571));
	assert_true(has_port(&md, AF_INET, "0.0.0.0", 24572));
	assert_true(has_port(&md, AF_INET6, "::", 24572));
	/* the running container's own bindings win over those asked for */
	assert_int_equal(containers_parse_docker_hostconfig(h, hlen, &md), 0);
	assert_int_equal(md.n_ports, 3);
	containers_meta_free(&md);

	/* created, not started yet (Ports null): the bindings asked for, "" as 0.0.0.0 and :: */
	char *c = data("docker.config.v2.json", &len);
	assert_int_equal(containers_parse_docker_config(c, len, &md), 0);
	assert_int_equal(md.n_ports, 0);
	assert_false(md.ports_final);
	assert_int_equal(containers_parse_docker_hostconfig(h, hlen, &md), 0);
	assert_int_equal(md.n_ports, 3);
	assert_true(has_port(&md, AF_INET, "127.0.0.1", 24571));
	assert_true(has_port(&md, AF_INET, "0.0.0.0", 24572));
	assert_true(has_port(&md, AF_INET6, "::", 24572));
	assert_false(md.ports_pending);
	containers_meta_free(&md);
	free(b);
	free(c);
	free(h);

	/* udp, a port range or a port Docker picks, garbage: skipped; no proto is tcp */
	static const char odd[] = "{\"PortBindings\":{\"53/udp\":[{\"HostIp\":\"\",\"HostPort\":\"53\"}],"
				  "\"80/tcp\":[{\"HostIp\":\"\",\"HostPort\":\"\"},{\"HostPort\":\"8000-8010\"},"
				  "{\"HostIp\":\"x\",\"HostPort\":\"80\"},{\"HostIp\":\"::1\",\"HostPort\":\"99999\"},"
				  "{\"HostIp\":\"10.0.0.1\"},7],\"81\":[{\"HostIp\":\"::1\",\"HostPort\":\"81\"}],"
				  "\"82/tcp\":null}}";
	assert_int_equal(containers_parse_docker_hostconfig(odd, strlen(odd), &md), 0);
	assert_int_equal(md.n_ports, 1);
	assert_true(md.ports_pending); /* Docker picks the host port as it starts the container */
	assert_true(has_port(&md, AF_INET6, "::1", 81));
	containers_meta_free(&md);
	assert_int_equal(containers_parse_docker_hostconfig("[]", 2, &md), -EINVAL);
	assert_int_equal(containers_parse_docker_hostconfig("{", 1, &md), -EINVAL);
	containers_meta_free(&md);
}

/* Where the daemons say their state is: command lines and config files. */
static void test_parse_roots(void **state)
{
	char out[256];
	static const char *const data_root[] = { "--data-root", "-g", NULL };
	static const char cmd1[] = "dockerd\0--data-root\0/data/docker\0-H\0fd://";
	static const char cmd2[] = "dockerd\0--data-root=/a\0-g\0/b/";
	static const char cmd3[] = "dockerd\0--data-root";
	static const char cmd4[] = "dockerd\0--data-rootx=/a\0--data-root=";

	assert_int_equal(containers_cmdline_flag(cmd1, sizeof(cmd1), data_root, out, sizeof(out)), 0);
	assert_string_equal(out, "/data/docker");
	assert_int_equal(containers_cmdline_flag(cmd2, sizeof(cmd2), data_root, out, sizeof(out)), 0);
	assert_string_equal(out, "/b/"); /* the last one given */
	assert_int_equal(containers_cmdline_flag(cmd3, sizeof(cmd3), data_root, out, sizeof(out)), -ENOENT);
	assert_int_equal(containers_cmdline_flag(cmd4, sizeof(cmd4), data_root, out, sizeof(out)), -ENOENT);
	assert_int_equal(containers_cmdline_flag(cmd1, sizeof(cmd1), data_root, out, 5), -ENAMETOOLONG);
	/* a flag as the last bytes, no NUL after it (read up to len only) */
	char *cut = malloc(11);
	memcpy(cut, "--data-root", 11);
	assert_int_equal(containers_cmdline_flag(cut, 11, data_root, out, sizeof(out)), -ENOENT);
	free(cut);
	/* a command line cut without its last NUL */
	assert_int_equal(containers_cmdline_flag(cmd1, sizeof(cmd1) - 3, data_root, out, sizeof(out)), 0);
	assert_string_equal(out, "/data/docker");

	/* conmon's bundle (and pid file) lie in the containers/storage root of their container */
	static const char *const bundle[] = { "--bundle", "-b", NULL };
	static const char conmon[] = "/usr/bin/conmon\0--api-version\0001\0-c\0abc\0-b\0"
				     "/tmp/pm/storage/vfs-containers/abc/userdata\0-p\0/x/pidfile";
	assert_int_equal(containers_cmdline_flag(conmon, sizeof(conmon), bundle, out, sizeof(out)), 0);
	assert_int_equal(containers_storage_root_of(out, out, sizeof(out)), 0);
	assert_string_equal(out, "/tmp/pm/storage");
	assert_int_equal(containers_storage_root_of("/r/overlay-containers/abc/userdata/pidfile", out,
						    sizeof(out)), 0);
	assert_string_equal(out, "/r");
	assert_int_equal(containers_storage_root_of("/a/b-containers/x-containers/id/userdata", out,
						    sizeof(out)), 0);
	assert_string_equal(out, "/a/b-containers");
	assert_int_equal(containers_storage_root_of("/r/-containers/abc/userdata", out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(containers_storage_root_of("/r/overlay-containers/abc", out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(containers_storage_root_of("/overlay-containers/abc/userdata", out,
						    sizeof(out)), -EINVAL);
	assert_int_equal(containers_storage_root_of("/r/overlay-containers/abc/userdatax", out,
						    sizeof(out)), -EINVAL);
	assert_int_equal(containers_storage_root_of("/r/o-containers/i/userdata", out, 2), -EINVAL);

	static const char dj[] = "{\"log-driver\":\"json-file\",\"data-root\":\"/srv/docker\"}";
	assert_int_equal(containers_parse_daemon_json(dj, strlen(dj), out, sizeof(out)), 0);
	assert_string_equal(out, "/srv/docker");
	assert_int_equal(containers_parse_daemon_json("{\"graph\":\"/old\"}", 16, out, sizeof(out)), 0);
	assert_string_equal(out, "/old");
	assert_int_equal(containers_parse_daemon_json("{}", 2, out, sizeof(out)), -ENOENT);
	assert_int_equal(containers_parse_daemon_json("{\"data-root\":1}", 15, out, sizeof(out)), -ENOENT);
	assert_int_equal(containers_parse_daemon_json("[1]", 3, out, sizeof(out)), -EINVAL);
	assert_int_equal(containers_parse_daemon_json("{\"data-", 7, out, sizeof(out)), -EINVAL);
	assert_non_null(strstr(containers_roots_last_error(), "daemon.json: not JSON"));

	static const char t1[] = "version = 2\nroot = \"/var/lib/c\"\n  state = \"/run/k\\\\x\" # the state\n"
				 "[plugins]\n  state = \"/no\"\n";
	assert_int_equal(containers_parse_containerd_toml(t1, strlen(t1), out, sizeof(out)), 0);
	assert_string_equal(out, "/run/k\\x");
	static const char t2[] = "state='/run/lit\\eral'";
	assert_int_equal(containers_parse_containerd_toml(t2, strlen(t2), out, sizeof(out)), 0);
	assert_string_equal(out, "/run/lit\\eral");
	static const char t3[] = "[grpc]\nstate = \"/no\"\n"; /* a table's key, not containerd's state */
	assert_int_equal(containers_parse_containerd_toml(t3, strlen(t3), out, sizeof(out)), -ENOENT);
	static const char t4[] = "stateful = 1\nstate_x = \"a\"\n";
	assert_int_equal(containers_parse_containerd_toml(t4, strlen(t4), out, sizeof(out)), -ENOENT);
	static const char t5[] = "state = /run/x\n";
	assert_int_equal(containers_parse_containerd_toml(t5, strlen(t5), out, sizeof(out)), -EINVAL);
	static const char t6[] = "state = \"/run/x\n\"";
	assert_int_equal(containers_parse_containerd_toml(t6, strlen(t6), out, sizeof(out)), -EINVAL);
	static const char t7[] = "state = \"\\u0041\"";
	assert_int_equal(containers_parse_containerd_toml(t7, strlen(t7), out, sizeof(out)), -EINVAL);

	struct containers_roots r;
	containers_roots_defaults(&r);
	assert_int_equal(r.n[CONTAINERS_RT_DOCKER], 1);
	assert_string_equal(r.dir[CONTAINERS_RT_CONTAINERD][1], "/run/k3s/containerd");
	assert_int_equal(containers_roots_add(&r, CONTAINERS_RT_DOCKER, "/var/lib/docker/"), 0);
	assert_int_equal(containers_roots_add(&r, CONTAINERS_RT_DOCKER, "relative"), 0);
	assert_int_equal(containers_roots_add(&r, CONTAINERS_RT_DOCKER, "/data/docker//"), 1);
	assert_string_equal(r.dir[CONTAINERS_RT_DOCKER][1], "/data/docker");
}

/* ---- readers, on a fake host root --------------------------------------- */

static int mkdirs(const char *path)
{
	char tmp[512];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

/* Puts fixture `name` (or the literal text when name is NULL) at root + rel. */
static void place(const char *rel, const char *name, const char *text)
{
	char path[512];
	size_t len;
	char *b = name ? data(name, &len) : NULL;

	snprintf(path, sizeof(path), "%s%s", dir, rel);
	assert_int_equal(mkdirs(path), 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	if (b)
		fwrite(b, 1, len, f);
	else
		fputs(text, f);
	assert_int_equal(fclose(f), 0);
	free(b);
}

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/nodescope-containers-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[sizeof(dir) + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* classify the captured /proc text, read the metadata under the fake root, name it */
static void full_name(const char *cgroup_text, struct containers_name *n)
{
	struct containers_class c;
	struct containers_meta md = CONTAINERS_META_INIT;

	assert_int_equal(containers_classify(cgroup_text, "", &c), 0);
	int rc = containers_meta_read(c.kind, c.runtime_id, dir, NULL, &md);
	if (rc)
		fail_msg("containers_meta_read: %s", containers_read_last_error());
	assert_int_equal(containers_name(&c, &md, NOW, n), 0);
	containers_meta_free(&md);
}

static void test_read_podman(void **state)
{
	char id[65], rel[256];
	size_t len;
	struct containers_name n;

	id_of("podman.id", id);
	snprintf(rel, sizeof(rel), "/var/lib/containers/storage/overlay-containers/%s/userdata/config.json", id);
	place(rel, "podman.config.json", NULL);
	place("/var/lib/containers/storage/overlay-containers/containers.json", "podman.containers.json", NULL);
	char *text = data("podman.cgroup", &len);
	full_name(text, &n);
	assert_string_equal(n.id, "/podman/ns-fixture");
	assert_int_equal(n.source, CONTAINERS_ID_COROOT);

	/* without the index: no name, so the id falls back to the cgroup path */
	place("/var/lib/containers/storage/overlay-containers/containers.json", NULL, "[]");
	full_name(text, &n);
	assert_int_equal(n.source, CONTAINERS_ID_IGNORED);
	assert_string_equal(n.id, "/libpod_parent/libpod-" "93010627618bd3a00585329aa9fa6983485e6c57d7f1a42b9d9e6e707eaa1eb2");
	free(text);
}

static void test_read_containerd(void **state)
{
	char id[65], rel[256];
	size_t len;
	struct containers_name n;

	id_of("containerd.id", id);
	/* the kubepods path with a bare id says docker: no docker state, so containerd's */
	snprintf(rel, sizeof(rel), "/run/containerd/io.containerd.runtime.v2.task/k8s.io/%s/config.json", id);
	place(rel, "containerd.config.json", NULL);
	char *text = data("containerd.cgroup", &len);
	full_name(text, &n);
	free(text);
	assert_string_equal(n.id, "/k8s/shop/web-7d4b9c8f6d-x2x7q/web");
	assert_string_equal(n.app_id, "/k8s/shop/web");

	/* as cri-containerd-<id> under the systemd driver, and from k3s' state dir */
	struct containers_meta md = CONTAINERS_META_INIT;
	snprintf(rel, sizeof(rel), "/run/k3s/containerd/io.containerd.runtime.v2.task/k8s.io/%s/config.json",
		 CRIO_ID);
	place(rel, "containerd.config.json", NULL);
	assert_int_equal(containers_meta_read(CONTAINERS_CONTAINERD, CRIO_ID, dir, NULL, &md), 0);
	assert_string_equal(containers_meta_label(&md, "io.kubernetes.container.name"), "web");
	containers_meta_free(&md);
}

static void test_read_docker_and_crio(void **state)
{
	struct containers_name n;

	size_t len;
	place("/var/lib/docker/containers/" DOCKER_ID "/config.v2.json", "docker.config.v2.json", NULL);
	char *text = data("docker.cgroup", &len);
	full_name(text, &n); /* the captured /docker/<id> */
	free(text);
	assert_string_equal(n.id, "/docker/shop-web-1");
	full_name("0::/system.slice/docker-" DOCKER_ID ".scope\n", &n);
	assert_string_equal(n.id, "/docker/shop-web-1");

	place("/run/containers/storage/overlay-containers/" CRIO_ID "/userdata/config.json",
	      "crio.config.json", NULL);
	full_name("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod9f0e8d7c.slice/crio-" CRIO_ID
		  ".scope\n", &n);
	assert_string_equal(n.id, "/k8s/store/cache-0/redis");
	assert_string_equal(n.app_id, "/k8s/store/cache");
}

/* A data root and a containerd state dir of their own (as configured), and containerd's v1 tasks. */
static void test_read_configured_roots(void **state)
{
	struct containers_meta md = CONTAINERS_META_INIT;
	struct containers_roots r;

	containers_roots_defaults(&r);
	place("/srv/docker/containers/" DOCKER_ID "/config.v2.json", "docker-ports.config.v2.json", NULL);
	place("/srv/docker/containers/" DOCKER_ID "/hostconfig.json", "docker-ports.hostconfig.json", NULL);
	assert_int_equal(containers_meta_read(CONTAINERS_DOCKER, DOCKER_ID, dir, &r, &md), -ENOENT);
	assert_int_equal(containers_roots_add(&r, CONTAINERS_RT_DOCKER, "/srv/docker"), 1);
	assert_int_equal(containers_meta_read(CONTAINERS_DOCKER, DOCKER_ID, dir, &r, &md), 0);
	assert_string_equal(md.name, "ctra-p");
	assert_int_equal(md.n_ports, 3);
	containers_meta_free(&md);

	place("/data/ctrd/io.containerd.runtime.v1.linux/k8s.io/" CRIO_ID "/config.json",
	      "containerd.config.json", NULL);
	assert_int_equal(containers_meta_read(CONTAINERS_CONTAINERD, CRIO_ID, dir, &r, &md), -ENOENT);
	assert_int_equal(containers_roots_add(&r, CONTAINERS_RT_CONTAINERD, "/data/ctrd"), 1);
	assert_int_equal(containers_meta_read(CONTAINERS_CONTAINERD, CRIO_ID, dir, &r, &md), 0);
	assert_string_equal(containers_meta_label(&md, "io.kubernetes.pod.name"), "web-7d4b9c8f6d-x2x7q");
	containers_meta_free(&md);
	/* podman with a root of its own (--root) and the vfs driver: found once the root is known */
	char rel[256];
	char pid[65];
	id_of("podman.id", pid);
	snprintf(rel, sizeof(rel), "/tmp/pm/storage/vfs-containers/%s/userdata/config.json", pid);
	place(rel, "podman.config.json", NULL);
	place("/tmp/pm/storage/vfs-containers/containers.json", "podman.containers.json", NULL);
	/* the default root's index, of other containers, comes first: it names nothing here */
	place("/var/lib/containers/storage/overlay-containers/containers.json", NULL, "[]");
	assert_int_equal(containers_meta_read(CONTAINERS_PODMAN, pid, dir, &r, &md), -ENOENT);
	assert_int_equal(containers_roots_add(&r, CONTAINERS_RT_STORAGE, "/tmp/pm/storage"), 1);
	assert_int_equal(containers_meta_read(CONTAINERS_PODMAN, pid, dir, &r, &md), 0);
	assert_string_equal(md.name, "ns-fixture");
	containers_meta_free(&md);
	/* a root with glob characters is taken as it is */
	place("/data/c*d/io.containerd.runtime.v2.task/k8s.io/" ABSENT_ID "/config.json",
	      "containerd.config.json", NULL);
	assert_int_equal(containers_roots_add(&r, CONTAINERS_RT_CONTAINERD, "/data/c?d"), 1);
	assert_int_equal(containers_meta_read(CONTAINERS_CONTAINERD, ABSENT_ID, dir, &r, &md), -ENOENT);
	containers_meta_free(&md);
}

static void test_read_errors(void **state)
{
	struct containers_meta md = CONTAINERS_META_INIT;

	assert_int_equal(containers_meta_read(CONTAINERS_DOCKER, ABSENT_ID, dir, NULL, &md), -ENOENT);
	const char *why = containers_read_last_error();
	assert_non_null(strstr(why, "no state file for docker container 111111111111"));
	assert_non_null(strstr(why, "/var/lib/docker/containers/<id>/config.v2.json"));
	assert_int_equal(containers_meta_read(CONTAINERS_PODMAN, ABSENT_ID, dir, NULL, &md), -ENOENT);
	assert_int_equal(containers_meta_read(CONTAINERS_SYSTEMD, ABSENT_ID, dir, NULL, &md), -EOPNOTSUPP);
	assert_int_equal(containers_meta_read(CONTAINERS_DOCKER, "../../etc/passwd", dir, NULL, &md), -EINVAL);
	assert_int_equal(containers_meta_read(CONTAINERS_DOCKER, "", dir, NULL, &md), -EINVAL);
	assert_int_equal(containers_meta_read(CONTAINERS_DOCKER, DOCKER_ID "0", dir, NULL, &md), -EINVAL);

	/* a garbage or truncated state file: -EINVAL, naming the file */
	place("/var/lib/docker/containers/" ABSENT_ID "/config.v2.json", NULL, "{\"Name\":\"/x\",\"Con");
	assert_int_equal(containers_meta_read(CONTAINERS_DOCKER, ABSENT_ID, dir, NULL, &md), -EINVAL);
	assert_non_null(strstr(containers_read_last_error(), "/config.v2.json: docker config.v2.json: not JSON"));
	containers_meta_free(&md);
	place("/run/containers/storage/overlay-containers/" ABSENT_ID "/userdata/config.json", NULL, "\x01\x02");
	assert_int_equal(containers_meta_read(CONTAINERS_CRIO, ABSENT_ID, dir, NULL, &md), -EINVAL);
	containers_meta_free(&md);

	/* a directory where the file should be */
	char path[512];
	snprintf(path, sizeof(path), "%s/var/lib/docker/containers/%s/config.v2.json", dir, DOCKER_ID "");
	place("/var/lib/docker/containers/" CRIO_ID "/config.v2.json/x", NULL, "");
	assert_int_equal(containers_meta_read(CONTAINERS_DOCKER, CRIO_ID, dir, NULL, &md), -EISDIR);
	assert_non_null(strstr(containers_read_last_error(), "cannot read"));

	/* too large to be a state file (sparse: costs no disk) */
	place("/var/lib/docker/containers/" DOCKER_ID "/config.v2.json", NULL, "{}");
	assert_int_equal(truncate(path, CONTAINERS_STATE_FILE_MAX + 1), 0);
	assert_int_equal(containers_meta_read(CONTAINERS_DOCKER, DOCKER_ID, dir, NULL, &md), -EFBIG);
	containers_meta_free(&md);

	/* a podman config.json that is fine, with a garbage index: the index is skipped */
	place("/var/lib/containers/storage/overlay-containers/" ABSENT_ID "/userdata/config.json",
	      "podman.config.json", NULL);
	place("/var/lib/containers/storage/overlay-containers/containers.json", NULL, "garbage");
	assert_int_equal(containers_meta_read(CONTAINERS_PODMAN, ABSENT_ID, dir, NULL, &md), 0);
	assert_null(md.name);
	containers_meta_free(&md);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_docker),
		cmocka_unit_test(test_parse_podman),
		cmocka_unit_test(test_parse_containerd),
		cmocka_unit_test(test_parse_crio),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_parse_docker_ports),
		cmocka_unit_test(test_parse_roots),
		cmocka_unit_test_setup_teardown(test_read_podman, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_containerd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_docker_and_crio, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_configured_roots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_errors, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
