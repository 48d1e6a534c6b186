#include "containers/rules.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* What a row checks on the path once its scope matched. */
enum test {
	T_ALWAYS,
	T_CONTAINS,	  /* arg occurs in the path */
	T_SUFFIX,	  /* the path ends with arg */
	T_ID_AFTER,	  /* arg then 64 [a-z0-9]; leftmost such arg (Go regexp `arg([a-z0-9]{64})`) */
	T_ID_ANYWHERE,	  /* the leftmost run of 64 [a-z0-9] */
	T_ID_AT_END,	  /* the path ends with arg, 64 [a-z0-9], arg2 */
	T_HAS_SECOND,	  /* the path has a second component */
	T_SECOND_IS,	  /* the second component is arg */
	T_FIRST_HAS_REST, /* the first component is longer than the scope's first_prefix */
};

/* Where the container_id comes from when the row matched. */
enum id_from {
	ID_METADATA, /* the runtime's metadata (kinds with needs_metadata) */
	ID_PATH,     /* the cgroup path itself ("/" for the root) */
	ID_FIXED,    /* id_arg */
	ID_TALOS,    /* "/talos/<second>" */
	ID_SLICE,    /* "/<first>/<second>", systemd's "\x2d" unescaped to "-" */
	ID_LXC,	     /* "/lxc/<second>" */
	ID_LXC_PAYLOAD, /* "/lxc/<first without lxc.payload.>" */
};

/*
 * A row applies when every scope field given matches (none given: always),
 * then its test passes. Rows are tried in order; the first that applies wins.
 */
struct rule {
	const char *name;
	/* scope */
	const char *path_is;	  /* the whole path */
	const char *first;	  /* the first component is one of "a|b|c" */
	const char *first_prefix; /* the first component starts with this */
	const char *second_prefix;
	const char *contains;
	bool one_component; /* fewer than two components ("/", "/x") */
	/* test */
	enum test test;
	const char *arg, *arg2;
	/* result */
	enum containers_kind kind;
	enum id_from id;
	const char *id_arg;
};

#define SYSTEM_SLICES "system.slice|runtime.slice|reserved.slice|kube.slice|azure.slice|podruntime.slice"

/*
 * Coroot's containerByCgroup() in its order (cgroup/cgroup.go, 2026-08), with
 * the podman rows of its podman pull request (machine.slice, user.slice,
 * libpod-payload, libpod-conmon) and ours marked "nodescope". Where Coroot
 * returns an error ("invalid docker cgroup", "unknown container") the row
 * says CONTAINERS_UNKNOWN: we keep such a container under its cgroup path.
 */
