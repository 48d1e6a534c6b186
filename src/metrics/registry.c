#include "registry.h"
#include "../util/clock.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ADMIT_VERDICTS 64 /* admit()'s verdicts remembered */
#define ALIASES 1024	  /* renamed policy label values remembered (metric_registry_rename) */

#define DROP_FAMILY_NAME "nodescope_metric_series_dropped_total"
#define DROP_FAMILY_HELP "Series not created because the metric reached its series cap."
#define DROP_FAMILY_LABEL "metric"

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL
#define HASH_MIN_BUCKETS 16

/* 2^53: beyond this not every integer is representable, so print %.17g. */
#define EXACT_INT_LIMIT 9007199254740992.0

/* Longest le text: "-1.2345678901234567e-308" plus NUL, with room to spare. */
#define LE_TEXT_MAX 32

struct metric_series {
	double value; /* histograms: the sum of observations */
	/* Idle expiry (metric_registry_set_idle_expiry): what the last exposition saw, and since when. */
	double seen_value;
	unsigned long long seen_count;
	uint64_t idle_since_ns;
	uint64_t hash;
	struct metric_series *hnext; /* hash chain */
	struct metric_series *prev; /* creation order */
	struct metric_series *next;
	/*
	 * Histograms only (NULL otherwise): n_bounds + 1 per-bucket counts, not
	 * cumulative, the last one for +Inf; in the same allocation.
	 */
	unsigned long long *counts;
	/* n_labels pointers into the same allocation, followed by the strings. */
	char *values[];
};

/* A histogram family's buckets, fixed at registration. */
struct metric_hist {
	unsigned n_bounds;
	double bounds[METRIC_MAX_BUCKETS];
	char le[METRIC_MAX_BUCKETS][LE_TEXT_MAX]; /* bounds as exposed */
};

struct metric {
	struct metric_registry *reg;
	struct metric *next; /* registration order */
	char *name;
	char *help;
	enum metric_type type;
	unsigned max_series;
	unsigned n_labels;
	char *label_names[METRIC_MAX_LABELS];
	bool internal; /* the drop family: printed only once it has series */
	bool expires;  /* series idle for the registry's idle expiry are removed */
	struct metric_hist *hist; /* METRIC_HISTOGRAM only */

	struct metric_series **buckets;
	size_t n_buckets; /* 0 or a power of two */
	struct metric_series *head;
	struct metric_series *tail;
	size_t n_series;
	unsigned long long dropped;
	uint64_t generation; /* series freed so far: handles kept by callers check it */
	int policy_at; /* the index of the registry's policy label, -1: none (policy_locate) */
};

struct metric_collector {
	metric_collector_fn fn;
	void *ctx;
};

struct metric_bound {
	struct metric *m;
	const uint64_t *src;
};

/* Labels set on many families (metric_registry_set_const_labels), copied. */
struct label_set {
	unsigned n;
	const char *names[METRIC_MAX_LABELS];
	const char *values[METRIC_MAX_LABELS];
	char strings[]; /* what names and values point into */
};

struct metric_registry {
	struct metric *head;
	struct metric *tail;
	struct metric *drops;
	struct metric_collector *collectors;
	size_t n_collectors;
	size_t cap_collectors;
	struct metric_bound *bound;
	size_t n_bound;
	size_t cap_bound;
	struct label_set *const_labels; /* written into every series, or NULL */
	uint64_t idle_expiry_ns; /* metric_registry_set_idle_expiry (0: never) */
	char derive_from[64], derive_name[64]; /* metric_registry_derive_label */
	metric_derive_fn derive;
	char **prefixes;     /* families whose name starts with one of these (NULL-ended) ... */
	struct label_set *prefix_labels; /* ... also get these, or NULL */
	char policy_label[64]; /* metric_registry_set_label_policy ("" when none) */
	struct metric_label_policy policy;
	/*
	 * admit()'s last verdicts, by the value's hash: it answers the same for
	 * a value every time, and asking it classifies a cgroup path. A process
	 * outside any container (its series refused) made one ask per request:
	 * three quarters of the agent's time under pgbench.
	 */
	struct admit_verdict {
		uint64_t hash;
		char *value; /* NULL: empty */
		bool admitted;
	} verdicts[ADMIT_VERDICTS];
	unsigned n_refusals; /* verdicts that refuse: none, and no update looks them up */
	uint64_t unreported;   /* updates the policy's admit() refused */
	/* Policy label values renamed (metric_registry_rename): from -> to, oldest overwritten. */
	struct alias {
		char *from, *to;
	} aliases[ALIASES];
	unsigned n_aliases, next_alias;
	size_t max_label_len;  /* metric_registry_set_max_label_length (0: none) */
};

static void verdicts_clear(struct metric_registry *r)
{
	for (size_t i = 0; i < ADMIT_VERDICTS; i++) {
		free(r->verdicts[i].value);
		r->verdicts[i].value = NULL;
	}
	r->n_refusals = 0;
}

/* ---- names ---- */

