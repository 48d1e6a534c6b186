#include "tcp/proxied.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "containers/meta.h"
#include "metrics/registry.h"
#include "node/net.h"
#include "proc/table.h"
#include "tcp/addr.h"
#include "tcp/listen_addrs.h"
#include "util/hmap.h"

#define PROXY "dockerd"

struct proxied_ctr {
	struct hmap_node node;
	struct containers_port *ports;
	size_t n_ports;
	char *shown;   /* the listen_addr values written: "a\0b\0\0", or NULL */
	size_t shown_len;
	char id[];
};

struct tcp_proxied {
	struct metric *listen_info;
	struct proc_table *procs;
	const struct ns_port_ranges *ephemeral;
	struct hmap ctrs; /* id hash -> struct proxied_ctr */
};

static void unshow(struct tcp_proxied *p, struct proxied_ctr *c)
{
	const char *labels[3] = { c->id, NULL, PROXY };

	for (const char *a = c->shown; a && *a; a += strlen(a) + 1) {
		labels[1] = a;
		metric_remove(p->listen_info, labels);
	}
	free(c->shown);
	c->shown = NULL;
	c->shown_len = 0;
}

static void ctr_free(struct tcp_proxied *p, struct proxied_ctr *c)
{
	unshow(p, c);
	free(c->ports);
	free(c);
}

/* Appends "ip:port\0" to *buf unless there. */
static void put(char **buf, size_t *len, size_t *cap, uint16_t family, const uint8_t *ip,
		uint16_t port)
{
	char a[TCP_ADDR_STRLEN];

	tcp_addr_format(family, ip, port, a, sizeof(a));
	for (const char *s = *buf; s && s < *buf + *len; s += strlen(s) + 1)
		if (!strcmp(s, a))
			return;
	size_t n = strlen(a) + 1;
	if (*len + n + 1 > *cap) {
		size_t c = (*cap ? *cap * 2 : 256) + n;
		char *b = realloc(*buf, c);
		if (!b)
			return;
		*buf = b;
		*cap = c;
	}
	memcpy(*buf + *len, a, n);
	*len += n;
	(*buf)[*len] = '\0';
}

/* The listen_addr values of c now: its bindings, wildcards expanded to the host's addresses. */
static char *addrs_of(const struct tcp_proxied *p, const struct proxied_ctr *c,
		      const struct tcp_ns_addrs *host, bool host_read, size_t *len)
{
	char *buf = NULL;
	size_t cap = 0;

	*len = 0;
	for (size_t i = 0; i < c->n_ports; i++) {
		const struct containers_port *b = &c->ports[i];
		if (tcp_port_ephemeral(b->port, p->ephemeral)) /* 50051 kept, as Coroot does */
			continue;
		if (!tcp_addr_unspecified(b->family, b->ip)) {
			put(&buf, len, &cap, b->family, b->ip, b->port);
			continue;
		}
		for (size_t j = 0; host_read && j < host->n_addrs; j++) {
			const struct tcp_ns_addr *a = &host->addrs[j];
			/* Coroot: an IPv4 wildcard takes the IPv4 addresses, an IPv6 one the IPv6 ones */
			if (a->family != b->family || tcp_ns_addrs_down(host, a->ifindex) ||
			    !node_net_ip_kept(a->family, a->ip))
				continue;
			put(&buf, len, &cap, a->family, a->ip, b->port);
		}
	}
	return buf;
}

/*
 * The host's addresses: PID 1's network namespace, else (not readable: a
 * sandbox's PID 1 is not the host's) the agent's own, where it runs with
 * the host's network as Coroot's agent does.
 */
static int host_addrs(struct tcp_ns_addrs *host)
{
	return tcp_ns_addrs_read(1, host) && tcp_ns_addrs_read((uint32_t)getpid(), host) ? -1 : 0;
}

/* Writes c's series as they are now, removing those of addresses gone. */
static void show(struct tcp_proxied *p, struct proxied_ctr *c, const struct tcp_ns_addrs *host,
		 bool host_read)
{
	size_t len;
	char *now = addrs_of(p, c, host, host_read, &len);
	const char *labels[3] = { c->id, NULL, PROXY };

	for (const char *a = c->shown; a && *a; a += strlen(a) + 1) {
		bool kept = false;
		for (const char *b = now; b && *b && !kept; b += strlen(b) + 1)
			kept = !strcmp(a, b);
		if (!kept) {
			labels[1] = a;
			metric_remove(p->listen_info, labels);
		}
	}
	for (const char *b = now; b && *b; b += strlen(b) + 1) {
		labels[1] = b;
		metric_set(p->listen_info, labels, 1);
	}
	free(c->shown);
	c->shown = now;
	c->shown_len = len;
}

