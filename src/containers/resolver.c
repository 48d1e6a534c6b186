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
/*
 * A container whose runtime metadata is not found is asked about again
 * after 1 s, then 2, 4, ... up to a minute apart, RETRY_TRIES times in all
 * (about 5 minutes), then given up on (counted): from then on only an exec
 * in it asks again, at most once a minute (Coroot asks at every new process).
 */
#define SEC_NS 1000000000ull
#define RETRY_FIRST_NS SEC_NS
#define RETRY_MAX_NS (60 * SEC_NS)
#define RETRY_TRIES 10
/* The runtimes' roots are looked for again on a miss, at most this often. */
#define ROOTS_TTL_NS SEC_NS

struct resolved {
	struct hmap_node node;
	uint64_t retry_at_ns; /* 0: settled; else unnamed, asked again then */
	unsigned tries;	      /* metadata reads that found nothing */
	bool unnamed;	      /* its kind needs metadata and none was read: id is the cgroup path */
	bool gave_up;	      /* unnamed after every try: asked again only at an exec, a minute apart */
	char id[CONTAINERS_PATH_MAX];
	char path[];
};

struct containers_resolver {
	char root[256];
	struct hmap cache; /* path hash -> struct resolved */
	struct containers_resolver_stats stats;
	containers_named_fn on_named;
	containers_renamed_fn on_renamed;
	containers_ports_fn on_ports;
	containers_daemons_fn daemons;
	void *ctx, *renamed_ctx, *ports_ctx, *daemons_ctx;
	struct containers_roots roots;
	uint64_t roots_at_ns; /* when roots were found; 0: never */
	uint64_t next_retry_ns; /* the earliest retry_at_ns of the cache, 0: none */
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
	containers_roots_defaults(&r->roots);
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
	r->stats.unnamed = 0;
	r->next_retry_ns = 0;
}

void containers_resolver_on_renamed(struct containers_resolver *r, containers_renamed_fn fn,
				    void *ctx)
{
	r->on_renamed = fn;
	r->renamed_ctx = ctx;
}

void containers_resolver_on_ports(struct containers_resolver *r, containers_ports_fn fn, void *ctx)
{
	r->on_ports = fn;
	r->ports_ctx = ctx;
}

void containers_resolver_on_daemons(struct containers_resolver *r, containers_daemons_fn fn,
				    void *ctx)
{
	r->daemons = fn;
	r->daemons_ctx = ctx;
}

#define DAEMONS_MAX 64

bool containers_resolver_find_roots(struct containers_resolver *r, uint64_t now_ns)
{
	struct containers_roots found;
	uint32_t pids[DAEMONS_MAX];
	size_t n = r->daemons ? r->daemons(r->daemons_ctx, pids, DAEMONS_MAX) : 0;

	containers_roots_find(r->root, r->daemons ? pids : NULL, n, &found);
	r->roots_at_ns = now_ns ? now_ns : 1;
	if (!memcmp(&found, &r->roots, sizeof(found)))
		return false;
	r->roots = found;
	return true;
}

/* The runtime's metadata, looking for the runtimes' roots again when it is not where they were. */
static int meta_read(struct containers_resolver *r, const struct containers_class *c,
		     struct containers_meta *md, uint64_t now_ns)
{
	int rc = containers_meta_read(c->kind, c->runtime_id, r->root, &r->roots, md);
	if (rc != -ENOENT || (r->roots_at_ns && now_ns - r->roots_at_ns < ROOTS_TTL_NS))
		return rc;
	if (!containers_resolver_find_roots(r, now_ns))
		return rc;
	containers_meta_free(md);
	*md = (struct containers_meta)CONTAINERS_META_INIT;
	return containers_meta_read(c->kind, c->runtime_id, r->root, &r->roots, md);
}