static bool is_alpha_(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool valid_metric_name(const char *s)
{
	if (!s || !(is_alpha_(*s) || *s == ':'))
		return false;
	for (s++; *s; s++)
		if (!(is_alpha_(*s) || is_digit(*s) || *s == ':'))
			return false;
	return true;
}

static bool valid_label_name(const char *s)
{
	if (!s || !is_alpha_(*s))
		return false;
	if (s[0] == '_' && s[1] == '_')
		return false;
	for (s++; *s; s++)
		if (!(is_alpha_(*s) || is_digit(*s)))
			return false;
	return true;
}

/* ---- families ---- */

static void series_free_all(struct metric *m)
{
	struct metric_series *s = m->head;

	while (s) {
		struct metric_series *next = s->next;

		free(s);
		s = next;
	}
	free(m->buckets);
	m->buckets = NULL;
	m->n_buckets = 0;
	m->head = m->tail = NULL;
	m->n_series = 0;
	m->generation++;
}

static void family_free(struct metric *m)
{
	if (!m)
		return;
	series_free_all(m);
	for (unsigned i = 0; i < m->n_labels; i++)
		free(m->label_names[i]);
	free(m->name);
	free(m->help);
	free(m->hist);
	free(m);
}

static struct metric *family_find(const struct metric_registry *r, const char *name)
{
	for (struct metric *m = r->head; m; m = m->next)
		if (!strcmp(m->name, name))
			return m;
	return NULL;
}

static bool family_matches(const struct metric *m, enum metric_type type, unsigned n_labels,
			   const char *const *label_names)
{
	if (m->type != type || m->n_labels != n_labels)
		return false;
	for (unsigned i = 0; i < n_labels; i++)
		if (strcmp(m->label_names[i], label_names[i]))
			return false;
	return true;
}

/* Where the registry's policy label is among m's labels (at registration, or once the policy is set). */
static void policy_locate(struct metric *m)
{
	m->policy_at = -1;
	for (unsigned i = 0; m->reg->policy_label[0] && i < m->n_labels; i++)
		if (!strcmp(m->label_names[i], m->reg->policy_label))
			m->policy_at = (int)i;
}

static struct metric *family_new(struct metric_registry *r, const char *name, const char *help,
				 enum metric_type type, unsigned max_series, unsigned n_labels,
				 const char *const *label_names)
{
	struct metric *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->reg = r;
	m->type = type;
	m->max_series = max_series;
	m->name = strdup(name);
	m->help = strdup(help ? help : "");
	if (!m->name || !m->help)
		goto fail;
	for (unsigned i = 0; i < n_labels; i++) {
		m->label_names[i] = strdup(label_names[i]);
		if (!m->label_names[i])
			goto fail;
		m->n_labels = i + 1;
	}
	policy_locate(m);
	return m;
fail:
	family_free(m);
	return NULL;
}

static void family_append(struct metric_registry *r, struct metric *m)
{
	if (r->tail)
		r->tail->next = m;
	else
		r->head = m;
	r->tail = m;
}

struct metric_registry *metric_registry_new(void)
{
	static const char *const drop_labels[] = { DROP_FAMILY_LABEL };
	struct metric_registry *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	/* Uncapped, so no drop is ever lost to a cap of its own. */
	r->drops = family_new(r, DROP_FAMILY_NAME, DROP_FAMILY_HELP, METRIC_COUNTER, 0, 1,
			      drop_labels);
	if (!r->drops) {
		free(r);
		return NULL;
	}
	r->drops->internal = true;
	family_append(r, r->drops);
	return r;
}

void metric_registry_free(struct metric_registry *r)
{
	if (!r)
		return;
	struct metric *m = r->head;

	while (m) {
		struct metric *next = m->next;

		family_free(m);
		m = next;
	}
	free(r->collectors);
	free(r->bound);
	free(r->const_labels);
	free(r->prefixes);
	free(r->prefix_labels);
	verdicts_clear(r);
	for (unsigned i = 0; i < r->n_aliases; i++) {
		free(r->aliases[i].from);
		free(r->aliases[i].to);
	}
	free(r);
}

/* Checks shared by every family type. */
static bool valid_family(const struct metric_registry *r, const char *name, unsigned n_labels,
			 const char *const *label_names)
{
	if (!r || !valid_metric_name(name) || n_labels > METRIC_MAX_LABELS)
		return false;
	if (n_labels && !label_names)
		return false;
	for (unsigned i = 0; i < n_labels; i++) {
		if (!valid_label_name(label_names[i]))
			return false;
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(label_names[i], label_names[j]))
				return false;
	}
	return true;
}

struct metric *metric_register(struct metric_registry *r, const char *name, const char *help,
			       enum metric_type type, unsigned max_series, unsigned n_labels,
			       const char *const *label_names)
{
	struct metric *m;

	if (type != METRIC_COUNTER && type != METRIC_GAUGE)
		return NULL;
	if (!valid_family(r, name, n_labels, label_names))
		return NULL;

	m = family_find(r, name);
	if (m)
		return family_matches(m, type, n_labels, label_names) ? m : NULL;

	m = family_new(r, name, help, type, max_series, n_labels, label_names);
	if (m)
		family_append(r, m);
	return m;
}

/*
 * Bucket bounds as Prometheus prints them (Go's strconv.FormatFloat(v, 'g',
 * -1, 64)): the fewest significant digits that parse back to v, nearest to v
 * among those; exponent form when the decimal exponent is < -4 or >= 6
 * ("0.005", "2.5", "10", "123456", "1e+06", "0.0001", "1e-05").
 */
