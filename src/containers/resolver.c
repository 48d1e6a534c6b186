#include "resolver.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "containers/name.h"
#include "containers/runtime_read.h"
#include "containers/systemd_unit.h"
#include "util/hmap.h"

#define RESOLVER_CACHE 4096
/* A container whose runtime has not written its state yet is asked about again after this. */
#define RETRY_NS (2ull * 1000000000ull)

struct resolved {
	struct hmap_node node;
	uint64_t retry_at_ns; /* 0: final; else the id is interim until then */
	char id[CONTAINERS_PATH_MAX];
	char path[];
};

struct containers_resolver {
	char root[256];
	struct hmap cache; /* path hash -> struct resolved */
	struct containers_resolver_stats stats;
	containers_named_fn on_named;
	void *ctx;
};

int containers_resolver_new(const char *root, containers_named_fn on_named, void *ctx,
			    struct containers_resolver **out)
{
	struct containers_resolver *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (hmap_init(&r->cache, RESOLVER_CACHE)) {
		free(r);
		return -ENOMEM;
	}
	snprintf(r->root, sizeof(r->root), "%s", root ? root : "");
	r->on_named = on_named;
	r->ctx = ctx;
	*out = r;
	return 0;
}

static void cache_clear(struct containers_resolver *r)
{
	struct hmap_node *n;
	while ((n = hmap_pop(&r->cache)))
		free(hmap_entry(n, struct resolved, node));
}

void containers_resolver_free(struct containers_resolver *r)
{
	if (!r)
		return;
	cache_clear(r);
	hmap_destroy(&r->cache);
	free(r);
}

static struct resolved *cache_find(struct containers_resolver *r, const char *path, uint64_t h)
{
	for (struct hmap_node *n = hmap_get(&r->cache, h); n; n = hmap_next_same(n)) {
		struct resolved *e = hmap_entry(n, struct resolved, node);
		if (!strcmp(e->path, path))
			return e;
	}
	return NULL;
}

/* A systemd service's Type and TriggeredBy, from its unit files (Coroot asks systemd). */
static void name_service(struct containers_resolver *r, const char *id)
{
	char unit[256];
	struct containers_systemd sd;

	containers_systemd_unit_of(id, unit, sizeof(unit));
	if (!unit[0] || containers_systemd_read(r->root, unit, &sd))
		return;
	if (r->on_named)
		r->on_named(r->ctx, id, "", sd.triggered_by, sd.type);
}

/* Names a classified container into e, reading its runtime's state when the kind needs it. */
static void name_into(struct containers_resolver *r, const struct containers_class *c,
		      struct resolved *e, uint64_t now_ns)
{
	struct containers_meta md = CONTAINERS_META_INIT;
	struct containers_name name;
	int rc = -EOPNOTSUPP;

	if (containers_kind_info(c->kind)->needs_metadata) {
		rc = containers_meta_read(c->kind, c->runtime_id, r->root, &md);
		if (!rc)
			r->stats.metadata_read++;
		else if (rc == -ENOENT)
			r->stats.metadata_missing++;
		else
			r->stats.metadata_bad++;
	}
	if (containers_name(c, rc ? NULL : &md, (int64_t)time(NULL), &name) == 0)
		snprintf(e->id, sizeof(e->id), "%s", name.id);
	else
		snprintf(e->id, sizeof(e->id), "%s", c->cgroup[0] ? c->cgroup : "/");
	/* Missing state may come (the runtime writes it as it starts the container). */
	e->retry_at_ns = rc == -ENOENT ? now_ns + RETRY_NS : 0;
	if (!rc && r->on_named)
		r->on_named(r->ctx, e->id, md.image ? md.image : "", "", "");
	containers_meta_free(&md);
	if (c->kind == CONTAINERS_SYSTEMD)
		name_service(r, e->id);
}

static const char *resolve_class(struct containers_resolver *r, const char *key,
				 const struct containers_class *c, uint64_t now_ns)
{
	uint64_t h = hmap_hash_str(key);
	struct resolved *e = cache_find(r, key, h);

	if (e && (!e->retry_at_ns || now_ns < e->retry_at_ns))
		return e->id;
	if (!e) {
		if (r->cache.count >= RESOLVER_CACHE)
			cache_clear(r);
		size_t len = strlen(key);
		e = calloc(1, sizeof(*e) + len + 1);
		if (!e)
			return c->id[0] ? c->id : (c->cgroup[0] ? c->cgroup : "/");
		memcpy(e->path, key, len + 1);
		hmap_insert(&r->cache, &e->node, h);
	}
	name_into(r, c, e, now_ns);
	return e->id;
}

const char *containers_resolve(struct containers_resolver *r, const char *cgroup_path,
			       uint64_t now_ns)
{
	struct containers_class c;
	const char *path = cgroup_path && *cgroup_path ? cgroup_path : "/";
	/* Every exec lands here: a known, settled path is one look-up. */
	struct resolved *e = cache_find(r, path, hmap_hash_str(path));

	if (e && !e->retry_at_ns)
		return e->id;
	if (containers_classify_path(path, &c))
		return path;
	return resolve_class(r, path, &c, now_ns);
}

const char *containers_resolve_proc(struct containers_resolver *r, const char *proc_cgroup_text,
				    uint64_t now_ns)
{
	struct containers_class c;

	if (containers_classify(proc_cgroup_text, "", &c))
		return NULL;
	return resolve_class(r, c.cgroup[0] ? c.cgroup : "/", &c, now_ns);
}

void containers_resolver_forget(struct containers_resolver *r)
{
	cache_clear(r);
}

const struct containers_resolver_stats *containers_resolver_stats(const struct containers_resolver *r)
{
	return &r->stats;
}
