#include "resources/cgroup_parse.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "containers/cgroup_path.h"

/* Copies the path of one hierarchy as Coroot keeps it ("" for its root). */
static int put_dir(char *out, const char *path, size_t len)
{
	char raw[CGROUP_DIR_MAX], clean[CGROUP_DIR_MAX];

	if (len >= sizeof(raw))
		return -ENAMETOOLONG;
	memcpy(raw, path, len);
	raw[len] = '\0';
	if (!strncmp(raw, "/lxc.payload.", 13)) {
		char *slash = strchr(raw + 1, '/');
		if (slash)
			*slash = '\0';
	}
	/* Rooted, so no ".." leads out of the hierarchy whatever the text says. */
	if (containers_path_join("/", raw, clean, sizeof(clean)))
		return -ENAMETOOLONG;
	if (!strcmp(clean, "/") || !strcmp(clean, "/init.scope") || !clean[0])
		clean[0] = '\0';
	strcpy(out, clean);
	return 0;
}

/* Whether the comma-separated list ctrls[0..n) names ctrl. */
static bool has_controller(const char *ctrls, size_t n, const char *ctrl)
{
	size_t l = strlen(ctrl);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && ctrls[j] != ',')
			j++;
		if (j - i == l && !memcmp(ctrls + i, ctrl, l))
			return true;
		i = j + 1;
	}
	return false;
}

int cgroup_dirs_parse(const char *text, struct cgroup_dirs *out)
{
	bool any = false;

	memset(out, 0, sizeof(*out));
	for (const char *line = text; *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (c1 + 1 - line)) : NULL;
		if (c2) {
			const char *ctrls = c1 + 1, *path = c2 + 1;
			size_t nctrls = c2 - ctrls, plen = line + len - path;
			any = true;
			struct {
				const char *name;
				char *dst;
			} want[] = { { "cpu", out->cpu },
				     { "cpuacct", out->cpuacct },
				     { "memory", out->memory },
				     { "blkio", out->blkio } };
			if (nctrls == 0 && put_dir(out->v2, path, plen))
				return -EINVAL;
			for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
				if (has_controller(ctrls, nctrls, want[i].name) &&
				    put_dir(want[i].dst, path, plen))
					return -EINVAL;
		}
		if (!eol)
			break;
		line = eol + 1;
	}
	return any ? 0 : -EINVAL;
}

/* An unsigned decimal at *p (digits only), advancing p; -EINVAL if none or too big. */
static int scan_u64(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = *s - '0';
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*p = s;
	*out = v;
	return 0;
}

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	return s;
}

int cgroup_parse_u64(const char *text, uint64_t *out)
{
	const char *p = skip_blanks(text);
	if (scan_u64(&p, out))
		return -EINVAL;
	return *skip_blanks(p) ? -EINVAL : 0;
}

