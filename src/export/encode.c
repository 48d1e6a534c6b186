#include "encode.h"

#include <errno.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote.pb-c.h"

void rw_encoder_init(struct rw_encoder *e, const struct rw_encoder_opts *o)
{
	memset(e, 0, sizeof(*e));
	e->o = *o;
	if (!e->o.max_bytes)
		e->o.max_bytes = RW_MAX_REQUEST_BYTES;
	if (!e->o.max_series)
		e->o.max_series = 1;
}

void rw_encoder_free(struct rw_encoder *e)
{
	strbuf_free(&e->raw);
	free(e->piece);
	free(e->md);
	free(e->compressed);
	e->piece = e->md = NULL;
	e->compressed = NULL;
}

void rw_encoder_begin(struct rw_encoder *e, int64_t ts_ms)
{
	e->ts_ms = ts_ms;
	strbuf_reset(&e->raw);
	e->n = 0;
	e->fam_name = NULL;
	e->err = 0;
	e->samples = e->batches = e->raw_bytes = e->wire_bytes = 0;
}

static void flush(struct rw_encoder *e)
{
	if (!e->n)
		return;
	if (e->raw.oom && !e->err)
		e->err = -ENOMEM;
	size_t need = snappy_max_compressed_length(e->raw.len);
	if (!e->err && need > e->compressed_cap) {
		char *c = realloc(e->compressed, need);
		if (c) {
			e->compressed = c;
			e->compressed_cap = need;
		} else {
			e->err = -ENOMEM;
		}
	}
	size_t len = e->compressed_cap;
	if (!e->err && snappy_compress(e->raw.buf, e->raw.len, e->compressed, &len) != SNAPPY_OK)
		e->err = -EINVAL;
	if (!e->err) {
		int err = e->o.batch(e->o.batch_ctx, e->compressed, len, e->n);
		if (err)
			e->err = err;
		e->batches++;
		e->raw_bytes += e->raw.len;
		e->wire_bytes += len;
	}
	strbuf_reset(&e->raw);
	e->n = 0;
	e->fam_sent = false;
}

/* wr packed into *buf (grown as needed); false when memory ran out. */
static bool pack(struct rw_encoder *e, const Prometheus__WriteRequest *wr, uint8_t **buf,
		 size_t *len, size_t *cap)
{
	size_t size = prometheus__write_request__get_packed_size(wr);
	if (size > *cap) {
		uint8_t *b = realloc(*buf, size);
		if (!b) {
			e->err = -ENOMEM;
			return false;
		}
		*buf = b;
		*cap = size;
	}
	*len = prometheus__write_request__pack(wr, *buf);
	return true;
}

void rw_encoder_family(struct rw_encoder *e, const char *name, const char *help,
		       enum metric_type type)
{
	e->fam_name = name;
	e->fam_help = help;
	e->fam_type = type;
	e->fam_sent = false;
}

static Prometheus__MetricMetadata__MetricType metadata_type(enum metric_type t)
{
	switch (t) {
	case METRIC_COUNTER:
		return PROMETHEUS__METRIC_METADATA__METRIC_TYPE__COUNTER;
	case METRIC_HISTOGRAM:
		return PROMETHEUS__METRIC_METADATA__METRIC_TYPE__HISTOGRAM;
	case METRIC_GAUGE:
		break;
	}
	return PROMETHEUS__METRIC_METADATA__METRIC_TYPE__GAUGE;
}

/* The family's type and help, once in each batch that has its samples. */
static bool pack_metadata(struct rw_encoder *e)
{
	Prometheus__MetricMetadata md = PROMETHEUS__METRIC_METADATA__INIT;
	Prometheus__MetricMetadata *mdp = &md;
	Prometheus__WriteRequest wr = PROMETHEUS__WRITE_REQUEST__INIT;

	md.type = metadata_type(e->fam_type);
	md.metric_family_name = (char *)e->fam_name;
	md.help = (char *)(e->fam_help ? e->fam_help : "");
	wr.n_metadata = 1;
	wr.metadata = &mdp;
	return pack(e, &wr, &e->md, &e->md_len, &e->md_cap);
}