static const struct rule rules[] = {
	{ "talos init", .path_is = "/init", .test = T_ALWAYS, .kind = CONTAINERS_TALOS,
	  .id = ID_FIXED, .id_arg = "/talos/init" },
	{ "rootless podman monitor", .first = "user.slice", .test = T_CONTAINS,
	  .arg = "libpod-conmon-", .kind = CONTAINERS_CONMON, .id = ID_PATH },
	{ "rootless podman", .first = "user.slice", .test = T_ID_AT_END, .arg = "libpod-",
	  .arg2 = ".scope", .kind = CONTAINERS_PODMAN },
	{ "user or init", .first = "user.slice|init.scope|systemd", .test = T_ALWAYS,
	  .kind = CONTAINERS_STANDALONE, .id = ID_PATH },

	{ "docker", .first = "docker", .test = T_ID_ANYWHERE, .kind = CONTAINERS_DOCKER },
	{ "docker without id", .first = "docker", .test = T_ALWAYS, .kind = CONTAINERS_UNKNOWN,
	  .id = ID_PATH },
	{ "docker scope", .first = "system.slice", .second_prefix = "docker-",
	  .test = T_ID_ANYWHERE, .kind = CONTAINERS_DOCKER },
	{ "docker scope without id", .first = "system.slice", .second_prefix = "docker-",
	  .test = T_ALWAYS, .kind = CONTAINERS_UNKNOWN, .id = ID_PATH },

	{ "kubepods cri-o", .contains = "kubepods", .test = T_ID_AFTER, .arg = "crio-",
	  .kind = CONTAINERS_CRIO },
	{ "kubepods cri-o monitor", .contains = "kubepods", .test = T_CONTAINS,
	  .arg = "crio-conmon-", .kind = CONTAINERS_CONMON, .id = ID_PATH },
	{ "kubepods containerd", .contains = "kubepods", .test = T_ID_AFTER,
	  .arg = "cri-containerd-", .kind = CONTAINERS_CONTAINERD },
	{ "kubepods containerd (cgroupfs)", .contains = "kubepods", .test = T_ID_AFTER,
	  .arg = "cri-containerd:", .kind = CONTAINERS_CONTAINERD },
	{ "kubepods docker", .contains = "kubepods", .test = T_ID_ANYWHERE,
	  .kind = CONTAINERS_DOCKER },
	{ "kubepods sandbox", .contains = "kubepods", .test = T_ALWAYS,
	  .kind = CONTAINERS_SANDBOX, .id = ID_PATH },

	{ "talos service", .first = "system|podruntime", .test = T_HAS_SECOND,
	  .kind = CONTAINERS_TALOS, .id = ID_TALOS },
	{ "talos without service", .first = "system|podruntime", .test = T_ALWAYS,
	  .kind = CONTAINERS_UNKNOWN, .id = ID_PATH },

	{ "podman monitor (split)", .first = SYSTEM_SLICES, .test = T_CONTAINS,
	  .arg = "libpod-conmon-", .kind = CONTAINERS_CONMON, .id = ID_PATH },
	{ "podman (split)", .first = SYSTEM_SLICES, .test = T_ID_AFTER, .arg = "libpod-payload-",
	  .kind = CONTAINERS_PODMAN },
	/* Coroot drops these in calcId ("/system.slice/crio-conmon-"): nodescope */
	{ "cri-o monitor", .first = "system.slice", .second_prefix = "crio-conmon-",
	  .test = T_ALWAYS, .kind = CONTAINERS_CONMON, .id = ID_PATH },
	{ "system scope", .first = SYSTEM_SLICES, .test = T_SUFFIX, .arg = ".scope",
	  .kind = CONTAINERS_STANDALONE, .id = ID_PATH },
	{ "systemd service", .first = SYSTEM_SLICES, .test = T_HAS_SECOND,
	  .kind = CONTAINERS_SYSTEMD, .id = ID_SLICE },
	{ "system slice alone", .first = SYSTEM_SLICES, .test = T_ALWAYS,
	  .kind = CONTAINERS_UNKNOWN, .id = ID_PATH },

	{ "lxc", .first = "lxc", .test = T_HAS_SECOND, .kind = CONTAINERS_LXC, .id = ID_LXC },
	{ "lxc without name", .first = "lxc", .test = T_ALWAYS, .kind = CONTAINERS_UNKNOWN,
	  .id = ID_PATH },
	{ "lxc payload", .first_prefix = "lxc.payload.", .test = T_FIRST_HAS_REST,
	  .kind = CONTAINERS_LXC, .id = ID_LXC_PAYLOAD },
	{ "lxc payload without name", .first_prefix = "lxc.payload.", .test = T_ALWAYS,
	  .kind = CONTAINERS_UNKNOWN, .id = ID_PATH },

	{ "podman monitor", .first = "machine.slice", .test = T_CONTAINS,
	  .arg = "libpod-conmon-", .kind = CONTAINERS_CONMON, .id = ID_PATH },
	{ "podman", .first = "machine.slice", .test = T_ID_AT_END, .arg = "libpod-",
	  .arg2 = ".scope", .kind = CONTAINERS_PODMAN },
	{ "machine", .first = "machine.slice", .test = T_ALWAYS, .kind = CONTAINERS_STANDALONE,
	  .id = ID_PATH },

	{ "top level", .one_component = true, .test = T_ALWAYS, .kind = CONTAINERS_STANDALONE,
	  .id = ID_PATH },

	/* nodescope: podman's cgroupfs manager (no systemd), as on the build machine */
	{ "podman monitor (cgroupfs)", .first = "libpod_parent", .test = T_SECOND_IS,
	  .arg = "conmon", .kind = CONTAINERS_CONMON, .id = ID_PATH },
	{ "podman (cgroupfs)", .first = "libpod_parent", .test = T_ID_AT_END, .arg = "libpod-",
	  .arg2 = "", .kind = CONTAINERS_PODMAN },

	{ "unknown", .test = T_ALWAYS, .kind = CONTAINERS_UNKNOWN, .id = ID_PATH },
};