static void format_bound(double v, char out[LE_TEXT_MAX])
{
	char tmp[40];
	char digits[24];
	int nd = 0; /* significant digits in digits[] */
	int exp10 = 0; /* decimal exponent of digits[0] */

	if (v == 0) { /* and -0, which Prometheus prints as "0" too */
		strcpy(out, "0");
		return;
	}
	if (!isfinite(v)) { /* not reachable: bounds are checked */
		strcpy(out, isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf");
		return;
	}
	double a = fabs(v);

	for (int p = 1; p <= 17 && !nd; p++) {
		/* The nearest p-digit decimal: the answer if it round-trips. */
		snprintf(tmp, sizeof(tmp), "%.*e", p - 1, a);
		const char *e = strchr(tmp, 'e');
		unsigned long long mant = 0;

		if (!e)
			break;
		for (const char *c = tmp; c < e; c++)
			if (is_digit(*c))
				mant = mant * 10 + (unsigned long long)(*c - '0');
		int x = atoi(e + 1);
		double near = strtod(tmp, NULL);

		if (near != a) {
			/*
			 * Next to a power of two the rounding interval is lopsided:
			 * the neighbour on v's other side may still round-trip.
			 */
			mant = near < a ? mant + 1 : mant - 1;
			snprintf(tmp, sizeof(tmp), "%llue%d", mant, x - (p - 1));
			if (!mant || strtod(tmp, NULL) != a)
				continue;
		}
		int n = snprintf(digits, sizeof(digits), "%llu", mant);

		/* x - (p - 1) is the exponent of the last digit (mant may have gained
		 * or lost one). No trailing 0: one digit fewer would have round-tripped. */
		exp10 = x - (p - 1) + (n - 1);
		nd = n;
	}
	if (!nd) { /* unreachable: 17 digits always round-trip */
		snprintf(out, LE_TEXT_MAX, "%.17g", v);
		return;
	}

	char *o = out;

	if (v < 0)
		*o++ = '-';
	if (exp10 < -4 || exp10 >= 6) {
		*o++ = digits[0];
		if (nd > 1) {
			*o++ = '.';
			memcpy(o, digits + 1, (size_t)nd - 1);
			o += nd - 1;
		}
		snprintf(o, (size_t)(out + LE_TEXT_MAX - o), "e%c%02d", exp10 < 0 ? '-' : '+',
			 exp10 < 0 ? -exp10 : exp10);
		return;
	}
	int dp = exp10 + 1; /* digits before the point */

	if (dp <= 0) {
		*o++ = '0';
		*o++ = '.';
		for (int i = 0; i < -dp; i++)
			*o++ = '0';
		memcpy(o, digits, (size_t)nd);
		o += nd;
	} else if (dp >= nd) {
		memcpy(o, digits, (size_t)nd);
		o += nd;
		for (int i = nd; i < dp; i++)
			*o++ = '0';
	} else {
		memcpy(o, digits, (size_t)dp);
		o += dp;
		*o++ = '.';
		memcpy(o, digits + dp, (size_t)(nd - dp));
		o += nd - dp;
	}
	*o = '\0';
}

static bool bounds_match(const struct metric_hist *h, const double *bounds, unsigned n_bounds)
{
	if (h->n_bounds != n_bounds)
		return false;
	for (unsigned i = 0; i < n_bounds; i++)
		if (h->bounds[i] != bounds[i])
			return false;
	return true;
}

struct metric *metric_register_histogram(struct metric_registry *r, const char *name,
					 const char *help, unsigned max_series, unsigned n_labels,
					 const char *const *label_names, const double *bounds,
					 unsigned n_bounds)
{
	struct metric *m;

	if (!valid_family(r, name, n_labels, label_names))
		return NULL;
	/* le is the bucket label the exposition adds. */
	for (unsigned i = 0; i < n_labels; i++)
		if (!strcmp(label_names[i], "le"))
			return NULL;
	if (n_bounds > METRIC_MAX_BUCKETS || (n_bounds && !bounds))
		return NULL;
	for (unsigned i = 0; i < n_bounds; i++)
		if (!isfinite(bounds[i]) || (i && !(bounds[i] > bounds[i - 1])))
			return NULL;

	m = family_find(r, name);
	if (m)
		return family_matches(m, METRIC_HISTOGRAM, n_labels, label_names) &&
				       bounds_match(m->hist, bounds, n_bounds) ?
			       m :
			       NULL;

	m = family_new(r, name, help, METRIC_HISTOGRAM, max_series, n_labels, label_names);
	if (!m)
		return NULL;
	m->hist = calloc(1, sizeof(*m->hist));
	if (!m->hist) {
		family_free(m);
		return NULL;
	}
	m->hist->n_bounds = n_bounds;
	for (unsigned i = 0; i < n_bounds; i++) {
		m->hist->bounds[i] = bounds[i];
		format_bound(bounds[i], m->hist->le[i]);
	}
	family_append(r, m);
	return m;
}

/* ---- series ---- */

static uint64_t hash_values(unsigned n, const char *const *values)
{
	uint64_t h = FNV_OFFSET;

	for (unsigned i = 0; i < n; i++) {
		if (i) {
			h ^= 0xff;
			h *= FNV_PRIME;
		}
		for (const unsigned char *p = (const unsigned char *)values[i]; *p; p++) {
			h ^= *p;
			h *= FNV_PRIME;
		}
	}
	return h;
}

static bool values_ok(const struct metric *m, const char *const *values)
{
	if (!m->n_labels)
		return true;
	if (!values)
		return false;
	for (unsigned i = 0; i < m->n_labels; i++)
		if (!values[i])
			return false;
	return true;
}

/*
 * The label values a series is keyed by: the caller's, or copies cut to the
 * registry's max_label_len. Copies are made only for a value that is too long.
 */
struct key {
	const char *v[METRIC_MAX_LABELS];
	char *owned[METRIC_MAX_LABELS];
	uint64_t hash;
};

/* Bytes of s to keep so that at most max remain and no UTF-8 character is split. */
static size_t cut_length(const char *s, size_t max)
{
	size_t n = max;
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--; /* s[n] continues a character that began before: drop that character */
	return n;
}

/* Whether a label value is cut to --max-label-length before it keys a series. */
static bool label_too_long(const struct metric_registry *r, const char *value)
{
	return r->max_label_len && strnlen(value, r->max_label_len + 1) > r->max_label_len;
}

static bool key_make(const struct metric *m, const char *const *values, struct key *k)
{
	size_t max = m->reg->max_label_len;

	if (!values_ok(m, values))
		return false;
	for (unsigned i = 0; i < m->n_labels; i++) {
		k->owned[i] = NULL;
		k->v[i] = values[i];
		if (label_too_long(m->reg, values[i])) {
			k->owned[i] = strndup(values[i], cut_length(values[i], max));
			if (!k->owned[i]) {
				while (i--)
					free(k->owned[i]);
				return false;
			}
			k->v[i] = k->owned[i];
		}
	}
	k->hash = hash_values(m->n_labels, k->v);
	return true;
}

static void key_free(const struct metric *m, struct key *k)
{
	for (unsigned i = 0; i < m->n_labels; i++)
		free(k->owned[i]);
}

static bool series_matches(const struct metric *m, const struct metric_series *s, uint64_t hash,
			   const char *const *values)
{
	if (s->hash != hash)
		return false;
	for (unsigned i = 0; i < m->n_labels; i++)
		if (strcmp(s->values[i], values[i]))
			return false;
	return true;
}

/* Returns the series and, through pprev, the link pointing at it in its chain. */
static struct metric_series *series_find(const struct metric *m, uint64_t hash,
					 const char *const *values,
					 struct metric_series ***pprev)
{
	if (!m->n_buckets)
		return NULL;
	struct metric_series **link = &m->buckets[hash & (m->n_buckets - 1)];

	for (; *link; link = &(*link)->hnext) {
		if (series_matches(m, *link, hash, values)) {
			if (pprev)
				*pprev = link;
			return *link;
		}
	}
	return NULL;
}

/* Doubles the table (keeping the load factor at or below 3/4) and rehashes. */
static int buckets_grow(struct metric *m)
{
	size_t n = m->n_buckets ? m->n_buckets * 2 : HASH_MIN_BUCKETS;

	if (n < m->n_buckets || n > SIZE_MAX / sizeof(*m->buckets))
		return -1;
	struct metric_series **b = calloc(n, sizeof(*b));

	if (!b)
		return -1;
	for (struct metric_series *s = m->head; s; s = s->next) {
		struct metric_series **slot = &b[s->hash & (n - 1)];

		s->hnext = *slot;
		*slot = s;
	}
	free(m->buckets);
	m->buckets = b;
	m->n_buckets = n;
	return 0;
}

static struct metric_series *series_alloc(const struct metric *m, uint64_t hash,
					  const char *const *values)
{
	const size_t align = _Alignof(unsigned long long);
	size_t len[METRIC_MAX_LABELS];
	size_t size = sizeof(struct metric_series) + m->n_labels * sizeof(char *);
	size_t counts_at = 0;

	if (m->hist) {
		counts_at = (size + align - 1) / align * align;
		size = counts_at + (m->hist->n_bounds + 1) * sizeof(unsigned long long);
	}
	size_t strings_at = size;

	for (unsigned i = 0; i < m->n_labels; i++) {
		len[i] = strlen(values[i]) + 1;
		size += len[i];
	}
	struct metric_series *s = calloc(1, size);

	if (!s)
		return NULL;
	s->hash = hash;
	if (m->hist)
		s->counts = (unsigned long long *)((char *)s + counts_at);
	char *p = (char *)s + strings_at;

	for (unsigned i = 0; i < m->n_labels; i++) {
		memcpy(p, values[i], len[i]);
		s->values[i] = p;
		p += len[i];
	}
	return s;
}

static void note_drop(struct metric *m);

/* value's slot in the verdict table; *known: it holds value's verdict. */
static struct admit_verdict *verdict_of(struct metric_registry *r, const char *value, uint64_t *h,
					bool *known)
{
	*h = hash_values(1, &value);
	/* FNV's low bits follow the last byte's: folded in from the high ones. */
	struct admit_verdict *v = &r->verdicts[(*h ^ *h >> 32) % ADMIT_VERDICTS];
	*known = v->value && v->hash == *h && !strcmp(v->value, value);
	return v;
}

/*
 * Whether the policy is known to refuse this value as a series would be
 * keyed by it (a longer value is cut first: left to the full path).
 */
static bool known_refused(struct metric_registry *r, const char *value)
{
	uint64_t h;
	bool known;

	if (!r->n_refusals || label_too_long(r, value))
		return false;
	const struct admit_verdict *v = verdict_of(r, value, &h, &known);
	return known && !v->admitted;
}

/* admit(value), asked once per value while its verdict stays in the table. */
static bool policy_admits(struct metric_registry *r, const char *value)
{
	uint64_t h;
	bool known;
	struct admit_verdict *v = verdict_of(r, value, &h, &known);

	if (known)
		return v->admitted;
	bool admitted = r->policy.admit(r->policy.ctx, value);
	char *copy = strdup(value);
	if (copy) { /* else not remembered: asked again */
		if (v->value)
			r->n_refusals -= !v->admitted;
		free(v->value);
		*v = (struct admit_verdict){ .hash = h, .value = copy, .admitted = admitted };
		r->n_refusals += !admitted;
	}
	return admitted;
}

static struct metric_series *series_create(struct metric *m, const struct key *k)
{
	struct metric_registry *r = m->reg;
	int p = r->policy.admit ? m->policy_at : -1;

	if (p >= 0 && !policy_admits(r, k->v[p])) {
		r->unreported++;
		return NULL;
	}
	if (m->max_series && m->n_series >= m->max_series) {
		note_drop(m);
		return NULL;
	}
	/* A failed grow is fine while a table exists: chains just get longer. */
	if (m->n_series + 1 > m->n_buckets / 4 * 3 && buckets_grow(m) && !m->n_buckets)
		return NULL;
	struct metric_series *s = series_alloc(m, k->hash, k->v);
	if (!s)
		return NULL;

	struct metric_series **slot = &m->buckets[k->hash & (m->n_buckets - 1)];

	s->hnext = *slot;
	*slot = s;
	s->prev = m->tail;
	if (m->tail)
		m->tail->next = s;
	else
		m->head = s;
	m->tail = s;
	m->n_series++;
	return s;
}

static const char *alias_of(const struct metric_registry *r, const char *value)
{
	for (unsigned i = 0; i < r->n_aliases; i++)
		if (!strcmp(r->aliases[i].from, value))
			return r->aliases[i].to;
	return NULL;
}

struct metric_series *metric_series_get(struct metric *m, const char *const *label_values)
{
	struct key k;

	if (!m)
		return NULL;
	/*
	 * A value the policy refused: no series of it exists, so none is looked
	 * for (a process outside any container updates its refused series at
	 * every request).
	 */
	int p = m->reg->policy.admit ? m->policy_at : -1;
	if (p >= 0 && label_values && label_values[p] && known_refused(m->reg, label_values[p])) {
		m->reg->unreported++;
		return NULL;
	}
	if (!key_make(m, label_values, &k))
		return NULL;
	struct metric_series *s = series_find(m, k.hash, k.v, NULL);
	const char *to;
	if (!s && m->policy_at >= 0 && (to = alias_of(m->reg, k.v[m->policy_at]))) {
		/* a renamed value, still held by whoever saw it before: its new name's series */
		const char *v[METRIC_MAX_LABELS];
		memcpy(v, k.v, m->n_labels * sizeof(*v));
		v[m->policy_at] = to;
		key_free(m, &k);
		if (!key_make(m, v, &k)) /* one hop: a chain of renames never loops */
			return NULL;
		s = series_find(m, k.hash, k.v, NULL);
	}
	if (!s)
		s = series_create(m, &k);
	key_free(m, &k);
	return s;
}

/*
 * The family's own count is authoritative; the drop family's series mirrors
 * it. If that series cannot be allocated now, sync_drops() retries at write.
 */
static void note_drop(struct metric *m)
{
	const char *const values[] = { m->name };

	m->dropped++;
	if (m == m->reg->drops)
		return;
	metric_series_set(metric_series_get(m->reg->drops, values), (double)m->dropped);
}

static void sync_drops(struct metric_registry *r)
{
	for (struct metric *m = r->head; m; m = m->next) {
		if (m == r->drops || !m->dropped)
			continue;
		const char *const values[] = { m->name };

		metric_series_set(metric_series_get(r->drops, values), (double)m->dropped);
	}
}

/* Histogram series change only through metric_observe(). */
void metric_series_add(struct metric_series *s, double v)
{
	if (s && !s->counts)
		s->value += v;
}

void metric_series_set(struct metric_series *s, double v)
{
	if (s && !s->counts)
		s->value = v;
}

uint64_t metric_generation(const struct metric *m)
{
	return m ? m->generation : 0;
}

const char *metric_series_label(const struct metric_series *s, unsigned i)
{
	return s->values[i];
}

double metric_series_value(const struct metric_series *s)
{
	return s ? s->value : 0;
}

/* On a histogram family: no-ops that neither create a series nor count a drop. */
void metric_add(struct metric *m, const char *const *label_values, double v)
{
	if (m && m->hist)
		return;
	metric_series_add(metric_series_get(m, label_values), v);
}

void metric_set(struct metric *m, const char *const *label_values, double v)
{
	if (m && m->hist)
		return;
	metric_series_set(metric_series_get(m, label_values), v);
}

void metric_observe(struct metric *m, const char *const *label_values, double v)
{
	if (m && m->hist)
		metric_series_observe(m, metric_series_get(m, label_values), v);
}

void metric_series_observe(const struct metric *m, struct metric_series *s, double v)
{
	if (!s || !m->hist)
		return;
	/* First bound >= v; NaN and v above every bound land in +Inf only. */
	unsigned i = 0;

	while (i < m->hist->n_bounds && !(v <= m->hist->bounds[i]))
		i++;
	s->counts[i]++;
	s->value += v;
}

static unsigned long long series_observations(const struct metric *m,
					      const struct metric_series *s)
{
	unsigned long long n = 0;

	for (unsigned i = 0; i <= m->hist->n_bounds; i++)
		n += s->counts[i];
	return n;
}

unsigned long long metric_histogram_count(struct metric *m, const char *const *label_values)
{
	struct key k;

	if (!m || !m->hist || !key_make(m, label_values, &k))
		return 0;
	const struct metric_series *s = series_find(m, k.hash, k.v, NULL);
	key_free(m, &k);
	return s ? series_observations(m, s) : 0;
}

static void series_unlink(struct metric *m, struct metric_series *s, struct metric_series **link);

void metric_remove(struct metric *m, const char *const *label_values)
{
	struct metric_series **link = NULL;
	struct key k;

	if (!m || !key_make(m, label_values, &k))
		return;
	struct metric_series *s = series_find(m, k.hash, k.v, &link);
	key_free(m, &k);
	if (s)
		series_unlink(m, s, link);
}

void metric_clear(struct metric *m)
{
	if (m)
		series_free_all(m);
}

/* Takes s out of m and frees it; link: where the hash chain points to s. */
static void series_unlink(struct metric *m, struct metric_series *s, struct metric_series **link)
{
	*link = s->hnext;
	if (s->prev)
		s->prev->next = s->next;
	else
		m->head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		m->tail = s->prev;
	m->n_series--;
	m->generation++;
	free(s);
}

void metric_touch(struct metric *m, const char *const *label_values)
{
	struct key k;

	if (!m || !key_make(m, label_values, &k))
		return;
	struct metric_series *s = series_find(m, k.hash, k.v, NULL);
	key_free(m, &k);
	if (s)
		s->idle_since_ns = 0; /* the next exposition starts its idle time anew */
}

void metric_foreach_series(const struct metric *m,
			   void (*fn)(void *ctx, const char *const *values, double value), void *ctx)
{
	for (const struct metric_series *s = m ? m->head : NULL; s; s = s->next)
		fn(ctx, (const char *const *)s->values, s->value);
}

double metric_value(struct metric *m, const char *const *label_values)
{
	struct key k;

	if (!m || !key_make(m, label_values, &k))
		return 0;
	double v = metric_series_value(series_find(m, k.hash, k.v, NULL));
	key_free(m, &k);
	return v;
}

size_t metric_series_count(const struct metric *m)
{
	return m ? m->n_series : 0;
}

unsigned long long metric_dropped(const struct metric *m)
{
	return m ? m->dropped : 0;
}

void metric_registry_add_collector(struct metric_registry *r, metric_collector_fn fn, void *ctx)
{
	if (!r || !fn)
		return;
	if (r->n_collectors == r->cap_collectors) {
		size_t cap = r->cap_collectors ? r->cap_collectors * 2 : 4;
		struct metric_collector *c = realloc(r->collectors, cap * sizeof(*c));

		if (!c)
			return;
		r->collectors = c;
		r->cap_collectors = cap;
	}
	r->collectors[r->n_collectors++] = (struct metric_collector){ fn, ctx };
}

/* ---- exposition ---- */

static void put_escaped(struct strbuf *out, const char *s, bool quote)
{
	const char *run = s;

	for (; *s; s++) {
		const char *esc;

		if (*s == '\\')
			esc = "\\\\";
		else if (*s == '\n')
			esc = "\\n";
		else if (*s == '"' && quote)
			esc = "\\\"";
		else
			continue;
		strbuf_append(out, run, (size_t)(s - run));
		strbuf_puts(out, esc);
		run = s + 1;
	}
	strbuf_append(out, run, (size_t)(s - run));
}

void metric_registry_set_idle_expiry(struct metric_registry *r, uint64_t idle_ns)
{
	if (r)
		r->idle_expiry_ns = idle_ns;
}

int metric_registry_set_label_policy(struct metric_registry *r, const char *label,
				     const struct metric_label_policy *p)
{
	if (!r || !p || !valid_label_name(label) || strlen(label) >= sizeof(r->policy_label) ||
	    r->policy_label[0])
		return -EINVAL;
	snprintf(r->policy_label, sizeof(r->policy_label), "%s", label);
	r->policy = *p;
	for (struct metric *m = r->head; m; m = m->next)
		policy_locate(m);
	if (p->admit)
		return metric_register_u64(
			r, "nodescope_metric_updates_unreported_total",
			"Updates to series that are not reported: container series of processes "
			"outside any container (the host's root cgroup, user sessions, *.scope), pod "
			"sandboxes and container runtimes' monitors, as Coroot leaves them out "
			"(--keep-standalone-processes reports them).",
			METRIC_COUNTER, &r->unreported);
	return 0;
}

/*
 * Moves s's value into dst (the same family): values add up, gauges too (an
 * open connection counted under the old name is closed under the new one; a
 * gauge set at each scrape is set again at the next).
 */
static void series_merge(const struct metric *m, struct metric_series *dst,
			 const struct metric_series *s)
{
	if (m->hist)
		for (unsigned i = 0; i <= m->hist->n_bounds; i++)
			dst->counts[i] += s->counts[i];
	dst->value += s->value;
}

static void rename_in(struct metric *m, const char *from, const char *to)
{
	int p = m->policy_at;
	struct metric_series *s = m->head;

	while (s) {
		struct metric_series *next = s->next;
		if (strcmp(s->values[p], from)) {
			s = next;
			continue;
		}
		const char *v[METRIC_MAX_LABELS];
		memcpy(v, s->values, m->n_labels * sizeof(*v));
		v[p] = to;
		struct key k;
		if (key_make(m, v, &k)) {
			struct metric_series *dst = series_find(m, k.hash, k.v, NULL);
			if (!dst)
				dst = series_create(m, &k);
			if (dst)
				series_merge(m, dst, s);
			key_free(m, &k);
		}
		struct metric_series **link = NULL;
		if (series_find(m, s->hash, (const char *const *)s->values, &link) == s)
			series_unlink(m, s, link);
		s = next;
	}
}

int metric_registry_rename(struct metric_registry *r, const char *from, const char *to)
{
	if (!r || !r->policy_label[0] || !from || !to || !strcmp(from, to))
		return -EINVAL;
	char *f = strdup(from), *t = strdup(to);
	if (!f || !t) {
		free(f);
		free(t);
		return -ENOMEM;
	}
	struct alias *a = &r->aliases[r->next_alias];
	if (r->n_aliases == ALIASES) {
		free(a->from);
		free(a->to);
	} else {
		r->n_aliases++;
	}
	*a = (struct alias){ f, t };
	r->next_alias = (r->next_alias + 1) % ALIASES;
	for (struct metric *m = r->head; m; m = m->next)
		if (m->policy_at >= 0)
			rename_in(m, from, to);
	return 0;
}

void metric_registry_set_max_label_length(struct metric_registry *r, size_t max)
{
	if (r)
		r->max_label_len = max;
}

int metric_registry_derive_label(struct metric_registry *r, const char *from, const char *name,
				 metric_derive_fn fn)
{
	if (!r || !fn || !valid_label_name(from) || !valid_label_name(name) ||
	    strlen(from) >= sizeof(r->derive_from) || strlen(name) >= sizeof(r->derive_name))
		return -EINVAL;
	snprintf(r->derive_from, sizeof(r->derive_from), "%s", from);
	snprintf(r->derive_name, sizeof(r->derive_name), "%s", name);
	r->derive = fn;
	return 0;
}

/* A NULL-ended copy of prefixes in one allocation. */
static char **copy_prefixes(const char *const *prefixes)
{
	size_t n = 0, len = 0;

	for (; prefixes[n]; n++)
		len += strlen(prefixes[n]) + 1;
	char **out = malloc((n + 1) * sizeof(*out) + len);
	if (!out)
		return NULL;
	char *p = (char *)(out + n + 1);
	for (size_t i = 0; i < n; i++) {
		out[i] = strcpy(p, prefixes[i]);
		p += strlen(p) + 1;
	}
	out[n] = NULL;
	return out;
}

static bool has_prefix_labels(const struct metric_registry *r, const char *name)
{
	for (char **p = r->prefixes; r->prefix_labels && p && *p; p++)
		if (!strncmp(name, *p, strlen(*p)))
			return true;
	return false;
}

int metric_registry_set_const_labels(struct metric_registry *r, const char *const *prefixes,
				     unsigned n, const char *const *names,
				     const char *const *values)
{
	size_t len = 0;

	if (!r || n > METRIC_MAX_LABELS)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		if (!valid_label_name(names[i]) || !values[i])
			return -EINVAL;
		len += strlen(names[i]) + strlen(values[i]) + 2;
	}
	struct label_set *set = NULL;
	if (n) {
		set = malloc(sizeof(*set) + len);
		if (!set)
			return -ENOMEM;
		set->n = n;
		char *p = set->strings;
		for (unsigned i = 0; i < n; i++) {
			set->names[i] = strcpy(p, names[i]);
			p += strlen(p) + 1;
			set->values[i] = strcpy(p, values[i]);
			p += strlen(p) + 1;
		}
	}
	if (prefixes && prefixes[0]) {
		char **p = copy_prefixes(prefixes);
		if (!p) {
			free(set);
			return -ENOMEM;
		}
		free(r->prefixes);
		free(r->prefix_labels);
		r->prefixes = p;
		r->prefix_labels = set;
	} else {
		free(r->const_labels);
		r->const_labels = set;
	}
	return 0;
}

