#include "families_json.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "metrics/registry.h"
#include "trace/json.h"

/*
 * Labels the page has no use for: the node's identity (the same on every
 * series; the page knows its node) and app_id (derived from container_id).
 */
static const char *const node_labels[] = { "machine_id", "system_uuid", "az", "region", "app_id",
					   NULL };

struct walk {
	const struct families_select *sel;
	struct strbuf *out;
	const char *name; /* the family being walked */
	enum metric_type type;
	bool family_ok;	 /* the family is selected (label test at its first sample) */
	bool checked;	 /* family_ok is known */
	bool open;	 /* its header is written */
	bool row_open;	 /* a histogram row is being written */
	bool bounds_done;
	int n_families;
	int n_rows;
	struct strbuf key;    /* the open histogram row's label values */
	struct strbuf bounds; /* the first row's le values */
};

static bool listed(const char *const *list, const char *s)
{
	for (; list && *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

void json_number(struct strbuf *out, double v)
{
	if (isnan(v) || isinf(v))
		strbuf_puts(out, "null");
	else if (v == (double)(long long)v && fabs(v) < 9007199254740992.0)
		strbuf_printf(out, "%lld", (long long)v);
	else
		strbuf_printf(out, "%.15g", v); /* 15 digits: what a double holds exactly */
}

static void end_row(struct walk *w)
{
	if (!w->row_open)
		return;
	strbuf_putc(w->out, ']'); /* the sum closes it (see sample) */
	w->row_open = false;
}

static void end_family(struct walk *w)
{
	if (!w->open)
		return;
	if (w->row_open)
		strbuf_puts(w->out, "]]"); /* a row cut short: buckets with no sum */
	w->row_open = false;
	strbuf_puts(w->out, "]");
	if (w->type == METRIC_HISTOGRAM) {
		strbuf_puts(w->out, ",\"bounds\":[");
		strbuf_append(w->out, w->bounds.buf ? w->bounds.buf : "", w->bounds.len);
		strbuf_putc(w->out, ']');
	}
	strbuf_putc(w->out, '}');
	w->open = false;
}

static void on_family(void *ctx, const char *name, const char *help, enum metric_type type)
{
	struct walk *w = ctx;

	end_family(w);
	w->name = name;
	w->type = type;
	w->checked = false;
	w->family_ok = !strncmp(name, w->sel->prefix ? w->sel->prefix : "",
				strlen(w->sel->prefix ? w->sel->prefix : ""));
	w->family_ok |= listed(w->sel->also, name);
	w->bounds_done = false;
	w->n_rows = 0;
	strbuf_reset(&w->bounds);
	strbuf_reset(&w->key);
}

static bool is_own_label(const char *name)
{
	return !listed(node_labels, name) && strcmp(name, "le");
}

static int label_index(const struct metric_sample *s, const char *name)
{
	for (unsigned i = 0; i < s->n_labels; i++)
		if (!strcmp(s->label_names[i], name))
			return (int)i;
	return -1;
}

static void write_header(struct walk *w, const struct metric_sample *s)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };

	strbuf_puts(w->out, w->n_families++ ? "," : "");
	strbuf_puts(w->out, "{\"name\":");
	json_string(w->out, w->name);
	strbuf_printf(w->out, ",\"type\":\"%s\",\"labels\":[", types[w->type]);
	int n = 0;
	for (unsigned i = 0; i < s->n_labels; i++) {
		if (!is_own_label(s->label_names[i]))
			continue;
		strbuf_puts(w->out, n++ ? "," : "");
		json_string(w->out, s->label_names[i]);
	}
	strbuf_puts(w->out, "],\"rows\":[");
	w->open = true;
}

static void write_labels(struct walk *w, const struct metric_sample *s, struct strbuf *to)
{
	for (unsigned i = 0; i < s->n_labels; i++) {
		if (!is_own_label(s->label_names[i]))
			continue;
		json_string(to, s->label_values[i]);
		strbuf_putc(to, ',');
	}
}

static void on_sample(void *ctx, const struct metric_sample *s)
{
	struct walk *w = ctx;
	const struct families_select *sel = w->sel;

	if (!w->checked) {
		w->checked = true;
		if (w->family_ok && sel->with_label && !listed(sel->also, w->name))
			w->family_ok = label_index(s, sel->with_label) >= 0;
	}
	if (!w->family_ok)
		return;
	if (sel->match_label) {
		int i = label_index(s, sel->match_label);
		if (i < 0 || strcmp(s->label_values[i], sel->match_value ? sel->match_value : ""))
			return;
	}
	if (!w->open)
		write_header(w, s);
	if (w->type != METRIC_HISTOGRAM) {
		strbuf_puts(w->out, w->n_rows++ ? ",[" : "[");
		write_labels(w, s, w->out);
		json_number(w->out, s->value);
		strbuf_putc(w->out, ']');
		return;
	}
	/* A histogram series: its buckets (le last), then _sum, then _count. */
	if (!strcmp(s->suffix, "_bucket")) {
		struct strbuf key = STRBUF_INIT;
		write_labels(w, s, &key);
		if (w->row_open && (key.len != w->key.len || memcmp(key.buf, w->key.buf, key.len))) {
			strbuf_puts(w->out, "]]"); /* the previous row had no sum: close it */
			w->row_open = false;
			w->bounds_done = true;
		}
		if (!w->row_open) {
			strbuf_puts(w->out, w->n_rows++ ? ",[" : "[");
			strbuf_append(w->out, key.buf ? key.buf : "", key.len);
			strbuf_putc(w->out, '[');
			strbuf_reset(&w->key);
			strbuf_append(&w->key, key.buf ? key.buf : "", key.len);
			w->row_open = true;
		} else {
			strbuf_putc(w->out, ',');
		}
		strbuf_free(&key);
		json_number(w->out, s->value);
		if (!w->bounds_done) {
			const char *le = s->label_values[s->n_labels - 1];
			strbuf_puts(&w->bounds, w->bounds.len ? "," : "");
			json_string(&w->bounds, le);
		}
	} else if (!strcmp(s->suffix, "_sum") && w->row_open) {
		strbuf_putc(w->out, ']');
		strbuf_putc(w->out, ',');
		json_number(w->out, s->value);
		end_row(w);
		w->bounds_done = true;
	}
}

void families_json(struct metric_registry *r, uint64_t now_ns, const struct families_select *sel,
		   struct strbuf *out)
{
	struct walk w = { .sel = sel, .out = out, .key = STRBUF_INIT, .bounds = STRBUF_INIT };
	struct metric_visitor v = { on_family, on_sample, &w };

	strbuf_putc(out, '[');
	if (sel->cached)
		metric_registry_visit_cached_at(r, now_ns, &v);
	else
		metric_registry_visit_at(r, now_ns, &v);
	end_family(&w);
	strbuf_putc(out, ']');
	strbuf_free(&w.key);
	strbuf_free(&w.bounds);
}