/* A path split the way Coroot splits it: strings.Split(TrimLeft(p, "/"), "/"). */
struct parts {
	const char *first, *second;
	size_t first_len, second_len;
	bool has_second;
};

static struct parts split(const char *path)
{
	struct parts p = { 0 };

	while (*path == '/')
		path++;
	p.first = path;
	const char *slash = strchr(path, '/');
	p.first_len = slash ? (size_t)(slash - path) : strlen(path);
	if (slash) {
		p.has_second = true;
		p.second = slash + 1;
		const char *s2 = strchr(p.second, '/');
		p.second_len = s2 ? (size_t)(s2 - p.second) : strlen(p.second);
	}
	return p;
}

static bool in_list(const char *list, const char *s, size_t n)
{
	for (const char *p = list;;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !memcmp(p, s, n))
			return true;
		if (!bar)
			return false;
		p = bar + 1;
	}
}

static bool id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool id_at(const char *s, char *id)
{
	for (int i = 0; i < CONTAINERS_RUNTIME_ID_LEN; i++)
		if (!id_char(s[i]))
			return false;
	memcpy(id, s, CONTAINERS_RUNTIME_ID_LEN);
	id[CONTAINERS_RUNTIME_ID_LEN] = '\0';
	return true;
}

static bool scope_matches(const struct rule *r, const char *path, const struct parts *p)
{
	if (r->path_is && strcmp(path, r->path_is))
		return false;
	if (r->first && !in_list(r->first, p->first, p->first_len))
		return false;
	if (r->first_prefix &&
	    (p->first_len < strlen(r->first_prefix) ||
	     strncmp(p->first, r->first_prefix, strlen(r->first_prefix))))
		return false;
	if (r->second_prefix &&
	    (!p->has_second || p->second_len < strlen(r->second_prefix) ||
	     strncmp(p->second, r->second_prefix, strlen(r->second_prefix))))
		return false;
	if (r->contains && !strstr(path, r->contains))
		return false;
	if (r->one_component && p->has_second)
		return false;
	return true;
}

static bool test_passes(const struct rule *r, const char *path, const struct parts *p, char *id)
{
	size_t n = strlen(path);

	switch (r->test) {
	case T_ALWAYS:
		return true;
	case T_CONTAINS:
		return strstr(path, r->arg) != NULL;
	case T_SUFFIX:
		return n >= strlen(r->arg) && !strcmp(path + n - strlen(r->arg), r->arg);
	case T_ID_AFTER:
		for (const char *s = strstr(path, r->arg); s; s = strstr(s + 1, r->arg))
			if (id_at(s + strlen(r->arg), id))
				return true;
		return false;
	case T_ID_ANYWHERE:
		for (size_t i = 0, run = 0; i < n; i++) {
			run = id_char(path[i]) ? run + 1 : 0;
			if (run == CONTAINERS_RUNTIME_ID_LEN)
				return id_at(path + i + 1 - run, id);
		}
		return false;
	case T_ID_AT_END: {
		size_t pre = strlen(r->arg), suf = strlen(r->arg2);
		if (n < pre + CONTAINERS_RUNTIME_ID_LEN + suf)
			return false;
		const char *s = path + n - suf - CONTAINERS_RUNTIME_ID_LEN - pre;
		return !strncmp(s, r->arg, pre) && !strcmp(path + n - suf, r->arg2) &&
		       id_at(s + pre, id);
	}
	case T_HAS_SECOND:
		return p->has_second && p->second_len > 0;
	case T_SECOND_IS:
		return p->has_second && p->second_len == strlen(r->arg) &&
		       !strncmp(p->second, r->arg, p->second_len);
	case T_FIRST_HAS_REST:
		return p->first_len > strlen(r->first_prefix);
	}
	return false;
}