static void put_value(struct strbuf *out, double v)
{
	if (isnan(v))
		strbuf_puts(out, "NaN");
	else if (isinf(v))
		strbuf_puts(out, v > 0 ? "+Inf" : "-Inf");
	else if (v > -EXACT_INT_LIMIT && v < EXACT_INT_LIMIT && v == (double)(long long)v)
		strbuf_printf(out, "%lld", (long long)v); /* also turns -0 into "0" */
	else
		strbuf_printf(out, "%.17g", v);
}

static void sample_label(struct metric_sample *smp, const char *name, const char *value)
{
	smp->label_names[smp->n_labels] = name;
	smp->label_values[smp->n_labels++] = value;
}

static void sample_label_set(struct metric_sample *smp, const struct label_set *set)
{
	for (unsigned i = 0; set && i < set->n; i++)
		sample_label(smp, set->names[i], set->values[i]);
}

/*
 * One series' labels in exposition order: the registry's constant labels,
 * its family's prefix labels, its own (each derived label right after the
 * label it comes from, its value written into derived); le is the caller's.
 */
static void sample_labels(struct metric_sample *smp, const struct metric *m,
			  const struct metric_series *s, char *derived, size_t derived_len)
{
	const struct metric_registry *r = m->reg;

	smp->n_labels = 0;
	sample_label_set(smp, r->const_labels);
	if (has_prefix_labels(r, m->name))
		sample_label_set(smp, r->prefix_labels);
	for (unsigned i = 0; i < m->n_labels; i++) {
		sample_label(smp, m->label_names[i], s->values[i]);
		if (r->derive && !strcmp(m->label_names[i], r->derive_from)) {
			r->derive(s->values[i], derived, derived_len);
			sample_label(smp, r->derive_name, derived);
		}
	}
}

