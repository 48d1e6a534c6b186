/*
 * libFuzzer target for src/containers/runtime_json.c: the parsers of the
 * runtimes' state files, on whatever bytes a truncated, half-written or
 * hostile file may hold.
 *
 * Input: byte 0 picks the parser (mod 7: Docker's config.v2.json, an OCI
 * config.json, a containers-storage index looked up for the id below,
 * Docker's hostconfig.json; then the runtime_roots.h readers of where the
 * state is: daemon.json, containerd's config.toml, a /proc/PID/cmdline),
 * the rest is the file, copied into a buffer of exactly its size.
 *
 * Besides "no crash, no read past the input, no leak", it checks that the
 * answer is one of the documented ones, that the metadata keeps its bounds,
 * and that a container named from it gets a non-empty id.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "containers/name.h"
#include "containers/runtime_json.h"
#include "containers/runtime_roots.h"

#include "fuzz_check.h"

/* the captured podman container's id (tests/unit/data/containers/podman.id) */
static const char index_id[] = "93010627618bd3a00585329aa9fa6983485e6c57d7f1a42b9d9e6e707eaa1eb2";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t n = size - 1;
	char *buf = malloc(n ? n : 1);
	memcpy(buf, data + 1, n);

	if (data[0] % 7 >= 4) {
		static const char *const flags[] = { "--data-root", "-g", NULL };
		char out[64];
		int rc = data[0] % 7 == 4 ? containers_parse_daemon_json(buf, n, out, sizeof(out))
			 : data[0] % 7 == 5 ? containers_parse_containerd_toml(buf, n, out, sizeof(out))
					    : containers_cmdline_flag(buf, n, flags, out, sizeof(out));
		free(buf);
		CHECK(rc == 0 || rc == -ENOENT || rc == -EINVAL || rc == -ENAMETOOLONG);
		CHECK(rc != -EINVAL || data[0] % 7 != 6);
		if (rc == 0)
			CHECK(strlen(out) < sizeof(out));
		return 0;
	}
	struct containers_meta md = CONTAINERS_META_INIT;
	int rc;
	switch (data[0] % 7) {
	case 0:
		rc = containers_parse_docker_config(buf, n, &md);
		break;
	case 1:
		rc = containers_parse_oci_config(buf, n, &md);
		break;
	case 3:
		rc = containers_parse_docker_hostconfig(buf, n, &md);
		break;
	default:
		rc = containers_parse_storage_index(buf, n, index_id, &md);
		break;
	}
	free(buf);
	CHECK(rc == 0 || rc == -EINVAL || rc == -ENOENT || rc == -ENOMEM);
	CHECK(rc != -ENOENT || data[0] % 7 == 2);
	if (rc)
		CHECK(containers_json_last_error()[0] != '\0');

	CHECK(md.n_labels <= CONTAINERS_META_MAX_LABELS && md.n_env <= CONTAINERS_META_MAX_LABELS);
	for (size_t i = 0; i < md.n_labels; i++)
		CHECK(strlen(md.labels[i].value) <= CONTAINERS_META_MAX_VALUE);
	for (size_t i = 0; i < md.n_env; i++)
		CHECK(!strncmp(md.env[i].key, "NOMAD_", 6));
	CHECK(md.n_ports <= CONTAINERS_META_MAX_PORTS);
	for (size_t i = 0; i < md.n_ports; i++)
		CHECK(md.ports[i].port && (md.ports[i].family == AF_INET || md.ports[i].family == AF_INET6));

	if (rc == 0) {
		static const char *const paths[] = {
			"/docker/0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
			"/libpod_parent/libpod-93010627618bd3a00585329aa9fa6983485e6c57d7f1a42b9d9e6e707eaa1eb2",
		};
		struct containers_class c;
		struct containers_name name;
		CHECK(containers_classify_path(paths[data[0] % 7 == 2], &c) == 0);
		rc = containers_name(&c, &md, 1796126400, &name);
		CHECK(rc == 0 || rc == -ENAMETOOLONG);
		if (rc == 0)
			CHECK(name.id[0] == '/' && !strncmp(name.id, name.app_id, strlen(name.app_id)));
	}
	containers_meta_free(&md);
	return 0;
}
