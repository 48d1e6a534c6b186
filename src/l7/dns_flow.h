/*
 * DNS questions and answers (UDP datagrams; TCP messages handed on as
 * datagrams by the tracker), paired by socket, id and peer address, counted
 * in Coroot's container_dns_requests_total{request_type, domain, status}
 * and its latency histogram (client side) or the inbound pair (a server's
 * side), and traced. One per L7 tracker.
 */
#ifndef NODESCOPE_L7_DNS_FLOW_H
#define NODESCOPE_L7_DNS_FLOW_H

#include <stddef.h>

#include "proto.h"

struct metric_registry;
struct proc_table;
struct trace;
struct ns_l7_event;
struct l7_dns;

struct l7_dns_opts {
	struct metric_registry *registry;
	struct proc_table *procs;
	struct trace *trace; /* may be NULL */
	unsigned max_series;
	unsigned max_fqdns; /* domains per container; more are counted as "~other" (Coroot's) */
	struct l7_counters *cnt; /* where its drops are counted (the tracker exports them as "dns") */
};

int l7_dns_new(const struct l7_dns_opts *o, struct l7_dns **out);
void l7_dns_free(struct l7_dns *d);
/* One message: a datagram of a DNS socket (NS_L7_F_DNS), its peer in conn.daddr/dport. */
void l7_dns_on_record(struct l7_dns *d, const struct ns_l7_event *e);
/*
 * The domain whose answer gave addr (family AF_INET: 4 bytes, AF_INET6: 16)
 * when that domain has several addresses, all external: Coroot then names
 * connections to it "<domain>:<port>" with no actual destination. NULL
 * otherwise, or when d is NULL.
 */
const char *l7_dns_fan_out_domain(const struct l7_dns *d, int family, const uint8_t *addr);

#endif