static void visit_histogram_series(const struct metric *m, struct metric_sample *smp,
				   const struct metric_series *s, const struct metric_visitor *v)
{
	const struct metric_hist *h = m->hist;
	unsigned long long cum = 0;
	unsigned n = smp->n_labels;

	smp->suffix = "_bucket";
	for (unsigned i = 0; i <= h->n_bounds; i++) {
		cum += s->counts[i];
		smp->n_labels = n;
		sample_label(smp, "le", i < h->n_bounds ? h->le[i] : "+Inf");
		smp->value = (double)cum;
		v->sample(v->ctx, smp);
	}
	smp->n_labels = n;
	smp->suffix = "_sum";
	smp->value = s->value;
	v->sample(v->ctx, smp);
	smp->suffix = "_count";
	smp->value = (double)cum;
	v->sample(v->ctx, smp);
}

static void visit_family(const struct metric *m, uint64_t now_ns, const struct metric_visitor *v)
{
	const struct metric_label_policy *policy = &m->reg->policy;
	int p = policy->show ? m->policy_at : -1;
	struct metric_sample smp = { .name = m->name };
	char derived[512];

	if (v->family)
		v->family(v->ctx, m->name, m->help, m->type);
	for (const struct metric_series *s = m->head; s; s = s->next) {
		if (p >= 0 && !policy->show(policy->ctx, s->values[p], now_ns))
			continue;
		sample_labels(&smp, m, s, derived, sizeof(derived));
		if (m->hist) {
			visit_histogram_series(m, &smp, s, v);
			continue;
		}
		smp.suffix = "";
		smp.value = s->value;
		v->sample(v->ctx, &smp);
	}
}

