#include "containers/runtime_read.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "containers/rules.h"
#include "containers/runtime_json.h"
#include "util/last_error.h"

LAST_ERROR_DEFINE(containers_read)

enum format { F_DOCKER, F_DOCKER_HOSTCONFIG, F_OCI, F_STORAGE_INDEX };

/*
 * Where each kind's state lives, tried in order: below each of a runtime's
 * roots (struct containers_roots: its configured and default dirs). "%s" is
 * the container id, a "*" a containerd namespace or a storage driver. A
 * primary row that exists ends the search (its parse error is the answer);
 * an extra row adds what it can to a primary's result and is skipped when
 * absent or malformed.
 */
static const struct source {
	enum containers_kind kind;
	enum format format;
	bool extra;
	enum containers_runtime rt;
	const char *pattern;
} sources[] = {
#define TASKS(kind)                                                                            \
	{ kind, F_OCI, false, CONTAINERS_RT_CONTAINERD, "/io.containerd.runtime.v2.task/*/%s/config.json" }, \
	{ kind, F_OCI, false, CONTAINERS_RT_CONTAINERD, "/io.containerd.runtime.v1.linux/*/%s/config.json" }
	{ CONTAINERS_DOCKER, F_DOCKER, false, CONTAINERS_RT_DOCKER, "/containers/%s/config.v2.json" },
	{ CONTAINERS_DOCKER, F_DOCKER_HOSTCONFIG, true, CONTAINERS_RT_DOCKER, "/containers/%s/hostconfig.json" },
	TASKS(CONTAINERS_DOCKER),
	TASKS(CONTAINERS_CONTAINERD),
	/* containers/storage, whatever its driver (overlay, vfs, btrfs: the "*") */
	{ CONTAINERS_CRIO, F_OCI, false, CONTAINERS_RT_STORAGE, "/*-containers/%s/userdata/config.json" },
	{ CONTAINERS_PODMAN, F_OCI, false, CONTAINERS_RT_STORAGE, "/*-containers/%s/userdata/config.json" },
	{ CONTAINERS_PODMAN, F_STORAGE_INDEX, true, CONTAINERS_RT_STORAGE, "/*-containers/containers.json" },
	{ CONTAINERS_PODMAN, F_STORAGE_INDEX, true, CONTAINERS_RT_STORAGE, "/*-containers/volatile-containers.json" },
#undef TASKS
};

