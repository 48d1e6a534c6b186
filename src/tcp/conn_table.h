/*
 * The connection table: live TCP connections and listeners, bounded. Keyed by
 * the kernel socket and its start time, so a reused fd or even a reused
 * socket address never merges two connections. Connections found at start-up
 * have no socket address: they are found by their address tuple. Pure.
 */
#ifndef NODESCOPE_TCP_CONN_TABLE_H
#define NODESCOPE_TCP_CONN_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "addr.h"
#include "util/hmap.h"

struct tcp_tuple {
	uint16_t family;
	uint16_t sport; /* local */
	uint16_t dport; /* remote */
	uint8_t saddr[16];
	uint8_t daddr[16];
};

enum tcp_conn_kind {
	TCP_CONN_OUTBOUND,
	TCP_CONN_INBOUND,
	TCP_CONN_LISTENER,
};

struct tcp_conn {
	struct hmap_node node;
	uint64_t sock;	   /* 0 for connections found at start-up */
	uint64_t start_ns; /* 0 if unknown */
	struct tcp_tuple tuple;
	enum tcp_conn_kind kind;
	uint32_t pid;
	int32_t fd;
	bool metered; /* counted in the per-destination metrics */
	/* Bytes already added to the byte counters (read live at scrapes, before the close). */
	uint64_t counted_sent, counted_received;
	uint64_t netns; /* inode of its network namespace, once asked (0: not yet) */
	char peer[TCP_ADDR_STRLEN]; /* remote "ip:port" (listener: its own address) */
	char actual[TCP_ADDR_STRLEN]; /* where NAT sends it (= peer without NAT) */
	char *expanded; /* a wildcard listener: its namespace's "ip:port"s, NUL-separated, "" last; or NULL */
	char container[];
};

struct tcp_conn_table {
	struct hmap by_sock;
	struct hmap by_tuple;
	size_t cap;
	uint64_t refused;
};

int tcp_conn_table_init(struct tcp_conn_table *t, size_t cap);
void tcp_conn_table_destroy(struct tcp_conn_table *t);

/*
 * Adds a connection (sock != 0) or a start-up one (sock == 0, indexed by
 * tuple). Returns NULL when the table is full (counted) or out of memory.
 */
struct tcp_conn *tcp_conn_add(struct tcp_conn_table *t, uint64_t sock, uint64_t start_ns,
			      const struct tcp_tuple *tuple, enum tcp_conn_kind kind,
			      const char *container);
/* The connection of sock started at start_ns (start_ns 0 matches any). */
struct tcp_conn *tcp_conn_find(struct tcp_conn_table *t, uint64_t sock, uint64_t start_ns);
struct tcp_conn *tcp_conn_find_tuple(struct tcp_conn_table *t, const struct tcp_tuple *tuple);
void tcp_conn_remove(struct tcp_conn_table *t, struct tcp_conn *c);
size_t tcp_conn_count(const struct tcp_conn_table *t);

#endif
