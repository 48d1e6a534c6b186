/*
 * Which named containers make series: Coroot's --container-allowlist and
 * --container-denylist (regular expressions matched anywhere in the
 * container_id; a denied one, or with an allowlist one that matches none of
 * it, is left out) and --skip-systemd-system-services (systemd_unit.h's
 * rule). Judged once per container_id, where the registry admits its first
 * series (resources/collector.c): the container's events are still traced.
 */
#ifndef NODESCOPE_CONTAINERS_FILTER_H
#define NODESCOPE_CONTAINERS_FILTER_H

#include <stdbool.h>
#include <stddef.h>

struct containers_filter;

struct containers_filter_opts {
	/* Each value one or more patterns, one a line, as Coroot's variables hold them. */
	const char *const *allow;
	size_t n_allow;
	const char *const *deny;
	size_t n_deny;
	bool skip_system_services;
	const char *root; /* where the host's / is, for the unit files ("" on the host) */
};

/*
 * Checks every pattern of a value (POSIX extended regular expressions,
 * regcomp): 0, or -EINVAL with regcomp's reason and the pattern in why.
 */
int containers_filter_check(const char *value, char *why, size_t whylen);

/* 0, -EINVAL (a bad pattern: why says which) or -ENOMEM. */
int containers_filter_new(const struct containers_filter_opts *o, struct containers_filter **out,
			  char *why, size_t whylen);
void containers_filter_free(struct containers_filter *f);

/* Whether container_id's series are left out. f may be NULL: none is. */
bool containers_filter_skips(const struct containers_filter *f, const char *container_id);

#endif
