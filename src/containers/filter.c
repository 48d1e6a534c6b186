#include "containers/filter.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "containers/kind.h"
#include "containers/rules.h"
#include "containers/systemd_unit.h"

struct patterns {
	regex_t *re;
	size_t n;
};

struct containers_filter {
	struct patterns allow, deny;
	bool skip_system_services;
	char root[256];
};

/*
 * Calls fn on each line of value (kingpin's split of a variable: "\r?\n",
 * after one trailing line end is dropped). Stops at fn's first non-zero.
 */
static int each_line(const char *value, int (*fn)(void *ctx, const char *pattern), void *ctx)
{
	size_t len = strlen(value);

	if (len && value[len - 1] == '\n')
		len -= 1 + (len > 1 && value[len - 2] == '\r');
	for (size_t at = 0;;) {
		const char *nl = memchr(value + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - value) : len;
		size_t n = end - at - (end > at && value[end - 1] == '\r');
		char *pattern = strndup(value + at, n);
		if (!pattern)
			return -ENOMEM;
		int rc = fn(ctx, pattern);
		free(pattern);
		if (rc || !nl)
			return rc;
		at = end + 1;
	}
}

struct compile {
	struct patterns *into; /* NULL: checked and let go */
	char *why;
	size_t whylen;
};

static int compile_one(void *ctx, const char *pattern)
{
	struct compile *c = ctx;
	regex_t re;
	int rc = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);

	if (rc) {
		char msg[128];
		regerror(rc, &re, msg, sizeof(msg));
		snprintf(c->why, c->whylen, "'%s': %s", pattern, msg);
		return -EINVAL;
	}
	if (!c->into) {
		regfree(&re);
		return 0;
	}
	regex_t *p = reallocarray(c->into->re, c->into->n + 1, sizeof(*p));
	if (!p) {
		regfree(&re);
		return -ENOMEM;
	}
	p[c->into->n++] = re;
	c->into->re = p;
	return 0;
}

int containers_filter_check(const char *value, char *why, size_t whylen)
{
	struct compile c = { NULL, why, whylen };
	return each_line(value, compile_one, &c);
}

static void patterns_free(struct patterns *p)
{
	for (size_t i = 0; i < p->n; i++)
		regfree(&p->re[i]);
	free(p->re);
}

void containers_filter_free(struct containers_filter *f)
{
	if (!f)
		return;
	patterns_free(&f->allow);
	patterns_free(&f->deny);
	free(f);
}

int containers_filter_new(const struct containers_filter_opts *o, struct containers_filter **out,
			  char *why, size_t whylen)
{
	struct containers_filter *f = calloc(1, sizeof(*f));
	int rc = 0;

	if (!f)
		return -ENOMEM;
	f->skip_system_services = o->skip_system_services;
	snprintf(f->root, sizeof(f->root), "%s", o->root ? o->root : "");
	struct compile allow = { &f->allow, why, whylen }, deny = { &f->deny, why, whylen };
	for (size_t i = 0; !rc && i < o->n_allow; i++)
		rc = each_line(o->allow[i], compile_one, &allow);
	for (size_t i = 0; !rc && i < o->n_deny; i++)
		rc = each_line(o->deny[i], compile_one, &deny);
	if (rc) {
		containers_filter_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

static bool any_matches(const struct patterns *p, const char *s)
{
	for (size_t i = 0; i < p->n; i++)
		if (!regexec(&p->re[i], s, 0, NULL, 0))
			return true;
	return false;
}

/* A systemd service that Coroot counts as part of the system, from its unit files. */
static bool system_service(const struct containers_filter *f, const char *id)
{
	struct containers_class c;
	struct containers_systemd sd;
	char unit[256];

	if (containers_classify_path(id, &c) || c.kind != CONTAINERS_SYSTEMD)
		return false;
	containers_systemd_unit_of(id, unit, sizeof(unit));
	if (containers_systemd_read(f->root, unit, &sd))
		memset(&sd, 0, sizeof(sd)); /* no unit file: its name alone decides */
	return containers_systemd_system_service(unit, &sd);
}

bool containers_filter_skips(const struct containers_filter *f, const char *container_id)
{
	if (!f)
		return false;
	/* Coroot's order: the denylist, then the allowlist, then system services. */
	if (any_matches(&f->deny, container_id))
		return true;
	if (f->allow.n && !any_matches(&f->allow, container_id))
		return true;
	return f->skip_system_services && system_service(f, container_id);
}
