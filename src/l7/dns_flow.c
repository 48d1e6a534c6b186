/* DNS questions and answers paired per socket. See dns_flow.h. */
#include "dns_flow.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns.h"
#include "families.h"
#include "events.h"
#include "metrics/registry.h"
#include "tcp/addr.h"
#include "proc/optouts.h"
#include "proc/table.h"
#include "tcp/addr.h"
#include "trace/trace.h"
#include "util/hmap.h"
#include "util/strmap.h"

/*
 * Questions waiting for their answer, oldest overwritten first: a resolver
 * gives up after seconds, and one asked again is a new question.
 */
#define DNS_PENDING 1024
#define DNS_SEEN_MAX 65536 /* (container, domain) pairs remembered for the cap */

/*
 * A question is known by its socket, its id and its peer: an unconnected
 * socket (a server's, or a client's asking several servers) has many. A
 * peer the BPF side could not read (NS_L7_F_PEER_UNKNOWN) matches any.
 */
struct dns_peer {
	uint16_t family, port;
	uint8_t addr[16];
	bool unknown;
};

struct dns_question {
	struct hmap_node node;
	bool live;
	uint64_t sock, start_ns, ts_ns;
	struct dns_peer peer;
	uint16_t id, qtype;
	char name[DNS_NAME_LEN];
};

/* An address of a domain Coroot keys by name (several addresses, all external). */
struct fan_out {
	struct hmap_node node;
	bool used;
	uint16_t family;
	uint8_t addr[16];
	char fqdn[DNS_NAME_LEN];
};
#define DNS_FAN_OUT 1024 /* addresses kept; the oldest answer's make room */

struct l7_dns {
	struct l7_dns_opts o;
	struct fan_out fan_out[DNS_FAN_OUT]; /* a ring, indexed by fan_out_index */
	unsigned fan_out_next;
	struct hmap fan_out_index;
	struct dns_question ring[DNS_PENDING];
	unsigned next;
	struct hmap waiting;
	struct strmap seen;	   /* "container\ndomain" */
	struct strmap per_container; /* container -> domains seen */
	struct metric *requests, *duration, *in_requests, *in_duration, *ip_to_fqdn;
};

#define T struct l7_dns
static const struct metric_def dns_metrics[] = {
	{ "container_dns_requests_total", "DNS questions the container asked, by type, domain and answer.",
	  METRIC_COUNTER, METRIC_LABELS("container_id", "request_type", "domain", "status"),
	  .capped = true, .expires = true, METRIC_HANDLE(T, requests) },
	{ "container_dns_requests_duration_seconds_total",
	  "DNS latency: the question written to the answer read.", METRIC_HISTOGRAM,
	  METRIC_LABELS("container_id"), METRIC_BOUNDS(l7_duration_bounds), .capped = true,
	  .expires = true, METRIC_HANDLE(T, duration) },
	{ "ip_to_fqdn", "Addresses and the domain whose DNS answer gave them (Coroot's rules).",
	  METRIC_GAUGE, METRIC_LABELS("ip", "fqdn"), .capped = true, .expires = true,
	  METRIC_HANDLE(T, ip_to_fqdn) },
	{ "container_dns_inbound_requests_total",
	  "DNS questions the container answered, by Coroot's generic status (the response code; "
	  "0 is \"unknown\").",
	  METRIC_COUNTER, METRIC_LABELS("container_id", "status"), .capped = true, .expires = true,
	  METRIC_HANDLE(T, in_requests) },
	{ "container_dns_inbound_requests_duration_seconds_total",
	  "DNS answering latency: the question read to the answer written.", METRIC_HISTOGRAM,
	  METRIC_LABELS("container_id"), METRIC_BOUNDS(l7_duration_bounds), .capped = true,
	  .expires = true, METRIC_HANDLE(T, in_duration) },
};
#undef T

int l7_dns_new(const struct l7_dns_opts *o, struct l7_dns **out)
{
	struct l7_dns *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->o = *o;
	if (hmap_init(&d->waiting, DNS_PENDING) || hmap_init(&d->fan_out_index, DNS_FAN_OUT) ||
	    strmap_init(&d->seen, DNS_SEEN_MAX) ||
	    strmap_init(&d->per_container, DNS_SEEN_MAX) ||
	    metric_register_defs(o->registry, dns_metrics, METRIC_DEFS_COUNT(dns_metrics), d,
				 o->max_series)) {
		l7_dns_free(d);
		return -EINVAL;
	}
	*out = d;
	return 0;
}

void l7_dns_free(struct l7_dns *d)
{
	if (!d)
		return;
	hmap_destroy(&d->waiting);
	hmap_destroy(&d->fan_out_index);
	strmap_destroy(&d->seen);
	strmap_destroy(&d->per_container);
	free(d);
}