/* Appends s[0..n) to out at *o; -ENAMETOOLONG when it does not fit. */
static int put(char *out, size_t *o, const char *s, size_t n)
{
	if (*o + n >= CONTAINERS_PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(out + *o, s, n);
	*o += n;
	out[*o] = '\0';
	return 0;
}

static int make_id(const struct rule *r, const char *path, const struct parts *p, char *out)
{
	size_t o = 0;
	int rc = 0;

	out[0] = '\0';
	switch (r->id) {
	case ID_METADATA:
		return 0;
	case ID_PATH:
		return put(out, &o, path[0] ? path : "/", path[0] ? strlen(path) : 1);
	case ID_FIXED:
		return put(out, &o, r->id_arg, strlen(r->id_arg));
	case ID_TALOS:
		if (!(rc = put(out, &o, "/talos/", 7)))
			rc = put(out, &o, p->second, p->second_len);
		return rc;
	case ID_LXC:
		if (!(rc = put(out, &o, "/lxc/", 5)))
			rc = put(out, &o, p->second, p->second_len);
		return rc;
	case ID_LXC_PAYLOAD: {
		size_t skip = strlen("lxc.payload.");
		if (!(rc = put(out, &o, "/lxc/", 5)))
			rc = put(out, &o, p->first + skip, p->first_len - skip);
		return rc;
	}
	case ID_SLICE:
		rc = put(out, &o, "/", 1);
		if (!rc)
			rc = put(out, &o, p->first, p->first_len);
		if (!rc)
			rc = put(out, &o, "/", 1);
		/* systemd escapes '-' inside a unit name's parts as "\x2d" */
		for (size_t i = 0; !rc && i < p->second_len;) {
			if (p->second_len - i >= 4 && !memcmp(p->second + i, "\\x2d", 4)) {
				rc = put(out, &o, "-", 1);
				i += 4;
			} else {
				rc = put(out, &o, p->second + i, 1);
				i++;
			}
		}
		return rc;
	}
	return -EINVAL;
}

int containers_classify_path(const char *cgroup_path, struct containers_class *out)
{
	struct parts p = split(cgroup_path);
	size_t n = strlen(cgroup_path);

	if (n >= sizeof(out->cgroup))
		return -ENAMETOOLONG;
	if (n && cgroup_path[0] != '/') /* ids start with '/': a relative path is no cgroup's */
		return -EINVAL;
	memcpy(out->cgroup, cgroup_path, n + 1);
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const struct rule *r = &rules[i];
		char id[CONTAINERS_RUNTIME_ID_LEN + 1] = "";

		if (!scope_matches(r, cgroup_path, &p) || !test_passes(r, cgroup_path, &p, id))
			continue;
		out->kind = r->kind;
		out->rule = r->name;
		memcpy(out->runtime_id, id, sizeof(id));
		return make_id(r, cgroup_path, &p, out->id);
	}
	return -EINVAL; /* not reached: the last row always applies */
}

int containers_classify(const char *proc_cgroup_text, const char *base,
			struct containers_class *out)
{
	char path[CONTAINERS_PATH_MAX];
	int rc = containers_cgroup_path(proc_cgroup_text, base, path, sizeof(path));

	if (rc)
		return rc;
	return containers_classify_path(path, out);
}

bool containers_id_reported(const char *container_id)
{
	struct containers_class c;

	if (!container_id || !*container_id)
		container_id = "/";
	/* Named ids ("/k8s/...", "/docker/x") classify as unknown: reported. */
	if (containers_classify_path(container_id, &c))
		return true;
	return containers_kind_info(c.kind)->reported;
}

bool containers_id_named(const char *container_id)
{
	struct containers_class c;

	size_t run = 0, longest = 0;

	if (!container_id || !*container_id)
		return true;
	/* Asked for every series at every exposition: a path without a runtime's id is a name. */
	for (const char *p = container_id; *p && longest < CONTAINERS_RUNTIME_ID_LEN; p++) {
		bool alnum = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9');
		run = alnum ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	if (longest < CONTAINERS_RUNTIME_ID_LEN)
		return true;
	/* A name from metadata classifies as unknown; a runtime's cgroup path as its runtime's. */
	if (containers_classify_path(container_id, &c))
		return true;
	return !containers_kind_info(c.kind)->needs_metadata;
}
