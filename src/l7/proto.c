/* The protocol table and what the parsers share. See proto.h. */
#include "proto.h"

#include <stddef.h>
#include <string.h>

/*
 * Detection tries them in this order; each rejects the others' data, the
 * binary ones (with lengths to check) come first.
 */
const struct l7_proto *const l7_protos[] = {
	&l7_proto_postgres, &l7_proto_mysql,	&l7_proto_mongo,     &l7_proto_clickhouse,
	&l7_proto_cassandra, &l7_proto_kafka,	&l7_proto_zookeeper, &l7_proto_rabbitmq,
	&l7_proto_redis,     &l7_proto_memcached, &l7_proto_nats,
};
const size_t l7_n_protos = sizeof(l7_protos) / sizeof(l7_protos[0]);

const struct l7_proto *l7_proto_by_name(const char *name)
{
	for (size_t i = 0; i < l7_n_protos; i++)
		if (!strcmp(l7_protos[i]->name, name))
			return l7_protos[i];
	return NULL;
}

void l7_proto_feed(const struct l7_proto *p, void *state, enum l7_dir dir, const uint8_t *data,
		   size_t captured, size_t total, l7_msg_fn fn, void *ctx)
{
	const struct l7_counters *c = p->counters(state);
	uint64_t before = c->lost + c->unparseable;
	/* The parsers see data[0..captured) with captured <= total, data NULL only when 0. */
	if (!data)
		captured = 0;
	if (captured > total)
		captured = total;
	p->feed(state, dir, data, captured, total, fn, ctx);
	if (dir == L7_DIR_RESPONSE && !p->one_in_flight && c->lost + c->unparseable != before) {
		struct l7_msg m;
		l7_msg_init(&m, L7_MSG_LOST);
		fn(ctx, &m);
	}
}

#define FIELD(f) { #f, offsetof(struct l7_counters, f) }
const struct l7_counter_field l7_counter_fields[] = {
	FIELD(messages), FIELD(unparseable), FIELD(truncated),
	FIELD(lost),	 FIELD(table_full),  FIELD(unpaired), FIELD(undecoded),
};
#undef FIELD
const size_t l7_n_counter_fields = sizeof(l7_counter_fields) / sizeof(l7_counter_fields[0]);

void l7_counters_add(struct l7_counters *sum, const struct l7_counters *c)
{
	for (size_t i = 0; i < l7_n_counter_fields; i++)
		*(uint64_t *)((char *)sum + l7_counter_fields[i].offset) +=
			*(const uint64_t *)((const char *)c + l7_counter_fields[i].offset);
}

const char *l7_status_name(enum l7_status s)
{
	switch (s) {
	case L7_STATUS_OK:
		return "ok";
	case L7_STATUS_FAILED:
		return "failed";
	default:
		return "unknown";
	}
}

void l7_copy_printable(char *out, size_t cap, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t k = 0;

	if (!cap)
		return;
	for (size_t i = 0; i < n && k + 1 < cap; i++)
		out[k++] = s[i] >= 0x20 && s[i] < 0x7f ? (char)s[i] : '?';
	out[k] = '\0';
}

/* Appends s to out[0..*k), keeping room for the NUL. */
static void append(char *out, size_t cap, size_t *k, const char *s)
{
	size_t n = strlen(s);

	if (n > cap - 1 - *k)
		n = cap - 1 - *k;
	memcpy(out + *k, s, n);
	*k += n;
}

void l7_join(char *out, size_t cap, const char *a, const char *b)
{
	size_t k = 0;

	if (!cap)
		return;
	append(out, cap, &k, a);
	if (b && *b) {
		append(out, cap, &k, " ");
		append(out, cap, &k, b);
	}
	out[k] = '\0';
}
