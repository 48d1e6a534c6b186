#include "containers/name.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Labels and variables Coroot's calcId reads. */
#define L_POD "io.kubernetes.pod.name"
#define L_NAMESPACE "io.kubernetes.pod.namespace"
#define L_CONTAINER "io.kubernetes.container.name"
#define L_SWARM_TASK "com.docker.swarm.task.name"
#define L_SWARM_SERVICE "com.docker.swarm.service.name"
#define L_STACK "com.docker.stack.namespace"

/* The characters of the random suffixes Kubernetes generates (no vowels). */
static const char k8s_suffix_chars[] = "bcdfghjklmnpqrstvwxz2456789";

#define CRONJOB_WINDOW_S (7 * 24 * 3600)

static bool k8s_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

static bool suffix_char(char c)
{
	return c && strchr(k8s_suffix_chars, c);
}

static bool all(const char *s, size_t n, bool (*ok)(char))
{
	for (size_t i = 0; i < n; i++)
		if (!ok(s[i]))
			return false;
	return true;
}

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool hex(char c)
{
	return digit(c) || (c >= 'a' && c <= 'f');
}

/*
 * Coroot's cronjobPodName, `([a-z0-9-]+)-([0-9]{8})-[suffix]{5}`, unanchored:
 * the leftmost start, then the longest name. Gives the name and the minute.
 */
static bool cronjob_pod(const char *pod, size_t *name_start, size_t *name_len, uint64_t *minute)
{
	size_t n = strlen(pod);

	for (size_t i = 0; i < n; i++) {
		size_t e = i;
		while (e < n && k8s_char(pod[e]))
			e++;
		for (size_t j = e; j > i; j--) { /* greedy: longest name first */
			const char *t = pod + j;
			if (n - j < 15 || t[0] != '-' || !all(t + 1, 8, digit) || t[9] != '-' ||
			    !all(t + 10, 5, suffix_char))
				continue;
			*name_start = i;
			*name_len = j - i;
			*minute = 0;
			for (int d = 1; d <= 8; d++)
				*minute = *minute * 10 + (uint64_t)(t[d] - '0');
			return true;
		}
	}
	return false;
}