static bool has_wildcard(const struct proxied_ctr *c)
{
	for (size_t i = 0; i < c->n_ports; i++)
		if (tcp_addr_unspecified(c->ports[i].family, c->ports[i].ip))
			return true;
	return false;
}

struct refresh {
	struct tcp_proxied *p;
	struct tcp_ns_addrs host;
	int host_state; /* 0: not read yet, 1: read, -1: unreadable */
	struct proxied_ctr *gone[64];
	size_t n_gone;
};

static void refresh_one(void *ctx, struct hmap_node *n)
{
	struct refresh *r = ctx;
	struct proxied_ctr *c = hmap_entry(n, struct proxied_ctr, node);

	if (!proc_table_has_container(r->p->procs, c->id)) {
		if (r->n_gone < sizeof(r->gone) / sizeof(r->gone[0]))
			r->gone[r->n_gone++] = c;
		return;
	}
	if (has_wildcard(c) && !r->host_state)
		r->host_state = host_addrs(&r->host) ? -1 : 1;
	show(r->p, c, &r->host, r->host_state == 1);
}

/* At each exposition: the host's addresses read again, containers without processes gone. */
static void proxied_collect(void *ctx)
{
	struct tcp_proxied *p = ctx;
	struct refresh r = { .p = p };

	if (!p->ctrs.count)
		return;
	hmap_foreach(&p->ctrs, refresh_one, &r);
	for (size_t i = 0; i < r.n_gone; i++) {
		hmap_unlink(&p->ctrs, &r.gone[i]->node);
		ctr_free(p, r.gone[i]);
	}
}

void tcp_proxied_set(void *ctx, const char *id, const struct containers_port *ports, size_t n)
{
	struct tcp_proxied *p = ctx;
	uint64_t h = hmap_hash_str(id);

	for (struct hmap_node *x = hmap_get(&p->ctrs, h); x; x = hmap_next_same(x)) {
		struct proxied_ctr *c = hmap_entry(x, struct proxied_ctr, node);
		if (!strcmp(c->id, id)) {
			hmap_unlink(&p->ctrs, &c->node);
			ctr_free(p, c);
			break;
		}
	}
	if (!n)
		return;
	size_t len = strlen(id);
	struct proxied_ctr *c = calloc(1, sizeof(*c) + len + 1);
	if (!c || !(c->ports = malloc(n * sizeof(*ports)))) {
		free(c);
		return;
	}
	memcpy(c->ports, ports, n * sizeof(*ports));
	c->n_ports = n;
	memcpy(c->id, id, len + 1);
	hmap_insert(&p->ctrs, &c->node, h);
	struct tcp_ns_addrs host;
	bool read = has_wildcard(c) && !host_addrs(&host);
	show(p, c, &host, read);
}

int tcp_proxied_new(struct metric_registry *r, struct proc_table *procs,
		    const struct ns_port_ranges *ephemeral, unsigned max_series,
		    struct tcp_proxied **out)
{
	static const char *const labels[] = { "container_id", "listen_addr", "proxy" };
	struct tcp_proxied *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	if (hmap_init(&p->ctrs, 64)) {
		free(p);
		return -ENOMEM;
	}
	p->procs = procs;
	p->ephemeral = ephemeral;
	/* the tcp tracker's family: the same name and labels give the same one */
	p->listen_info = metric_register(r, "container_net_tcp_listen_info",
					 "TCP addresses the container listens on.", METRIC_GAUGE,
					 max_series, 3, labels);
	if (!p->listen_info) {
		tcp_proxied_free(p);
		return -EINVAL;
	}
	metric_registry_add_collector(r, proxied_collect, p);
	*out = p;
	return 0;
}

void tcp_proxied_free(struct tcp_proxied *p)
{
	struct hmap_node *n;

	if (!p)
		return;
	while ((n = hmap_pop(&p->ctrs))) { /* the registry may be gone first: its series are left */
		struct proxied_ctr *c = hmap_entry(n, struct proxied_ctr, node);
		free(c->shown);
		free(c->ports);
		free(c);
	}
	hmap_destroy(&p->ctrs);
	free(p);
}