/* Sorted by name (the protocol asks for it); of equal names the later one stays. */
static unsigned sort_labels(Prometheus__Label *l, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		Prometheus__Label x = l[i];
		unsigned j = i;
		for (; j > 0 && strcmp(l[j - 1].name, x.name) > 0; j--)
			l[j] = l[j - 1];
		l[j] = x;
	}
	unsigned out = 0;
	for (unsigned i = 0; i < n; i++) {
		if (out && !strcmp(l[out - 1].name, l[i].name))
			out--;
		l[out++] = l[i];
	}
	return out;
}

void rw_encoder_sample(struct rw_encoder *e, const struct metric_sample *s)
{
	enum { EXTRA = 3 }; /* __name__, job, instance */
	Prometheus__Label labels[METRIC_SAMPLE_MAX_LABELS + EXTRA];
	Prometheus__Label *lp[METRIC_SAMPLE_MAX_LABELS + EXTRA];
	Prometheus__Sample sample = PROMETHEUS__SAMPLE__INIT;
	Prometheus__Sample *sp = &sample;
	Prometheus__TimeSeries ts = PROMETHEUS__TIME_SERIES__INIT;
	Prometheus__TimeSeries *tsp = &ts;
	Prometheus__WriteRequest wr = PROMETHEUS__WRITE_REQUEST__INIT;
	char name[256];
	unsigned n = 0;

	if (e->err)
		return;
	snprintf(name, sizeof(name), "%s%s", s->name, s->suffix ? s->suffix : "");
	labels[n++] = (Prometheus__Label)PROMETHEUS__LABEL__INIT;
	labels[0].name = "__name__";
	labels[0].value = name;
	if (e->o.job) {
		labels[n] = (Prometheus__Label)PROMETHEUS__LABEL__INIT;
		labels[n].name = "job";
		labels[n++].value = (char *)e->o.job;
	}
	if (e->o.instance) {
		labels[n] = (Prometheus__Label)PROMETHEUS__LABEL__INIT;
		labels[n].name = "instance";
		labels[n++].value = (char *)e->o.instance;
	}
	for (unsigned i = 0; i < s->n_labels && i < METRIC_SAMPLE_MAX_LABELS; i++) {
		if (!s->label_values[i][0])
			continue; /* an empty value is no label in Prometheus' model: not sent */
		labels[n] = (Prometheus__Label)PROMETHEUS__LABEL__INIT;
		labels[n].name = (char *)s->label_names[i];
		labels[n++].value = (char *)s->label_values[i];
	}
	n = sort_labels(labels, n);
	for (unsigned i = 0; i < n; i++)
		lp[i] = &labels[i];
	sample.value = s->value;
	sample.timestamp = e->ts_ms;
	ts.n_labels = n;
	ts.labels = lp;
	ts.n_samples = 1;
	ts.samples = &sp;
	wr.n_timeseries = 1;
	wr.timeseries = &tsp;

	/* The family's metadata goes first in each batch that has its samples. */
	bool in_family = e->fam_name && !strcmp(e->fam_name, s->name);
	if (!pack(e, &wr, &e->piece, &e->piece_len, &e->piece_cap) ||
	    (in_family && !e->fam_sent && !pack_metadata(e)))
		return;
	size_t md_len = in_family && !e->fam_sent ? e->md_len : 0;
	if (e->n && (e->n >= e->o.max_series || e->raw.len + md_len + e->piece_len > e->o.max_bytes)) {
		flush(e);
		if (in_family && !md_len) {
			if (!pack_metadata(e))
				return;
			md_len = e->md_len;
		}
	}
	if (md_len) {
		strbuf_append(&e->raw, e->md, md_len);
		e->fam_sent = true;
	}
	strbuf_append(&e->raw, e->piece, e->piece_len);
	e->n++;
	e->samples++;
}

int rw_encoder_end(struct rw_encoder *e)
{
	flush(e);
	return e->err;
}

static void visit_family(void *ctx, const char *name, const char *help, enum metric_type type)
{
	rw_encoder_family(ctx, name, help, type);
}

static void visit_sample(void *ctx, const struct metric_sample *s)
{
	rw_encoder_sample(ctx, s);
}

void rw_encoder_visitor(struct rw_encoder *e, struct metric_visitor *v)
{
	*v = (struct metric_visitor){ visit_family, visit_sample, e };
}
