#include "netlink.h"

#include <errno.h>
#include <linux/netlink.h>
#include <sys/socket.h>

int netlink_walk(const void *buf, size_t len, netlink_msg_fn fn, void *ctx)
{
	size_t off = 0;

	while (off + sizeof(struct nlmsghdr) <= len) {
		const struct nlmsghdr *h = (const void *)((const char *)buf + off);
		if (h->nlmsg_len < sizeof(*h) || off + h->nlmsg_len > len)
			return -EINVAL;
		const void *data = (const char *)h + NLMSG_HDRLEN;
		size_t dlen = h->nlmsg_len > NLMSG_HDRLEN ? h->nlmsg_len - NLMSG_HDRLEN : 0;
		if (h->nlmsg_type == NLMSG_DONE)
			return 1;
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = data;
			if (dlen < sizeof(*e))
				return -EINVAL;
			/* An errno, or no answer the caller could name. */
			return e->error < 0 && e->error >= -4095 ? e->error : -EINVAL;
		}
		int rc = fn(ctx, h->nlmsg_type, data, dlen);
		if (rc)
			return rc < 0 ? rc : -EINVAL;
		off += NLMSG_ALIGN(h->nlmsg_len);
	}
	return off == len || len - off < sizeof(struct nlmsghdr) ? 0 : -EINVAL;
}

/*
 * After a bad datagram, what is left of the dump must not be read as the
 * next dump's answer. The kernel queues a dump's next datagram while the
 * previous one is received, so reading without waiting until nothing is
 * queued ends it.
 */
static void drain(int fd, char *buf, size_t size)
{
	for (;;) {
		ssize_t n = recv(fd, buf, size, MSG_DONTWAIT | MSG_TRUNC);
		if (n <= 0 && !(n < 0 && errno == EINTR))
			return;
	}
}

int netlink_dump(int fd, void *req, size_t req_len, netlink_msg_fn fn, void *ctx)
{
	static uint32_t seq;
	/* The kernel fills dump datagrams up to 32 KiB: one never needs more. */
	char buf[32768] __attribute__((aligned(8)));
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	if (req_len < sizeof(struct nlmsghdr))
		return -EINVAL;
	((struct nlmsghdr *)req)->nlmsg_seq = ++seq;
	if (sendto(fd, req, req_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	for (;;) {
		ssize_t got = recv(fd, buf, sizeof(buf), MSG_TRUNC);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int err = -errno;
			drain(fd, buf, sizeof(buf));
			return err;
		}
		if ((size_t)got > sizeof(buf)) {
			drain(fd, buf, sizeof(buf));
			return -EINVAL; /* cut short: the rest of the datagram is lost */
		}
		int rc = netlink_walk(buf, (size_t)got, fn, ctx);
		if (rc > 0)
			return 0;
		if (rc < 0) {
			drain(fd, buf, sizeof(buf));
			return rc;
		}
	}
}