/* Reads a whole file into a malloc'd buffer: 0 or -errno. */
static int read_file(const char *path, char **buf, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	if ((size_t)st.st_size > CONTAINERS_STATE_FILE_MAX) {
		close(fd);
		return -EFBIG;
	}
	size_t cap = (size_t)st.st_size + 1, n = 0;
	char *b = malloc(cap);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) { /* the file may grow or shrink while read: read to EOF */
		if (n == cap) {
			if (cap > CONTAINERS_STATE_FILE_MAX) {
				free(b);
				close(fd);
				return -EFBIG;
			}
			char *g = realloc(b, cap * 2);
			if (!g) {
				free(b);
				close(fd);
				return -ENOMEM;
			}
			b = g;
			cap *= 2;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int rc = -errno;
			free(b);
			close(fd);
			return rc;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*buf = b;
	*len = n;
	return 0;
}

static int parse(enum format f, const char *buf, size_t len, const char *id,
		 struct containers_meta *out)
{
	switch (f) {
	case F_DOCKER:
		return containers_parse_docker_config(buf, len, out);
	case F_DOCKER_HOSTCONFIG:
		return containers_parse_docker_hostconfig(buf, len, out);
	case F_OCI:
		return containers_parse_oci_config(buf, len, out);
	case F_STORAGE_INDEX:
		return containers_parse_storage_index(buf, len, id, out);
	}
	return -EINVAL;
}

/* The first existing file of a pattern (expanding a namespace "*"): 0, -ENOENT. */
static int find_file(const char *root, const char *dir, const char *pattern, const char *id,
		     char *path, size_t size)
{
	char want[1024];
	size_t rl = 0;

	/* root's and dir's own glob characters are escaped: only the pattern's "*" expands */
	for (const char *const *part = (const char *const[]){ root, dir, NULL }; *part; part++)
		for (const char *r = *part; *r; r++) {
			if (rl + 2 >= sizeof(want))
				return -ENAMETOOLONG;
			if (strchr("*?[\\", *r))
				want[rl++] = '\\';
			want[rl++] = *r;
		}
	want[rl] = '\0';
	if (snprintf(want + rl, sizeof(want) - rl, pattern, id) >= (int)(sizeof(want) - rl))
		return -ENAMETOOLONG;
	glob_t g;
	int rc = glob(want, GLOB_NOSORT, NULL, &g);
	if (rc == 0 && g.gl_pathc > 0)
		snprintf(path, size, "%s", g.gl_pathv[0]);
	globfree(&g);
	return rc == 0 ? 0 : rc == GLOB_NOSPACE ? -ENOMEM : -ENOENT;
}

static bool valid_id(const char *id)
{
	size_t n = 0;

	for (; id[n]; n++)
		if (!((id[n] >= 'a' && id[n] <= 'z') || (id[n] >= '0' && id[n] <= '9')))
			return false;
	return n == CONTAINERS_RUNTIME_ID_LEN;
}

/* Reads and parses the file of one row under one dir: 0 found, -ENOENT absent, else an error. */
static int read_one(const struct source *s, const char *root, const char *dir,
		    const char *runtime_id, struct containers_meta *out, char *tried, size_t tsize)
{
	char path[1024], *buf = NULL;
	size_t len = 0;
	int rc = find_file(root, dir, s->pattern, runtime_id, path, sizeof(path));

	if (rc) {
		if (!s->extra) {
			size_t tl = strlen(tried);
			snprintf(tried + tl, tsize - tl, "%s%s%s", tl ? ", " : "", root, dir);
			tl = strlen(tried);
			/* the pattern's "%s" shown as <id> */
			snprintf(tried + tl, tsize - tl, s->pattern, "<id>");
		}
		return -ENOENT;
	}
	rc = read_file(path, &buf, &len);
	if (!rc) {
		rc = parse(s->format, buf, len, runtime_id, out);
		free(buf);
		if (rc == -ENOMEM)
			return fail(rc, "%s: out of memory", path);
		if (rc && !s->extra)
			return fail(rc, "%s: %s", path, containers_json_last_error());
	} else if (!s->extra) {
		return fail(rc, "cannot read %s: %s", path, strerror(-rc));
	}
	return 0;
}

int containers_meta_read(enum containers_kind kind, const char *runtime_id, const char *root,
			 const struct containers_roots *roots, struct containers_meta *out)
{
	char tried[1024] = "";
	bool found = false;
	struct containers_roots defaults;

	if (!containers_kind_info(kind)->needs_metadata)
		return fail(-EOPNOTSUPP, "%s containers have no runtime metadata",
			    containers_kind_info(kind)->name);
	if (!valid_id(runtime_id))
		return fail(-EINVAL, "not a container id: \"%.80s\" (want 64 of [a-z0-9])", runtime_id);
	if (!root)
		root = "";
	if (!roots) {
		containers_roots_defaults(&defaults);
		roots = &defaults;
	}

	/* an extra row of the primary's runtime is read in the primary's root only: its
	 * index there is the container's (another root's may hold other containers) */
	unsigned found_rt = 0, found_dir = 0;
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		const struct source *s = &sources[i];
		bool same_root = found && s->rt == found_rt;
		unsigned d = same_root ? found_dir : 0, n = same_root ? found_dir + 1 : roots->n[s->rt];

		if (s->kind != kind || s->extra != found)
			continue;
		for (; d < n; d++) {
			int rc = read_one(s, root, roots->dir[s->rt][d], runtime_id, out, tried,
					  sizeof(tried));
			if (rc == -ENOENT)
				continue;
			if (rc)
				return rc;
			if (!found) {
				found_rt = s->rt;
				found_dir = d;
			}
			found = true;
			break;
		}
	}
	if (!found)
		return fail(-ENOENT, "no state file for %s container %.12s (tried %s)",
			    containers_kind_info(kind)->name, runtime_id, tried);
	return 0;
}
