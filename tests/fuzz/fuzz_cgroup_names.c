/*
 * libFuzzer target for the container naming rules: src/containers/
 * cgroup_path.c, rules.c, name.c (with kind.c and meta.c).
 *
 * Input: byte 0 picks the base path (bits 0-1: "", a container's cgroup, a
 * three-level path, or the input's first line), then /proc/PID/cgroup text.
 * Its lines 2-5 also serve as the k8s pod name, namespace, container name
 * and docker name of a metadata record, so the naming is fuzzed too.
 *
 * Besides "no crash, no read past the input", it checks:
 *  - the picked path is clean (Go's Clean leaves it as it is) and running the
 *    rules on it again gives the same class;
 *  - the kinds that need metadata carry a 64-char id, the others an id
 *    starting with '/';
 *  - every name is non-empty, and app_id is a prefix of the container_id.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "containers/name.h"

#include "fuzz_check.h"

static const char *const bases[] = {
	"",
	"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podc83d0428.slice/docker-"
	"0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9.scope",
	"/a/b/c",
};

/* The n-th line of text (0-based) into out, "" when there is none. */
static void line(const char *text, int n, char *out, size_t size)
{
	const char *p = text;

	for (; n > 0 && p; n--) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	out[0] = '\0';
	if (!p)
		return;
	size_t len = strcspn(p, "\n");
	if (len >= size)
		len = size - 1;
	memcpy(out, p, len);
	out[len] = '\0';
}

static void check_name(const struct containers_class *c, const struct containers_meta *md,
		       int64_t now)
{
	struct containers_name n;
	int rc = containers_name(c, md, now, &n);

	CHECK(rc == 0 || rc == -ENAMETOOLONG);
	if (rc)
		return;
	CHECK(n.id[0] != '\0');
	CHECK(!strncmp(n.id, n.app_id, strlen(n.app_id)));
	CHECK(!md ? n.source != CONTAINERS_ID_COROOT || !containers_kind_info(c->kind)->needs_metadata
		  : 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char *text = malloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';

	char base[CONTAINERS_PATH_MAX];
	if ((data[0] & 3) == 3)
		line(text, 0, base, sizeof(base));
	else
		snprintf(base, sizeof(base), "%s", bases[data[0] & 3]);

	struct containers_class c;
	int rc = containers_classify(text, base, &c);
	CHECK(rc == 0 || rc == -EINVAL || rc == -ENAMETOOLONG);
	if (rc == 0) {
		const struct containers_kind_info *info = containers_kind_info(c.kind);
		CHECK(c.kind < CONTAINERS_KIND_COUNT && c.rule);
		CHECK(info->needs_metadata == (strlen(c.runtime_id) == CONTAINERS_RUNTIME_ID_LEN));
		CHECK(info->needs_metadata ? c.id[0] == '\0' : c.id[0] == '/');

		char clean[CONTAINERS_PATH_MAX];
		CHECK(containers_path_join("", c.cgroup, clean, sizeof(clean)) == 0);
		CHECK(!strcmp(clean, c.cgroup));

		struct containers_class again;
		CHECK(containers_classify_path(c.cgroup, &again) == 0);
		CHECK(again.kind == c.kind && !strcmp(again.runtime_id, c.runtime_id) &&
		      !strcmp(again.id, c.id));

		check_name(&c, NULL, 1796126400);

		struct containers_meta md = CONTAINERS_META_INIT;
		char v[256];
		static const char *const keys[] = { "io.kubernetes.pod.name",
						    "io.kubernetes.pod.namespace",
						    "io.kubernetes.container.name" };
		for (int i = 0; i < 3; i++) {
			line(text, i + 1, v, sizeof(v));
			if (v[0])
				CHECK(containers_meta_set_label(&md, keys[i], v) == 0);
		}
		line(text, 4, v, sizeof(v));
		CHECK(containers_meta_set_string(&md.name, v) == 0);
		check_name(&c, &md, (int64_t)(data[0] >> 2) * 86400 * 7 + 1796126400 - 86400 * 400);
		containers_meta_free(&md);
	}

	char app[CONTAINERS_PATH_MAX];
	if (containers_app_id(text, app, sizeof(app)) == 0)
		CHECK(!strncmp(text, app, strlen(app)));
	free(text);
	return 0;
}