static const char *type_name(enum metric_type type)
{
	switch (type) {
	case METRIC_COUNTER:
		return "counter";
	case METRIC_HISTOGRAM:
		return "histogram";
	case METRIC_GAUGE:
		break;
	}
	return "gauge";
}

/* The text exposition: one visitor of the walk. */
static void text_family(void *ctx, const char *name, const char *help, enum metric_type type)
{
	struct strbuf *out = ctx;

	strbuf_printf(out, "# HELP %s ", name);
	put_escaped(out, help, false);
	strbuf_printf(out, "\n# TYPE %s %s\n", name, type_name(type));
}

static void text_sample(void *ctx, const struct metric_sample *smp)
{
	struct strbuf *out = ctx;

	strbuf_puts(out, smp->name);
	strbuf_puts(out, smp->suffix);
	/* puts, not printf: this runs for every label of every series. */
	for (unsigned i = 0; i < smp->n_labels; i++) {
		strbuf_putc(out, i ? ',' : '{');
		strbuf_puts(out, smp->label_names[i]);
		strbuf_append(out, "=\"", 2);
		put_escaped(out, smp->label_values[i], true);
		strbuf_putc(out, '"');
	}
	if (smp->n_labels)
		strbuf_putc(out, '}');
	strbuf_putc(out, ' ');
	put_value(out, smp->value);
	strbuf_putc(out, '\n');
}