/* Not by peer, which may be unknown on either side: questions with one id at once are few. */
static uint64_t question_key(uint64_t sock, uint64_t start_ns, uint16_t id)
{
	return (sock ^ (start_ns * 0x9e3779b97f4a7c15ull)) + id;
}

/* The record's other end: the datagram's own (the BPF side fills it in per datagram). */
static struct dns_peer peer_of(const struct ns_l7_event *e)
{
	struct dns_peer p = { .family = e->conn.family, .port = e->conn.dport,
			      .unknown = e->conn.flags & NS_L7_F_PEER_UNKNOWN };
	memcpy(p.addr, e->conn.daddr, sizeof(p.addr));
	return p;
}

static bool peer_match(const struct dns_peer *a, const struct dns_peer *b)
{
	return a->unknown || b->unknown ||
	       (a->family == b->family && a->port == b->port && !memcmp(a->addr, b->addr, sizeof(a->addr)));
}

static void ask(struct l7_dns *d, const struct ns_l7_event *e, const struct dns_msg *m)
{
	struct dns_question *q = &d->ring[d->next];
	d->next = (d->next + 1) % DNS_PENDING;
	if (q->live) {
		hmap_unlink(&d->waiting, &q->node);
		d->o.cnt->table_full++; /* never answered, or the ring turned over first */
	}
	q->live = true;
	q->sock = e->conn.sock;
	q->start_ns = e->conn.start_ns;
	q->peer = peer_of(e);
	q->ts_ns = e->ts_ns;
	q->id = m->id;
	q->qtype = m->qtype;
	memcpy(q->name, m->name, sizeof(q->name));
	hmap_insert(&d->waiting, &q->node, question_key(q->sock, q->start_ns, q->id));
}

static struct dns_question *find(struct l7_dns *d, const struct ns_l7_event *e, uint16_t id)
{
	struct dns_peer p = peer_of(e);
	for (struct hmap_node *n = hmap_get(&d->waiting, question_key(e->conn.sock, e->conn.start_ns, id));
	     n; n = hmap_next_same(n)) {
		struct dns_question *q = hmap_entry(n, struct dns_question, node);
		if (q->sock == e->conn.sock && q->start_ns == e->conn.start_ns && q->id == id &&
		    peer_match(&q->peer, &p))
			return q;
	}
	return NULL;
}

/* The domain label: Coroot's normalised form, "~other" past the container's cap. */
static const char *domain_label(struct l7_dns *d, const char *container, const char *fqdn)
{
	char key[512];
	if (!fqdn[0])
		return fqdn;
	snprintf(key, sizeof(key), "%s\n%s", container, fqdn);
	if (strmap_get(&d->seen, key))
		return fqdn;
	int64_t *n = strmap_upsert(&d->per_container, container);
	if (!n || *n >= (int64_t)d->o.max_fqdns || !strmap_upsert(&d->seen, key))
		return "~other";
	(*n)++;
	return fqdn;
}

static uint64_t fan_out_hash(int family, const uint8_t *addr)
{
	return hmap_hash_bytes(addr, family == AF_INET ? 4 : 16) ^ (uint64_t)family;
}

static struct fan_out *fan_out_find(const struct l7_dns *d, int family, const uint8_t *addr)
{
	size_t len = family == AF_INET ? 4 : 16;
	for (struct hmap_node *n = hmap_get(&d->fan_out_index, fan_out_hash(family, addr)); n;
	     n = hmap_next_same(n)) {
		struct fan_out *f = hmap_entry(n, struct fan_out, node);
		if (f->family == family && !memcmp(f->addr, addr, len))
			return f;
	}
	return NULL;
}

const char *l7_dns_fan_out_domain(const struct l7_dns *d, int family, const uint8_t *addr)
{
	const struct fan_out *f = d ? fan_out_find(d, family, addr) : NULL;
	return f ? f->fqdn : NULL;
}

/* The address now answers for fqdn (its latest answer wins). */
static void fan_out_add(struct l7_dns *d, const struct dns_addr *a, const char *fqdn)
{
	struct fan_out *f = fan_out_find(d, a->family, a->addr);
	if (!f) {
		f = &d->fan_out[d->fan_out_next++ % DNS_FAN_OUT];
		if (f->used)
			hmap_unlink(&d->fan_out_index, &f->node);
		f->used = true;
		f->family = a->family;
		memcpy(f->addr, a->addr, sizeof(f->addr));
		hmap_insert(&d->fan_out_index, &f->node, fan_out_hash(a->family, a->addr));
	}
	snprintf(f->fqdn, sizeof(f->fqdn), "%s", fqdn);
}

/*
 * ip_to_fqdn: each address of the answer names its domain, unless a domain
 * resolves to several addresses all external (a public service's fan-out):
 * Coroot keys connections to those by the domain, not the address
 * (l7_dns_fan_out_domain).
 */
