/*
 * The taskstats reply parsers (src/resources/taskstats.c) on replies built
 * here as the kernel lays them out (nlmsghdr, genlmsghdr, a nested
 * TASKSTATS_TYPE_AGGR_TGID with the tgid and struct taskstats), on errors
 * and on truncations; and one real request to this kernel for this process.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <string.h>
#include <unistd.h>

#include "resources/taskstats.h"

#define FAMILY 27

static size_t put_attr(uint8_t *p, uint16_t type, const void *data, size_t len)
{
	struct nlattr a = { .nla_len = NLA_HDRLEN + len, .nla_type = type };
	memcpy(p, &a, sizeof(a));
	memcpy(p + NLA_HDRLEN, data, len);
	return NLA_ALIGN(a.nla_len);
}

/* A reply for tgid with the given delays; stats_len: how much of struct taskstats to send. */
static size_t make_reply(uint8_t *buf, uint32_t tgid, uint64_t cpu, uint64_t blkio,
			 size_t stats_len)
{
	uint8_t inner[1024];
	struct taskstats ts = { .version = TASKSTATS_VERSION, .cpu_delay_total = cpu,
				.blkio_delay_total = blkio };
	size_t n = put_attr(inner, TASKSTATS_TYPE_TGID, &tgid, sizeof(tgid));
	n += put_attr(inner + n, TASKSTATS_TYPE_STATS, &ts, stats_len);

	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = (struct genlmsghdr *)(buf + NLMSG_HDRLEN);
	memset(buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	g->cmd = TASKSTATS_CMD_NEW;
	size_t off = NLMSG_HDRLEN + GENL_HDRLEN;
	off += put_attr(buf + off, TASKSTATS_TYPE_AGGR_TGID, inner, n);
	h->nlmsg_len = off;
	h->nlmsg_type = FAMILY;
	return off;
}

static void test_reply(void **state)
{
	uint8_t buf[2048];
	struct taskstats_delays d;
	size_t len = make_reply(buf, 4242, 123456789, 987654321, sizeof(struct taskstats));

	assert_int_equal(taskstats_parse_reply(buf, len, FAMILY, &d), 0);
	assert_int_equal(d.tgid, 4242);
	assert_int_equal(d.cpu_delay_ns, 123456789);
	assert_int_equal(d.blkio_delay_ns, 987654321);

	/* An older kernel's shorter struct, as long as the v1 fields are in it. */
	size_t v1 = offsetof(struct taskstats, blkio_delay_total) + 8;
	len = make_reply(buf, 1, 5, 6, v1);
	assert_int_equal(taskstats_parse_reply(buf, len, FAMILY, &d), 0);
	assert_int_equal(d.blkio_delay_ns, 6);
	len = make_reply(buf, 1, 5, 6, v1 - 1);
	assert_int_equal(taskstats_parse_reply(buf, len, FAMILY, &d), -EINVAL);

	/* Another family, truncated messages, a bad attribute length. */
	len = make_reply(buf, 1, 5, 6, sizeof(struct taskstats));
	assert_int_equal(taskstats_parse_reply(buf, len, FAMILY + 1, &d), -EINVAL);
	for (size_t cut = 0; cut < len; cut += 7)
		assert_int_equal(taskstats_parse_reply(buf, cut, FAMILY, &d), -EINVAL);
	struct nlattr *outer = (struct nlattr *)(buf + NLMSG_HDRLEN + GENL_HDRLEN);
	outer->nla_len = 2;
	assert_int_equal(taskstats_parse_reply(buf, len, FAMILY, &d), -EINVAL);
	outer->nla_len = 0xffff;
	assert_int_equal(taskstats_parse_reply(buf, len, FAMILY, &d), -EINVAL);
}

static void test_error_and_family(void **state)
{
	uint8_t buf[256] = { 0 };
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct nlmsgerr *e = NLMSG_DATA(h);
	struct taskstats_delays d;
	uint16_t fam;

	h->nlmsg_type = NLMSG_ERROR;
	h->nlmsg_len = NLMSG_LENGTH(sizeof(*e));
	e->error = -ESRCH;
	assert_int_equal(taskstats_parse_reply(buf, h->nlmsg_len, FAMILY, &d), -ESRCH);
	assert_int_equal(taskstats_parse_family(buf, h->nlmsg_len, &fam), -ESRCH);
	e->error = 0; /* an ack carries no stats */
	assert_int_equal(taskstats_parse_reply(buf, h->nlmsg_len, FAMILY, &d), -EINVAL);
	h->nlmsg_len = NLMSG_HDRLEN + 2; /* too short for its error */
	assert_int_equal(taskstats_parse_reply(buf, h->nlmsg_len, FAMILY, &d), -EINVAL);

	memset(buf, 0, sizeof(buf));
	h->nlmsg_type = GENL_ID_CTRL;
	size_t off = NLMSG_HDRLEN + GENL_HDRLEN;
	off += put_attr(buf + off, CTRL_ATTR_FAMILY_NAME, "TASKSTATS", 10);
	uint16_t id = 23;
	off += put_attr(buf + off, CTRL_ATTR_FAMILY_ID, &id, 2);
	h->nlmsg_len = off;
	assert_int_equal(taskstats_parse_family(buf, off, &fam), 0);
	assert_int_equal(fam, 23);
	h->nlmsg_type = FAMILY;
	assert_int_equal(taskstats_parse_family(buf, off, &fam), -EINVAL);
}

static void test_this_kernel(void **state)
{
	struct taskstats_client *c;
	struct taskstats_delays d;
	int err = taskstats_open(&c);

	if (err == -EPERM || err == -EACCES || err == -EPROTONOSUPPORT)
		skip();
	assert_int_equal(err, 0);
	err = taskstats_get(c, getpid(), &d);
	if (err == -EPERM || err == -EACCES) { /* TASKSTATS_CMD_GET needs CAP_NET_ADMIN */
		taskstats_close(c);
		skip();
	}
	assert_int_equal(err, 0);
	assert_int_equal(d.tgid, getpid());
	/* No such process. */
	assert_int_equal(taskstats_get(c, 0x3fffffff, &d), -ESRCH);
	taskstats_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reply),
		cmocka_unit_test(test_error_and_family),
		cmocka_unit_test(test_this_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
