#include "resources/taskstats.h"

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "util/netlink.h"
#include "util/netns.h"

/* The one genetlink message of an answer (the walk is util/netlink.c's). */
struct genl_answer {
	uint16_t type;
	const uint8_t *payload; /* after the generic header */
	size_t len;
	int n;
};

static int answer_msg(void *ctx, uint16_t type, const void *data, size_t len)
{
	struct genl_answer *a = ctx;
	if (a->n++ || type != a->type || len < GENL_HDRLEN)
		return -EINVAL;
	a->payload = (const uint8_t *)data + GENL_HDRLEN;
	a->len = len - GENL_HDRLEN;
	return 0;
}

/* 0 with a's payload set, the kernel's -errno (an NLMSG_ERROR), or -EINVAL. */
static int genl_answer(const void *buf, size_t len, struct genl_answer *a)
{
	int rc = netlink_walk(buf, len, answer_msg, a);
	if (rc < 0)
		return rc;
	return a->n == 1 && rc == 0 ? 0 : -EINVAL;
}

/* Walks the attributes in [p, p+len): calls fn for each well-formed one; false on garbage. */
static bool attrs_walk(const uint8_t *p, size_t len,
		       bool (*fn)(void *ctx, uint16_t type, const uint8_t *data, size_t dlen),
		       void *ctx)
{
	while (len >= NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			return false;
		if (!fn(ctx, a->nla_type & NLA_TYPE_MASK, p + NLA_HDRLEN, a->nla_len - NLA_HDRLEN))
			return false;
		size_t step = NLA_ALIGN(a->nla_len);
		if (step >= len)
			return true;
		p += step;
		len -= step;
	}
	return true;
}

struct stats_ctx {
	struct taskstats_delays *out;
	bool have_stats;
};

static bool stats_attr(void *ctx, uint16_t type, const uint8_t *data, size_t len)
{
	struct stats_ctx *s = ctx;
	switch (type) {
	case TASKSTATS_TYPE_PID:
	case TASKSTATS_TYPE_TGID:
		if (len < 4)
			return false;
		memcpy(&s->out->tgid, data, 4);
		return true;
	case TASKSTATS_TYPE_STATS: {
		/* Older kernels send a shorter struct, newer a longer one: the fields read are v1's. */
		struct taskstats ts = { 0 };
		if (len < offsetof(struct taskstats, blkio_delay_total) + sizeof(ts.blkio_delay_total))
			return false;
		memcpy(&ts, data, len < sizeof(ts) ? len : sizeof(ts));
		s->out->cpu_delay_ns = ts.cpu_delay_total;
		s->out->blkio_delay_ns = ts.blkio_delay_total;
		s->have_stats = true;
		return true;
	}
	default:
		return true;
	}
}

static bool aggr_attr(void *ctx, uint16_t type, const uint8_t *data, size_t len)
{
	if (type != TASKSTATS_TYPE_AGGR_TGID && type != TASKSTATS_TYPE_AGGR_PID)
		return true;
	return attrs_walk(data, len, stats_attr, ctx);
}

int taskstats_parse_reply(const void *buf, size_t len, uint16_t family,
			  struct taskstats_delays *out)
{
	struct genl_answer a = { .type = family };
	int rc = genl_answer(buf, len, &a);

	if (rc)
		return rc;
	struct stats_ctx s = { out, false };
	memset(out, 0, sizeof(*out));
	if (!attrs_walk(a.payload, a.len, aggr_attr, &s) || !s.have_stats)
		return -EINVAL;
	return 0;
}

static bool family_attr(void *ctx, uint16_t type, const uint8_t *data, size_t len)
{
	if (type == CTRL_ATTR_FAMILY_ID) {
		if (len < 2)
			return false;
		memcpy(ctx, data, 2);
	}
	return true;
}

int taskstats_parse_family(const void *buf, size_t len, uint16_t *family)
{
	struct genl_answer a = { .type = GENL_ID_CTRL };
	int rc = genl_answer(buf, len, &a);

	if (rc)
		return rc;
	*family = 0;
	if (!attrs_walk(a.payload, a.len, family_attr, family) || !*family)
		return -EINVAL;
	return 0;
}

struct taskstats_client {
	int fd;
	uint16_t family;
	uint32_t seq;
	uint8_t buf[8192];
};

/* Sends one genetlink request with one attribute; 0 or -errno. */
static int send_request(struct taskstats_client *c, uint16_t type, uint8_t cmd, uint8_t version,
			uint16_t attr, const void *val, size_t vlen)
{
	struct {
		struct nlmsghdr h;
		struct genlmsghdr g;
		uint8_t attrs[64];
	} req = { 0 };
	struct nlattr *a = (struct nlattr *)req.attrs;

	if (NLA_HDRLEN + vlen > sizeof(req.attrs))
		return -EINVAL;
	a->nla_type = attr;
	a->nla_len = NLA_HDRLEN + vlen;
	memcpy(req.attrs + NLA_HDRLEN, val, vlen);
	req.h.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN + NLA_ALIGN(a->nla_len));
	req.h.nlmsg_type = type;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.h.nlmsg_seq = ++c->seq;
	req.g.cmd = cmd;
	req.g.version = version;
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	if (sendto(c->fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	return 0;
}

/* Receives the answer to the last request (older answers, if any, skipped). */
static ssize_t recv_reply(struct taskstats_client *c)
{
	for (;;) {
		ssize_t n = recv(c->fd, c->buf, sizeof(c->buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		const struct nlmsghdr *h = (const struct nlmsghdr *)c->buf;
		if ((size_t)n >= sizeof(*h) && h->nlmsg_seq != c->seq)
			continue; /* a late answer to a request that timed out */
		return n;
	}
}

static int genl_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	return fd < 0 ? -errno : fd;
}

int taskstats_open(struct taskstats_client **out)
{
	struct taskstats_client *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	/* Older kernels (5.10 among them) have the family in the initial network namespace only. */
	c->fd = netns_host_socket(genl_open, "taskstats is asked in");
	if (c->fd < 0) {
		int err = c->fd;
		free(c);
		return err;
	}
	/* The kernel answers at once; the timeout only guards against a reply that never comes. */
	struct timeval tv = { .tv_sec = 1 };
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	static const char name[] = TASKSTATS_GENL_NAME;
	int err = send_request(c, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, CTRL_ATTR_FAMILY_NAME, name,
			       sizeof(name));
	ssize_t n = err ? err : recv_reply(c);
	if (n < 0 || (err = taskstats_parse_family(c->buf, n, &c->family))) {
		taskstats_close(c);
		return n < 0 ? (int)n : err;
	}
	*out = c;
	return 0;
}

void taskstats_close(struct taskstats_client *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c);
}

int taskstats_get(struct taskstats_client *c, uint32_t tgid, struct taskstats_delays *out)
{
	int err = send_request(c, c->family, TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION,
			       TASKSTATS_CMD_ATTR_TGID, &tgid, sizeof(tgid));
	if (err)
		return err;
	ssize_t n = recv_reply(c);
	if (n < 0)
		return (int)n;
	return taskstats_parse_reply(c->buf, n, c->family, out);
}