static int fmt(char *out, size_t outlen, const char *f, ...) __attribute__((format(printf, 3, 4)));
static int fmt(char *out, size_t outlen, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(out, outlen, f, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

static const char *label(const struct containers_meta *md, const char *key)
{
	const char *v = containers_meta_label(md, key);
	return v ? v : "";
}

static const char *env(const struct containers_meta *md, const char *key)
{
	const char *v = containers_meta_env(md, key);
	return v ? v : "";
}

/* calcId for the kinds that need metadata: 1 when Coroot would give none. */
static int id_from_metadata(const struct containers_class *c, const struct containers_meta *md,
			    int64_t now, char *out, size_t outlen)
{
	const char *pod = label(md, L_POD);

	if (*pod) {
		const char *ns = label(md, L_NAMESPACE), *name = label(md, L_CONTAINER);
		size_t cj_start, cj_len;
		uint64_t minute;

		if (!*name || !strcmp(name, "POD")) /* the pause container */
			return 1;
		if (cronjob_pod(pod, &cj_start, &cj_len, &minute)) {
			int64_t at = (int64_t)minute * 60;
			if (at > now - CRONJOB_WINDOW_S && at < now + CRONJOB_WINDOW_S)
				return fmt(out, outlen, "/k8s-cronjob/%s/%.*s/%s", ns, (int)cj_len,
					   pod + cj_start, name);
		}
		return fmt(out, outlen, "/k8s/%s/%s/%s", ns, pod, name);
	}

	/* swarm: the task name is <service>.<slot>.<task id> */
	const char *task = label(md, L_SWARM_TASK), *dot1 = strchr(task, '.');
	const char *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
	if (dot2) {
		const char *stack = label(md, L_STACK), *service = label(md, L_SWARM_SERVICE);
		size_t sl = strlen(stack);
		if (sl && !strncmp(service, stack, sl) && service[sl] == '_')
			service += sl + 1;
		return fmt(out, outlen, "/swarm/%s/%s/%.*s", sl ? stack : "_", service,
			   (int)(dot2 - dot1 - 1), dot1 + 1);
	}

	const char *alloc = env(md, "NOMAD_ALLOC_ID"), *group = env(md, "NOMAD_GROUP_NAME");
	const char *job = env(md, "NOMAD_JOB_NAME"), *nns = env(md, "NOMAD_NAMESPACE");
	const char *ntask = env(md, "NOMAD_TASK_NAME");
	if (*alloc && *group && *job && *nns && *ntask)
		return fmt(out, outlen, "/nomad/%s/%s/%s/%s/%s", nns, job, group, alloc, ntask);

	if (!md->name || !*md->name)
		return 1;
	/* podman's pull request to Coroot names them /podman/<name> */
	return fmt(out, outlen, "%s%s", c->kind == CONTAINERS_PODMAN ? "/podman/" : "/docker/",
		   md->name);
}

int containers_name(const struct containers_class *c, const struct containers_meta *md,
		    int64_t now, struct containers_name *out)
{
	const struct containers_kind_info *info = containers_kind_info(c->kind);
	const char *fallback = c->id[0] ? c->id : (c->cgroup[0] ? c->cgroup : "/");
	int rc;

	out->app_id[0] = '\0';
	if (!info->needs_metadata) {
		out->source = info->coroot_ignores ? CONTAINERS_ID_IGNORED : CONTAINERS_ID_COROOT;
		rc = fmt(out->id, sizeof(out->id), "%s", fallback);
	} else if (!md) {
		out->source = CONTAINERS_ID_NO_METADATA;
		rc = fmt(out->id, sizeof(out->id), "%s", fallback);
	} else {
		rc = id_from_metadata(c, md, now, out->id, sizeof(out->id));
		out->source = rc == 1 ? CONTAINERS_ID_IGNORED : CONTAINERS_ID_COROOT;
		if (rc == 1)
			rc = fmt(out->id, sizeof(out->id), "%s", fallback);
	}
	if (rc)
		return rc;
	return containers_app_id(out->id, out->app_id, sizeof(out->app_id));
}

/*
 * One of Coroot's otel.go patterns, tried at one "/k8s/" of the id:
 * `(/k8s/NS/NAME)<tail>/.+` with NS and the pod run in [a-z0-9-]. Gives the
 * length of group 1, or 0 when the pattern does not match there.
 */
enum workload { DEPLOYMENT, DAEMONSET, STATEFULSET };

static size_t workload_at(const char *s, enum workload w)
{
	const char *ns = s + 5, *p = ns;

	while (k8s_char(*p))
		p++;
	if (p == ns || *p != '/')
		return 0;
	const char *pod = p + 1, *e = pod;
	while (k8s_char(*e))
		e++;
	/* the pod run must be followed by "/" and one more character */
	if (*e != '/' || !e[1] || e[1] == '\n')
		return 0;
	size_t n = e - pod, name_len;

	switch (w) {
	case DEPLOYMENT: { /* NAME-<1..10 hex>-<5> */
		if (n < 9 || pod[n - 6] != '-' || !all(pod + n - 5, 5, suffix_char))
			return 0;
		size_t k = n - 6;
		while (k > 0 && pod[k - 1] != '-')
			k--;
		size_t hl = n - 6 - k;
		if (k < 2 || hl < 1 || hl > 10 || !all(pod + k, hl, hex))
			return 0;
		name_len = k - 1;
		break;
	}
	case DAEMONSET: /* NAME-<5> */
		if (n < 7 || pod[n - 6] != '-' || !all(pod + n - 5, 5, suffix_char))
			return 0;
		name_len = n - 6;
		break;
	case STATEFULSET: { /* NAME-<digits> */
		size_t k = n;
		while (k > 0 && digit(pod[k - 1]))
			k--;
		if (k == n || k < 2 || pod[k - 1] != '-')
			return 0;
		name_len = k - 1;
		break;
	}
	default:
		return 0;
	}
	return (size_t)(pod - s) + name_len;
}

int containers_app_id(const char *id, char *out, size_t outlen)
{
	static const enum workload order[] = { DEPLOYMENT, DAEMONSET, STATEFULSET };

	if (outlen < 1)
		return -ENAMETOOLONG;
	out[0] = '\0';
	if (strncmp(id, "/k8s/", 5))
		return 0;
	/*
	 * Coroot's patterns are unanchored, so a "/k8s/" inside a container name
	 * could match too; Kubernetes names hold no '/', so matching at the start
	 * only gives the same answers and keeps app_id a prefix of the id.
	 */
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		size_t len = workload_at(id, order[i]);
		if (len)
			return fmt(out, outlen, "%.*s", (int)len, id);
	}
	return 0;
}