/* A histogram's observation count (what changes when it is observed, even at 0). */
static unsigned long long series_count(const struct metric *m, const struct metric_series *s)
{
	unsigned long long n = 0;
	for (unsigned i = 0; m->hist && i <= m->hist->n_bounds; i++)
		n += s->counts[i];
	return n;
}

/*
 * Removes the series of expiring families that have not changed for the
 * registry's idle expiry, judged at each exposition: no timer, and nothing
 * on the path that updates them. A gauge that is not 0 (an open connection)
 * never expires.
 */
static void expire_idle(struct metric_registry *r, uint64_t now_ns)
{
	for (struct metric *m = r->head; m && r->idle_expiry_ns; m = m->next) {
		if (!m->expires)
			continue;
		for (struct metric_series *s = m->head, *next; s; s = next) {
			next = s->next;
			unsigned long long count = series_count(m, s);
			bool held = m->type == METRIC_GAUGE && s->value != 0;
			if (held || s->value != s->seen_value || count != s->seen_count ||
			    !s->idle_since_ns) {
				s->seen_value = s->value;
				s->seen_count = count;
				s->idle_since_ns = held ? 0 : now_ns;
				continue;
			}
			if (now_ns - s->idle_since_ns < r->idle_expiry_ns)
				continue;
			struct metric_series **link = &m->buckets[s->hash & (m->n_buckets - 1)];
			while (*link != s)
				link = &(*link)->hnext;
			series_unlink(m, s, link);
		}
	}
}

