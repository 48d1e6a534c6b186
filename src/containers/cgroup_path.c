#include "containers/cgroup_path.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* Appends "/el" (or "el" at the start of the output) to out. */
static int put_element(char *out, size_t *o, size_t outlen, bool rooted, const char *el, size_t len)
{
	bool sep = *o > (rooted ? 1u : 0u);

	if (*o + sep + len >= outlen)
		return -ENAMETOOLONG;
	if (sep)
		out[(*o)++] = '/';
	memcpy(out + *o, el, len);
	*o += len;
	return 0;
}

/*
 * Go's path.Clean of s[0..n) into out: "//" and "." dropped, ".." removes the
 * element before it (at a rooted path's top it is dropped, in a relative path
 * it stays), "" for an empty input (Join's result when both parts are empty).
 */
static int path_clean(const char *s, size_t n, char *out, size_t outlen)
{
	bool rooted = n > 0 && s[0] == '/';
	size_t o = 0, keep; /* keep: how far ".." may eat back */

	if (outlen < 2)
		return -ENAMETOOLONG;
	if (n == 0) {
		out[0] = '\0';
		return 0;
	}
	if (rooted)
		out[o++] = '/';
	keep = o;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && s[j] != '/')
			j++;
		const char *el = s + i;
		size_t len = j - i;
		i = j + 1;
		if (len == 0 || (len == 1 && el[0] == '.'))
			continue;
		if (len == 2 && el[0] == '.' && el[1] == '.') {
			if (o > keep) {
				while (o > keep && out[o - 1] != '/')
					o--;
				if (o > keep)
					o--; /* the separator before the dropped element */
			} else if (!rooted) {
				int rc = put_element(out, &o, outlen, rooted, el, len);
				if (rc)
					return rc;
				keep = o;
			}
			continue;
		}
		int rc = put_element(out, &o, outlen, rooted, el, len);
		if (rc)
			return rc;
	}
	if (o == 0)
		out[o++] = '.';
	out[o] = '\0';
	return 0;
}

int containers_path_join(const char *a, const char *b, char *out, size_t outlen)
{
	char tmp[2 * CONTAINERS_PATH_MAX + 2];
	size_t la = strlen(a), lb = strlen(b), n = 0;

	if (la + lb + 1 >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, a, la);
	n = la;
	if (la && lb)
		tmp[n++] = '/';
	memcpy(tmp + n, b, lb);
	n += lb;
	return path_clean(tmp, n, out, outlen);
}

/* The hierarchies Coroot looks at, and where each path goes. */
enum { H_V2, H_CPU, H_MEMORY, H_SYSTEMD, H_COUNT };
static const char *const hierarchy_names[H_COUNT] = {
	[H_V2] = "", [H_CPU] = "cpu", [H_MEMORY] = "memory", [H_SYSTEMD] = "name=systemd"
};

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int containers_cgroup_path(const char *text, const char *base, char *out, size_t outlen)
{
	char paths[H_COUNT][CONTAINERS_PATH_MAX] = { { 0 } };
	int lines = 0;

	if (base[0] && base[0] != '/')
		return -EINVAL;

	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		const char *end = nl ? nl : line + strlen(line);
		const char *c1 = memchr(line, ':', end - line);
		const char *c2 = c1 ? memchr(c1 + 1, ':', end - c1 - 1) : NULL;

		line = nl ? nl + 1 : end;
		if (!c2)
			continue;
		lines++;
		/* the path is the rest of the line: it may hold ':' itself */
		char raw[CONTAINERS_PATH_MAX], joined[CONTAINERS_PATH_MAX];
		size_t plen = end - (c2 + 1);
		if (plen >= sizeof(raw))
			return -ENAMETOOLONG;
		memcpy(raw, c2 + 1, plen);
		raw[plen] = '\0';
		/* an LXC container's own systemd nests below it: name it by its top */
		if (starts_with(raw, "/lxc.payload.")) {
			char *slash = strchr(raw + 1, '/');
			if (slash)
				*slash = '\0';
		}
		int rc = containers_path_join(base, raw, joined, sizeof(joined));
		if (rc)
			return rc;
		/* "/" and "/init.scope" count as unset; so does what no kernel writes (relative) */
		if (!strcmp(joined, "/") || !strcmp(joined, "/init.scope") ||
		    (joined[0] && joined[0] != '/'))
			continue;
		/* controllers are comma-separated; the v2 line has none ("") */
		for (const char *p = c1 + 1; p <= c2;) {
			const char *comma = memchr(p, ',', c2 - p);
			const char *cend = comma ? comma : c2;
			for (int h = 0; h < H_COUNT; h++) {
				size_t hl = strlen(hierarchy_names[h]);
				if ((size_t)(cend - p) == hl && !memcmp(p, hierarchy_names[h], hl))
					memcpy(paths[h], joined, strlen(joined) + 1);
			}
			p = cend + 1;
		}
	}
	if (!lines)
		return -EINVAL;

	const char *pick;
	if (starts_with(paths[H_CPU], "/kubepods"))
		pick = paths[H_CPU];
	else if (starts_with(paths[H_MEMORY], "/kubepods"))
		pick = paths[H_MEMORY];
	else if (paths[H_V2][0])
		pick = paths[H_V2];
	else if (paths[H_CPU][0])
		pick = paths[H_CPU];
	else if (paths[H_MEMORY][0])
		pick = paths[H_MEMORY];
	else
		pick = paths[H_SYSTEMD];
	size_t n = strlen(pick);
	if (n >= outlen)
		return -ENAMETOOLONG;
	memcpy(out, pick, n + 1);
	return 0;
}
