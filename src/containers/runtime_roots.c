#include "containers/runtime_roots.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/file.h"
#include "util/log.h"
#include "util/last_error.h"

LAST_ERROR_DEFINE(containers_roots)

#define CONFIG_MAX (64u << 10) /* a daemon's config file: a few KiB */

static const char *const defaults[CONTAINERS_RT_COUNT][CONTAINERS_ROOTS_MAX] = {
	[CONTAINERS_RT_DOCKER] = { "/var/lib/docker" },
	[CONTAINERS_RT_CONTAINERD] = { "/run/containerd", "/run/k3s/containerd",
				       "/run/k0s/containerd",
				       "/var/snap/microk8s/common/run/containerd" },
	[CONTAINERS_RT_STORAGE] = { "/var/lib/containers/storage", "/run/containers/storage" },
};

/*
 * What each daemon is called and how it is told where its state and config
 * are (dir_of: the root from its flag's value; NULL: the value is the root).
 */
static const struct daemon {
	const char *comm;
	enum containers_runtime rt;
	const char *const *dir_flags, *const *config_flags;
	int (*dir_of)(const char *path, char *out, size_t outlen);
	const char *default_config;
	int (*parse_config)(const char *buf, size_t len, char *out, size_t outlen);
} daemons[] = {
	{ "dockerd", CONTAINERS_RT_DOCKER, (const char *const[]){ "--data-root", "-g", "--graph", NULL },
	  (const char *const[]){ "--config-file", NULL }, NULL, "/etc/docker/daemon.json",
	  containers_parse_daemon_json },
	{ "containerd", CONTAINERS_RT_CONTAINERD, (const char *const[]){ "--state", NULL },
	  (const char *const[]){ "--config", "-c", NULL }, NULL, "/etc/containerd/config.toml",
	  containers_parse_containerd_toml },
	/* podman's and CRI-O's monitor, one per container: its bundle is in the storage root */
	{ "conmon", CONTAINERS_RT_STORAGE, (const char *const[]){ "--bundle", "-b", NULL },
	  (const char *const[]){ NULL }, containers_storage_root_of },
};

int containers_roots_add(struct containers_roots *r, enum containers_runtime rt, const char *dir)
{
	char clean[CONTAINERS_ROOT_LEN];
	size_t n = strlen(dir);

	if (dir[0] != '/' || n >= sizeof(clean))
		return 0;
	memcpy(clean, dir, n + 1);
	while (n > 1 && clean[n - 1] == '/') /* "/data/docker/" is "/data/docker" */
		clean[--n] = '\0';
	for (unsigned i = 0; i < r->n[rt]; i++)
		if (!strcmp(r->dir[rt][i], clean))
			return 0;
	if (r->n[rt] == CONTAINERS_ROOTS_MAX)
		return 0;
	memcpy(r->dir[rt][r->n[rt]++], clean, n + 1);
	return 1;
}

void containers_roots_defaults(struct containers_roots *out)
{
	memset(out, 0, sizeof(*out)); /* whole: roots are compared with memcmp */
	for (int rt = 0; rt < CONTAINERS_RT_COUNT; rt++)
		for (int i = 0; i < CONTAINERS_ROOTS_MAX && defaults[rt][i]; i++)
			containers_roots_add(out, rt, defaults[rt][i]);
}

int containers_cmdline_flag(const char *cmdline, size_t len, const char *const *names, char *out,
			    size_t outlen)
{
	const char *found = NULL, *end = cmdline + len;
	size_t found_len = 0;

	for (const char *a = cmdline; a < end;) {
		size_t al = strnlen(a, end - a);
		const char *next = a + al + 1;
		for (const char *const *n = names; *n; n++) {
			size_t nl = strlen(*n);
			if (al < nl || memcmp(a, *n, nl))
				continue;
			if (al == nl && next < end) { /* "--flag value" */
				found = next;
				found_len = strnlen(next, end - next);
			} else if (al > nl && a[nl] == '=') { /* "--flag=value" */
				found = a + nl + 1;
				found_len = al - nl - 1;
			}
		}
		a = next;
	}
	if (!found || !found_len)
		return -ENOENT;
	if (found_len >= outlen)
		return -ENAMETOOLONG;
	memcpy(out, found, found_len);
	out[found_len] = '\0';
	return 0;
}

