#include "public_net.h"

#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "addr.h"

/* Kept destinations let in by their NAT target: a bound, and a verdict forgotten is re-made. */
#define LET_IN_MAX 65536

/* addr as the cidr compares it: IPv4-mapped IPv6 as IPv4. */
static uint16_t plain_family(uint16_t family, const uint8_t addr[16], const uint8_t **a)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	*a = addr;
	if (family == AF_INET6 && !memcmp(addr, mapped, sizeof(mapped))) {
		*a = addr + 12;
		return AF_INET;
	}
	return family;
}

static bool cidr_has(const struct ns_cidr *c, uint16_t family, const uint8_t *a)
{
	unsigned full = c->bits / 8, rest = c->bits % 8;

	if (c->family != family || memcmp(c->addr, a, full))
		return false;
	return !rest || !((c->addr[full] ^ a[full]) & (uint8_t)(0xff00u >> rest));
}

bool ns_cidrs_contain(const struct ns_cidrs *l, uint16_t family, const uint8_t addr[16])
{
	const uint8_t *a;
	uint16_t f = plain_family(family, addr, &a);

	for (unsigned i = 0; l && i < l->n; i++)
		if (cidr_has(&l->v[i], f, a))
			return true;
	return false;
}

void tcp_public_net_add_node(struct tcp_public_net *f, const struct ns_cidr *net)
{
	if (f->node.n < NS_CIDRS_MAX && !ns_cidrs_contain(&f->node, net->family, net->addr))
		f->node.v[f->node.n++] = *net;
}

void tcp_public_net_read_node(struct tcp_public_net *f)
{
	struct ifaddrs *all;

	if (getifaddrs(&all))
		return;
	for (struct ifaddrs *i = all; i; i = i->ifa_next) {
		struct ns_cidr c = { 0 };
		const uint8_t *mask;
		unsigned len;
		if (!i->ifa_addr || !i->ifa_netmask)
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			memcpy(c.addr, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
			mask = (const uint8_t *)&((struct sockaddr_in *)i->ifa_netmask)->sin_addr;
			len = 4;
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			memcpy(c.addr, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
			mask = (const uint8_t *)&((struct sockaddr_in6 *)i->ifa_netmask)->sin6_addr;
			len = 16;
		} else {
			continue;
		}
		c.family = i->ifa_addr->sa_family;
		if (!tcp_addr_external(c.family, c.addr) || tcp_addr_link_local(c.family, c.addr))
			continue;
		for (unsigned b = 0; b < len; b++) {
			c.bits += (uint8_t)__builtin_popcount(mask[b]);
			c.addr[b] &= mask[b];
		}
		tcp_public_net_add_node(f, &c);
	}
	freeifaddrs(all);
}

int tcp_public_net_init(struct tcp_public_net *f, const struct ns_cidrs *given)
{
	memset(f, 0, sizeof(*f));
	f->given = given;
	return strmap_init(&f->let_in, LET_IN_MAX) ? -ENOMEM : 0;
}

void tcp_public_net_destroy(struct tcp_public_net *f)
{
	strmap_destroy(&f->let_in);
}

/* Private, loopback, in a kept public network, or let in before. */
static bool allowed(struct tcp_public_net *f, uint16_t family, const uint8_t addr[16])
{
	char key[TCP_ADDR_STRLEN];

	if (!tcp_addr_external(family, addr) || ns_cidrs_contain(f->given, family, addr) ||
	    ns_cidrs_contain(&f->node, family, addr))
		return true;
	tcp_ip_format(family, addr, key, sizeof(key));
	return strmap_get(&f->let_in, key) != NULL;
}

bool tcp_public_net_skip(struct tcp_public_net *f, uint16_t family, const uint8_t dst[16],
			 uint16_t actual_family, const uint8_t actual[16])
{
	char key[TCP_ADDR_STRLEN];

	if (tcp_addr_link_local(family, dst))
		return true;
	if (allowed(f, family, dst))
		return false;
	if (!allowed(f, actual_family, actual))
		return true;
	/* As Coroot: a destination NAT sends somewhere kept is kept from then on. */
	tcp_ip_format(family, dst, key, sizeof(key));
	int64_t *v = strmap_upsert(&f->let_in, key);
	if (!v) { /* full: start again, the verdicts are re-made */
		strmap_destroy(&f->let_in);
		strmap_init(&f->let_in, LET_IN_MAX);
		v = strmap_upsert(&f->let_in, key);
	}
	if (v)
		*v = 1;
	return false;
}