static uint64_t backoff_ns(unsigned tries)
{
	uint64_t d = RETRY_FIRST_NS << (tries > 7 ? 7 : tries - 1);
	return d > RETRY_MAX_NS ? RETRY_MAX_NS : d;
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

/*
 * Names a classified container into e, reading its runtime's state when the
 * kind needs it. Without it, the id is the cgroup path (withheld from the
 * series: containers_id_named()) and the read is tried again on a backoff;
 * named later, the cgroup path's id is handed to on_renamed.
 */
static void name_into(struct containers_resolver *r, const struct containers_class *c,
		      struct resolved *e, uint64_t now_ns)
{
	struct containers_meta md = CONTAINERS_META_INIT;
	struct containers_name name;
	int rc = -EOPNOTSUPP;
	bool needs = containers_kind_info(c->kind)->needs_metadata, was_unnamed = e->unnamed;
	char before[CONTAINERS_PATH_MAX];

	memcpy(before, e->id, sizeof(before));
	if (needs) {
		rc = meta_read(r, c, &md, now_ns);
		if (!rc)
			r->stats.metadata_read++;
		else if (rc == -ENOENT)
			r->stats.metadata_missing++;
		else
			r->stats.metadata_bad++;
	}
	if (rc && e->id[0] && !was_unnamed) {
		/* read again for its ports and gone meanwhile: it keeps its name */
		e->retry_at_ns = 0;
		containers_meta_free(&md);
		return;
	}
	if (containers_name(c, rc ? NULL : &md, (int64_t)time(NULL), &name) == 0)
		snprintf(e->id, sizeof(e->id), "%s", name.id);
	else
		snprintf(e->id, sizeof(e->id), "%s", c->cgroup[0] ? c->cgroup : "/");
	/* Missing or half-written state may come (the runtime writes it as it starts the container). */
	e->unnamed = needs && rc;
	e->retry_at_ns = 0;
	if (e->unnamed) {
		if (++e->tries > RETRY_TRIES && !e->gave_up) {
			e->gave_up = true;
			r->stats.gave_up++;
		}
		e->retry_at_ns = now_ns + (e->gave_up ? RETRY_MAX_NS : backoff_ns(e->tries));
		if (!e->gave_up && (!r->next_retry_ns || e->retry_at_ns < r->next_retry_ns))
			r->next_retry_ns = e->retry_at_ns;
	}
	/* Named before Docker picked a host port: read again on the same backoff for it. */
	if (!rc && md.ports_pending && !md.ports_final && ++e->tries <= RETRY_TRIES) {
		e->retry_at_ns = now_ns + backoff_ns(e->tries);
		if (!r->next_retry_ns || e->retry_at_ns < r->next_retry_ns)
			r->next_retry_ns = e->retry_at_ns;
	}
	r->stats.unnamed += (uint64_t)e->unnamed - (uint64_t)was_unnamed;
	if (was_unnamed && !e->unnamed) {
		r->stats.named_late++;
		if (r->on_renamed && strcmp(before, e->id))
			r->on_renamed(r->renamed_ctx, before, e->id);
	}
	if (!rc && r->on_named)
		r->on_named(r->ctx, e->id, md.image ? md.image : "", "", "");
	if (!rc && md.n_ports && r->on_ports && containers_id_named(e->id))
		r->on_ports(r->ports_ctx, e->id, md.ports, md.n_ports);
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
	r->roots_at_ns = 0;
}

uint64_t containers_resolver_next_retry(const struct containers_resolver *r)
{
	return r->next_retry_ns;
}

struct retry_pass {
	struct containers_resolver *r;
	uint64_t now_ns, next_ns;
	struct resolved *due[64];
	unsigned n_due;
};

static void collect_due(void *ctx, struct hmap_node *n)
{
	struct retry_pass *p = ctx;
	struct resolved *e = hmap_entry(n, struct resolved, node);

	if (!e->retry_at_ns || e->gave_up)
		return;
	if (e->retry_at_ns <= p->now_ns && p->n_due < sizeof(p->due) / sizeof(p->due[0]))
		p->due[p->n_due++] = e;
	else if (!p->next_ns || e->retry_at_ns < p->next_ns)
		p->next_ns = e->retry_at_ns;
}

void containers_resolver_retry(struct containers_resolver *r, uint64_t now_ns)
{
	struct retry_pass p = { .r = r, .now_ns = now_ns };
	struct containers_class c;

	/* a bounded pass: more due than fit are left due, for the next one at once */
	hmap_foreach(&r->cache, collect_due, &p);
	r->next_retry_ns = p.next_ns;
	if (p.n_due == sizeof(p.due) / sizeof(p.due[0]))
		r->next_retry_ns = now_ns;
	for (unsigned i = 0; i < p.n_due; i++) {
		struct resolved *e = p.due[i];
		if (containers_classify_path(e->path[0] ? e->path : "/", &c)) {
			e->retry_at_ns = 0;
			continue;
		}
		name_into(r, &c, e, now_ns);
	}
}

const struct containers_resolver_stats *containers_resolver_stats(const struct containers_resolver *r)
{
	return &r->stats;
}