int containers_storage_root_of(const char *path, char *out, size_t outlen)
{
	/* the last "/<driver>-containers/" that has "<id>/userdata" after it */
	for (const char *p = path + strlen(path); p > path;) {
		const char *seg = p - 1;
		while (seg > path && *seg != '/')
			seg--;
		size_t seg_len = (size_t)(p - seg);
		const char *rest = p; /* "/<id>/userdata..." */
		if (seg_len > 12 && !memcmp(p - 11, "-containers", 11) && *rest == '/') {
			const char *id_end = strchr(rest + 1, '/');
			if (id_end && id_end > rest + 1 && !strncmp(id_end, "/userdata", 9) &&
			    (id_end[9] == '/' || !id_end[9])) {
				size_t n = (size_t)(seg - path);
				if (!n || n >= outlen)
					return -EINVAL;
				memmove(out, path, n); /* out may be path */
				out[n] = '\0';
				return 0;
			}
		}
		p = seg;
	}
	return -EINVAL;
}

int containers_parse_daemon_json(const char *buf, size_t len, char *out, size_t outlen)
{
	json_error_t err;
	json_t *root = json_loadb(buf, len, 0, &err);
	int rc = -ENOENT;

	if (!root)
		return fail(-EINVAL, "daemon.json: not JSON: line %d column %d: %s", err.line,
			    err.column, err.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return fail(-EINVAL, "daemon.json: not an object");
	}
	/* "graph" is what Docker called it before 17.05 */
	static const char *const keys[] = { "data-root", "graph" };
	for (size_t i = 0; i < 2 && rc == -ENOENT; i++) {
		const char *v = json_string_value(json_object_get(root, keys[i]));
		if (v && *v)
			rc = snprintf(out, outlen, "%s", v) < (int)outlen ? 0 : -ENAMETOOLONG;
	}
	json_decref(root);
	return rc;
}

/* A TOML basic ("..." with escapes) or literal ('...') string at s: its end, or NULL. */
static const char *toml_string(const char *s, const char *end, char *out, size_t outlen)
{
	char q = *s++;
	size_t n = 0;

	for (; s < end && *s != q && *s != '\n'; s++) {
		char c = *s;
		if (q == '"' && c == '\\') {
			if (++s == end)
				return NULL;
			static const char from[] = "\"\\/btnfr", to[] = "\"\\/\b\t\n\f\r";
			const char *k = memchr(from, *s, sizeof(from) - 1);
			if (!k) /* \uXXXX never names a path we could use */
				return NULL;
			c = to[k - from];
		}
		if (n + 1 >= outlen)
			return NULL;
		out[n++] = c;
	}
	if (s == end || *s != q)
		return NULL;
	out[n] = '\0';
	return s + 1;
}

int containers_parse_containerd_toml(const char *buf, size_t len, char *out, size_t outlen)
{
	const char *end = buf + len;

	for (const char *line = buf; line < end;) {
		const char *eol = memchr(line, '\n', end - line), *p = line;
		if (!eol)
			eol = end;
		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		if (p < eol && *p == '[') /* a table: top-level keys are behind us */
			return -ENOENT;
		if (eol - p > 5 && !memcmp(p, "state", 5) && (p[5] == ' ' || p[5] == '\t' || p[5] == '=')) {
			p += 5;
			while (p < eol && (*p == ' ' || *p == '\t'))
				p++;
			if (p == eol || *p++ != '=')
				return fail(-EINVAL, "config.toml: state: no '='");
			while (p < eol && (*p == ' ' || *p == '\t'))
				p++;
			if (p == eol || (*p != '"' && *p != '\''))
				return fail(-EINVAL, "config.toml: state: not a string");
			if (!toml_string(p, eol, out, outlen))
				return fail(-EINVAL, "config.toml: state: a malformed or too long string");
			return out[0] ? 0 : -ENOENT;
		}
		line = eol + 1;
	}
	return -ENOENT;
}