static void map_addresses(struct l7_dns *d, const struct dns_msg *m, const char *fqdn)
{
	bool specify = m->n_addrs <= 1;
	for (unsigned i = 0; i < m->n_addrs && !specify; i++)
		specify = !tcp_addr_external(m->addrs[i].family, m->addrs[i].addr);
	if (!fqdn[0])
		return;
	if (!specify) {
		for (unsigned i = 0; i < m->n_addrs; i++)
			fan_out_add(d, &m->addrs[i], fqdn);
		return;
	}
	for (unsigned i = 0; i < m->n_addrs; i++) {
		char ip[INET6_ADDRSTRLEN];
		if (!inet_ntop(m->addrs[i].family, m->addrs[i].addr, ip, sizeof(ip)))
			continue;
		const char *labels[] = { ip, fqdn };
		metric_set(d->ip_to_fqdn, labels, 1);
	}
}

/*
 * A question this side answered. Coroot labels these with its generic
 * status, whose names DNS codes do not have: 0 is "unknown", others their
 * number.
 */
static void answered(struct l7_dns *d, const struct ns_l7_event *e, const struct dns_msg *m,
		     uint64_t dur)
{
	static const char *const codes[16] = { "unknown", "1", "2",  "3",  "4",  "5",  "6",  "7",
						"8",	   "9", "10", "11", "12", "13", "14", "15" };
	const char *container = proc_table_container_of(d->o.procs, e->pid);
	const char *labels[] = { container, codes[m->rcode & 15] };
	metric_add(d->in_requests, labels, 1);
	metric_observe(d->in_duration, &container, dur / 1e9);
}

static void answer(struct l7_dns *d, const struct ns_l7_event *e, const struct dns_msg *m)
{
	struct dns_question *q = find(d, e, m->id);
	if (!q) {
		d->o.cnt->unpaired++;
		return;
	}
	q->live = false;
	hmap_unlink(&d->waiting, &q->node);
	bool inbound = e->conn.flags & NS_L7_F_INBOUND;
	if (inbound)
		answered(d, e, m, e->ts_ns > q->ts_ns ? e->ts_ns - q->ts_ns : 0);
	const char *status = dns_status_name(m->rcode);
	/* An empty AAAA answer asked beside an A question adds nothing (Coroot leaves it out). */
	if (inbound || !status || (q->qtype == 28 && m->rcode == 0 && !m->n_addrs))
		return;
	char tbuf[8], fqdn[DNS_NAME_LEN];
	const char *type = dns_type_name(q->qtype, tbuf, sizeof(tbuf));
	const char *container = proc_table_container_of(d->o.procs, e->pid);
	uint64_t dur = e->ts_ns > q->ts_ns ? e->ts_ns - q->ts_ns : 0;

	dns_normalize_fqdn(q->name, q->qtype, fqdn, sizeof(fqdn));
	map_addresses(d, m, fqdn);
	const char *labels[] = { container, type, domain_label(d, container, fqdn), status };
	metric_add(d->requests, labels, 1);
	metric_observe(d->duration, &container, dur / 1e9);
	if (!trace_wanted(d->o.trace) || /* trace, or the page's recent requests */
	    (proc_table_optouts_of(d->o.procs, e->pid) & PROC_OPTOUT_TRACES))
		return;
	char local[TCP_ADDR_STRLEN], remote[TCP_ADDR_STRLEN];
	const struct ns_l7_sock *s = &e->conn;
	/* The server is the question's peer when the answer's could not be read. */
	const struct dns_peer *server = (s->flags & NS_L7_F_PEER_UNKNOWN) ? &q->peer : NULL;
	tcp_addr_format(s->family, s->saddr, s->sport, local, sizeof(local));
	if (server)
		tcp_addr_format(server->family, server->addr, server->port, remote, sizeof(remote));
	else
		tcp_addr_format(s->family, s->daddr, s->dport, remote, sizeof(remote));
	struct trace_l7 r = {
		.proto = "dns",
		.pid = e->pid,
		.op = type,
		.statement = q->name,
		.status_name = status,
		.ts_ns = q->ts_ns,
		.duration_ns = dur,
		.src = local,
		.dst = remote,
		.container = container,
	};
	trace_l7(d->o.trace, &r);
}

void l7_dns_on_record(struct l7_dns *d, const struct ns_l7_event *e)
{
	struct dns_msg m;
	/* A datagram is a whole message; one longer than the capture is cut (its answers). */
	if (dns_parse(e->data, e->captured, &m)) {
		d->o.cnt->unparseable++;
		return;
	}
	d->o.cnt->messages++;
	if (e->captured < e->total)
		d->o.cnt->truncated++;
	/* The client writes questions and reads answers; a server the other way round. */
	bool asked = e->conn.flags & NS_L7_F_INBOUND ? e->op == NS_L7_READ : e->op == NS_L7_WRITE;
	if (asked && !m.response)
		ask(d, e, &m);
	else if (!asked && m.response)
		answer(d, e, &m);
}
