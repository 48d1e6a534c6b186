#include "conn_table.h"

#include <stdlib.h>
#include <string.h>

static uint64_t tuple_key(const struct tcp_tuple *t)
{
	uint64_t h = hmap_hash_bytes(t->saddr, sizeof(t->saddr));
	h ^= hmap_hash_bytes(t->daddr, sizeof(t->daddr)) * 31;
	return h ^ ((uint64_t)t->family << 48) ^ ((uint64_t)t->sport << 16) ^ t->dport;
}

static bool tuple_eq(const struct tcp_tuple *a, const struct tcp_tuple *b)
{
	return a->family == b->family && a->sport == b->sport && a->dport == b->dport &&
	       !memcmp(a->saddr, b->saddr, sizeof(a->saddr)) &&
	       !memcmp(a->daddr, b->daddr, sizeof(a->daddr));
}

int tcp_conn_table_init(struct tcp_conn_table *t, size_t cap)
{
	t->cap = cap;
	t->refused = 0;
	if (hmap_init(&t->by_sock, cap))
		return -1;
	if (hmap_init(&t->by_tuple, cap / 4)) {
		hmap_destroy(&t->by_sock);
		return -1;
	}
	return 0;
}

void tcp_conn_table_destroy(struct tcp_conn_table *t)
{
	struct hmap_node *n;
	while ((n = hmap_pop(&t->by_sock)) || (n = hmap_pop(&t->by_tuple))) {
		struct tcp_conn *c = hmap_entry(n, struct tcp_conn, node);
		free(c->expanded);
		free(c);
	}
	hmap_destroy(&t->by_sock);
	hmap_destroy(&t->by_tuple);
}

size_t tcp_conn_count(const struct tcp_conn_table *t)
{
	return t->by_sock.count + t->by_tuple.count;
}

struct tcp_conn *tcp_conn_add(struct tcp_conn_table *t, uint64_t sock, uint64_t start_ns,
			      const struct tcp_tuple *tuple, enum tcp_conn_kind kind,
			      const char *container)
{
	if (tcp_conn_count(t) >= t->cap) {
		t->refused++;
		return NULL;
	}
	size_t n = strlen(container);
	struct tcp_conn *c = calloc(1, sizeof(*c) + n + 1);
	if (!c) {
		t->refused++;
		return NULL;
	}
	c->sock = sock;
	c->start_ns = start_ns;
	c->tuple = *tuple;
	c->kind = kind;
	c->fd = -1;
	memcpy(c->container, container, n + 1);
	if (kind == TCP_CONN_LISTENER)
		tcp_addr_format(tuple->family, tuple->saddr, tuple->sport, c->peer, sizeof(c->peer));
	else
		tcp_addr_format(tuple->family, tuple->daddr, tuple->dport, c->peer, sizeof(c->peer));
	memcpy(c->actual, c->peer, sizeof(c->actual));
	if (sock)
		hmap_insert(&t->by_sock, &c->node, sock);
	else
		hmap_insert(&t->by_tuple, &c->node, tuple_key(tuple));
	return c;
}

struct tcp_conn *tcp_conn_find(struct tcp_conn_table *t, uint64_t sock, uint64_t start_ns)
{
	for (struct hmap_node *n = hmap_get(&t->by_sock, sock); n; n = hmap_next_same(n)) {
		struct tcp_conn *c = hmap_entry(n, struct tcp_conn, node);
		if (!start_ns || !c->start_ns || c->start_ns == start_ns)
			return c;
	}
	return NULL;
}

struct tcp_conn *tcp_conn_find_tuple(struct tcp_conn_table *t, const struct tcp_tuple *tuple)
{
	for (struct hmap_node *n = hmap_get(&t->by_tuple, tuple_key(tuple)); n;
	     n = hmap_next_same(n)) {
		struct tcp_conn *c = hmap_entry(n, struct tcp_conn, node);
		if (tuple_eq(&c->tuple, tuple))
			return c;
	}
	return NULL;
}

void tcp_conn_remove(struct tcp_conn_table *t, struct tcp_conn *c)
{
	hmap_unlink(c->sock ? &t->by_sock : &t->by_tuple, &c->node);
	free(c->expanded);
	free(c);
}