void metric_registry_write(struct metric_registry *r, struct strbuf *out)
{
	metric_registry_write_at(r, out, clock_mono_ns());
}

void metric_registry_write_at(struct metric_registry *r, struct strbuf *out, uint64_t now_ns)
{
	if (!out)
		return;
	struct metric_visitor v = { text_family, text_sample, out };
	metric_registry_visit_at(r, now_ns, &v);
}

void metric_registry_visit_at(struct metric_registry *r, uint64_t now_ns,
			      const struct metric_visitor *v)
{
	if (!r || !v || !v->sample)
		return;
	for (size_t i = 0; i < r->n_bound; i++)
		metric_set(r->bound[i].m, NULL, (double)*r->bound[i].src);
	for (size_t i = 0; i < r->n_collectors; i++)
		r->collectors[i].fn(r->collectors[i].ctx);
	sync_drops(r);
	expire_idle(r, now_ns);
	metric_registry_visit_cached_at(r, now_ns, v);
}

void metric_registry_visit_cached_at(const struct metric_registry *r, uint64_t now_ns,
				     const struct metric_visitor *v)
{
	if (!r || !v || !v->sample)
		return;
	for (const struct metric *m = r->head; m; m = m->next) {
		if (m->internal && !m->n_series)
			continue;
		visit_family(m, now_ns, v);
	}
}

int metric_register_u64(struct metric_registry *r, const char *name, const char *help,
			enum metric_type type, const uint64_t *src)
{
	if (!src || type == METRIC_HISTOGRAM)
		return -EINVAL;
	struct metric *m = metric_register(r, name, help, type, 0, 0, NULL);
	if (!m)
		return -EINVAL;
	if (r->n_bound == r->cap_bound) {
		size_t cap = r->cap_bound ? r->cap_bound * 2 : 16;
		struct metric_bound *b = realloc(r->bound, cap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		r->bound = b;
		r->cap_bound = cap;
	}
	r->bound[r->n_bound++] = (struct metric_bound){ m, src };
	metric_set(m, NULL, (double)*src);
	return 0;
}

int metric_register_defs(struct metric_registry *r, const struct metric_def *defs, size_t n,
			 void *owner, unsigned max_series)
{
	for (size_t i = 0; i < n; i++) {
		const struct metric_def *d = &defs[i];
		unsigned cap = d->capped ? max_series : 0;
		struct metric *m;

		if (d->value >= 0) {
			if (d->n_labels ||
			    metric_register_u64(r, d->name, d->help, d->type,
						(const uint64_t *)((char *)owner + d->value)))
				return -EINVAL;
			continue;
		}
		if (d->type == METRIC_HISTOGRAM)
			m = metric_register_histogram(r, d->name, d->help, cap, d->n_labels, d->labels,
						      d->bounds, d->n_bounds);
		else
			m = metric_register(r, d->name, d->help, d->type, cap, d->n_labels, d->labels);
		if (!m)
			return -EINVAL;
		m->expires = d->expires;
		if (d->handle >= 0)
			*(struct metric **)((char *)owner + d->handle) = m;
	}
	return 0;
}