/* Reads host_root + path whole (a config file): the bytes, or -errno. */
static ssize_t read_config(const char *host_root, const char *path, char *buf, size_t size)
{
	char full[CONTAINERS_ROOT_LEN * 2];

	if (snprintf(full, sizeof(full), "%s%s", host_root, path) >= (int)sizeof(full))
		return -ENAMETOOLONG;
	return file_read_small(full, buf, size);
}

static void from_config(const char *host_root, const struct daemon *d, const char *path,
			struct containers_roots *out)
{
	static __thread char buf[CONFIG_MAX];
	char dir[CONTAINERS_ROOT_LEN];
	if (!path || !d->parse_config)
		return;
	ssize_t n = read_config(host_root, path, buf, sizeof(buf));

	if (n <= 0)
		return;
	int rc = d->parse_config(buf, (size_t)n, dir, sizeof(dir));
	if (!rc) {
		containers_roots_add(out, d->rt, dir);
	} else if (rc != -ENOENT) {
		/* said once per file and error: the look is repeated while state files are missing */
		static __thread char said[CONTAINERS_ROOT_LEN + 256];
		char now[sizeof(said)];
		snprintf(now, sizeof(now), "%s: %s", path, containers_roots_last_error());
		if (strcmp(now, said)) {
			log_warn("%s: its state dir is taken as the default", now);
			memcpy(said, now, sizeof(said));
		}
	}
}

/* One running daemon: its state dir as given, else its config file's. */
static void from_process(const char *host_root, const char *pid, struct containers_roots *out)
{
	char path[64], comm[32], cmdline[8192], dir[CONTAINERS_ROOT_LEN];

	snprintf(path, sizeof(path), "/proc/%s/comm", pid);
	ssize_t n = file_read_small(path, comm, sizeof(comm));
	if (n <= 0)
		return;
	comm[strcspn(comm, "\n")] = '\0';
	for (size_t i = 0; i < sizeof(daemons) / sizeof(daemons[0]); i++) {
		const struct daemon *d = &daemons[i];
		if (strcmp(comm, d->comm))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
		n = file_read_small(path, cmdline, sizeof(cmdline));
		if (n <= 0)
			return;
		char root[CONTAINERS_ROOT_LEN];
		if (containers_cmdline_flag(cmdline, (size_t)n, d->dir_flags, dir, sizeof(dir)) == 0) {
			if (!d->dir_of)
				containers_roots_add(out, d->rt, dir);
			else if (!d->dir_of(dir, root, sizeof(root)))
				containers_roots_add(out, d->rt, root);
		}
		else if (containers_cmdline_flag(cmdline, (size_t)n, d->config_flags, dir,
						 sizeof(dir)) == 0)
			from_config(host_root, d, dir, out);
		return;
	}
}

bool containers_roots_daemon(const char *comm)
{
	for (size_t i = 0; i < sizeof(daemons) / sizeof(daemons[0]); i++)
		if (!strcmp(comm, daemons[i].comm))
			return true;
	return false;
}

void containers_roots_find(const char *host_root, const uint32_t *pids, size_t n_pids,
			   struct containers_roots *out)
{
	char pid[16];

	if (!host_root)
		host_root = "";
	containers_roots_defaults(out);
	for (size_t i = 0; i < sizeof(daemons) / sizeof(daemons[0]); i++)
		from_config(host_root, &daemons[i], daemons[i].default_config, out);
	if (pids) {
		for (size_t i = 0; i < n_pids; i++) {
			snprintf(pid, sizeof(pid), "%u", pids[i]);
			from_process(host_root, pid, out);
		}
		return;
	}
	DIR *d = opendir("/proc");
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));)
		if (isdigit((unsigned char)e->d_name[0]))
			from_process(host_root, e->d_name, out);
	closedir(d);
}