int cgroup_parse_i64(const char *text, int64_t *out)
{
	const char *p = skip_blanks(text);
	bool neg = *p == '-';
	uint64_t v;

	if (neg)
		p++;
	if (scan_u64(&p, &v) || *skip_blanks(p) || v > (uint64_t)INT64_MAX)
		return -EINVAL;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

int cgroup_kv_get(const char *text, const char *key, uint64_t *out)
{
	size_t kl = strlen(key);

	for (const char *line = text; *line;) {
		const char *eol = strchr(line, '\n');
		if (!strncmp(line, key, kl) && line[kl] == ' ') {
			const char *p = line + kl + 1;
			if (scan_u64(&p, out) || (*p && *p != '\n'))
				return -EINVAL;
			return 0;
		}
		if (!eol)
			break;
		line = eol + 1;
	}
	return -ENOENT;
}

int cgroup_cpu_v1_parse(const char *usage, const char *stat, const char *quota, const char *period,
			struct cgroup_cpu *out)
{
	uint64_t usage_ns, throttled_ns, period_us;
	int64_t quota_us;

	if (cgroup_parse_u64(usage, &usage_ns) || cgroup_kv_get(stat, "throttled_time", &throttled_ns) ||
	    cgroup_parse_i64(quota, &quota_us) || cgroup_parse_u64(period, &period_us))
		return -EINVAL;
	out->usage_s = (double)usage_ns / 1e9;
	out->throttled_s = (double)throttled_ns / 1e9;
	out->limit_cores = quota_us > 0 && period_us ? (double)quota_us / (double)period_us : 0;
	return 0;
}

int cgroup_cpu_v2_parse(const char *stat, const char *cpu_max, struct cgroup_cpu *out)
{
	uint64_t usage_us, throttled_us = 0;

	if (cgroup_kv_get(stat, "usage_usec", &usage_us))
		return -EINVAL;
	/* Without the cpu controller the file has the usage lines only. */
	if (cgroup_kv_get(stat, "throttled_usec", &throttled_us) == -EINVAL)
		return -EINVAL;
	out->usage_s = (double)usage_us / 1e6;
	out->throttled_s = (double)throttled_us / 1e6;
	out->limit_cores = 0;
	if (!cpu_max)
		return 0;
	const char *p = skip_blanks(cpu_max);
	uint64_t quota, period;
	if (!strncmp(p, "max", 3)) {
		p += 3;
		quota = 0;
	} else if (scan_u64(&p, &quota)) {
		return -EINVAL;
	}
	if (*p != ' ')
		return -EINVAL;
	p++;
	if (scan_u64(&p, &period) || *skip_blanks(p))
		return -EINVAL;
	if (quota && period)
		out->limit_cores = (double)quota / (double)period;
	return 0;
}

#define MEMORY_V1_UNLIMITED (1ull << 62)

int cgroup_memory_v1_parse(const char *stat, const char *limit, struct cgroup_memory *out)
{
	uint64_t rss, mapped, cache, lim;

	if (cgroup_kv_get(stat, "total_rss", &rss) || cgroup_kv_get(stat, "total_mapped_file", &mapped) ||
	    cgroup_kv_get(stat, "total_cache", &cache) || cgroup_parse_u64(limit, &lim))
		return -EINVAL;
	out->rss = rss + mapped;
	out->cache = cache;
	out->limit = lim > MEMORY_V1_UNLIMITED ? 0 : lim;
	return 0;
}

int cgroup_memory_v2_parse(const char *stat, const char *max, struct cgroup_memory *out)
{
	uint64_t anon, mapped, file, lim = 0;

	if (cgroup_kv_get(stat, "anon", &anon) || cgroup_kv_get(stat, "file_mapped", &mapped) ||
	    cgroup_kv_get(stat, "file", &file))
		return -EINVAL;
	if (max && strcmp(skip_blanks(max), "max\n") && strcmp(skip_blanks(max), "max") &&
	    cgroup_parse_u64(max, &lim))
		return -EINVAL;
	out->rss = anon + mapped;
	out->cache = file;
	out->limit = lim;
	return 0;
}

int cgroup_pressure_parse(const char *text, struct cgroup_pressure *out)
{
	bool some = false;

	memset(out, 0, sizeof(*out));
	for (const char *line = text; *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		double *dst = !strncmp(line, "some ", 5) ? &out->some_s
			      : !strncmp(line, "full ", 5) ? &out->full_s
							   : NULL;
		if (dst) {
			const char *t = NULL;
			for (const char *p = line; p + 6 <= line + len; p++)
				if (!memcmp(p, "total=", 6) && (p == line || p[-1] == ' ')) {
					t = p + 6;
					break;
				}
			uint64_t us;
			if (!t || scan_u64(&t, &us) || (t < line + len && *t != ' '))
				return -EINVAL;
			*dst = (double)us / 1e6;
			some |= dst == &out->some_s;
		} else if (len) {
			return -EINVAL;
		}
		if (!eol)
			break;
		line = eol + 1;
	}
	return some ? 0 : -EINVAL;
}
