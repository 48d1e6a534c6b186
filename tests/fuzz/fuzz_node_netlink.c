/*
 * libFuzzer target for src/node/netlink.c: rtnetlink dump answers (links
 * and addresses) as the kernel would send them, or anything else. Besides
 * "no crash, no read past the datagram" it checks what the collector relies
 * on: a link's name is a C string that fits IFNAMSIZ and is not empty, an
 * address is IPv4 or IPv6, and the parse of a datagram gives the same
 * answer and the same calls twice (no hidden state). The input is copied
 * into an aligned buffer of its exact size, as recv() would fill one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "node/netlink.h"

#include "fuzz_check.h"

struct seen {
	unsigned links, addrs;
	uint64_t sum; /* of everything reported, to compare two runs */
};

static void on_link(void *ctx, const struct node_link *l)
{
	struct seen *s = ctx;
	size_t n = strnlen(l->name, sizeof(l->name));
	CHECK(n > 0 && n < sizeof(l->name));
	s->links++;
	s->sum += (uint64_t)l->index + l->up + l->rx_bytes + l->tx_bytes + l->rx_packets +
		  l->tx_packets + n;
}

static void on_addr(void *ctx, const struct node_addr *a)
{
	struct seen *s = ctx;
	CHECK(a->family == AF_INET || a->family == AF_INET6);
	s->addrs++;
	for (int i = 0; i < 16; i++)
		s->sum += a->ip[i] * (uint64_t)(i + 1);
	s->sum += (uint64_t)a->index;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	void *buf = malloc(size ? size : 1); /* malloc aligns to 16: as a recv buffer */
	struct seen a = { 0 }, b = { 0 };

	CHECK(buf);
	memcpy(buf, data, size);
	int ra = node_netlink_parse(buf, size, on_link, on_addr, &a);
	int rb = node_netlink_parse(buf, size, on_link, on_addr, &b);
	CHECK(ra >= -4095 && ra <= 1);
	CHECK(ra == rb && a.links == b.links && a.addrs == b.addrs && a.sum == b.sum);
	/* Without callbacks nothing is reported and the answer is the same. */
	CHECK(node_netlink_parse(buf, size, NULL, NULL, NULL) == ra || ra < 0);
	free(buf);
	return 0;
}
