#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>

#include "tcp/conntrack.h"

static struct tcp_tuple tuple4(void)
{
	struct tcp_tuple t = { .family = AF_INET, .sport = 40000, .dport = 80 };
	inet_pton(AF_INET, "10.0.0.1", t.saddr);
	inet_pton(AF_INET, "10.96.0.10", t.daddr);
	return t;
}

/* A reply as the kernel would send it: the GET's tuple under CTA_TUPLE_REPLY. */
static int fake_reply(const struct tcp_tuple *reply_dir, char *buf, size_t len)
{
	int n = conntrack_build_get(reply_dir, 7, buf, len);
	if (n < 0)
		return n;
	struct nlattr *a = (struct nlattr *)(buf + NLMSG_ALIGN(sizeof(struct nlmsghdr)) +
					     NLMSG_ALIGN(sizeof(struct nfgenmsg)));
	a->nla_type = CTA_TUPLE_REPLY | NLA_F_NESTED;
	((struct nlmsghdr *)buf)->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW;
	return n;
}

static void test_build_get(void **state)
{
	struct tcp_tuple t = tuple4();
	char buf[256];
	int n = conntrack_build_get(&t, 3, buf, sizeof(buf));
	assert_true(n > 0);
	const struct nlmsghdr *nh = (const void *)buf;
	assert_int_equal(nh->nlmsg_len, n);
	assert_int_equal(nh->nlmsg_type, (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET);
	assert_int_equal(nh->nlmsg_seq, 3);
	assert_int_equal(conntrack_build_get(&t, 3, buf, 20), -ENOSPC);
	assert_int_equal(conntrack_build_get(&t, 3, buf, 40), -ENOSPC);
}

static void test_parse_reply_v4_and_v6(void **state)
{
	/* Reply direction of a DNATed connection: from the backend 10.1.2.3:8080. */
	struct tcp_tuple r = { .family = AF_INET, .sport = 8080, .dport = 40000 };
	inet_pton(AF_INET, "10.1.2.3", r.saddr);
	inet_pton(AF_INET, "10.0.0.1", r.daddr);
	char buf[256];
	uint16_t family, port;
	uint8_t addr[16];
	int n = fake_reply(&r, buf, sizeof(buf));
	assert_int_equal(conntrack_parse_reply(buf, n, &family, addr, &port), 0);
	assert_int_equal(family, AF_INET);
	assert_int_equal(port, 8080);
	assert_memory_equal(addr, r.saddr, 4);

	struct tcp_tuple r6 = { .family = AF_INET6, .sport = 443, .dport = 50000 };
	inet_pton(AF_INET6, "fd00::5", r6.saddr);
	inet_pton(AF_INET6, "fd00::1", r6.daddr);
	n = fake_reply(&r6, buf, sizeof(buf));
	assert_int_equal(conntrack_parse_reply(buf, n, &family, addr, &port), 0);
	assert_int_equal(family, AF_INET6);
	assert_int_equal(port, 443);
	assert_memory_equal(addr, r6.saddr, 16);
}

static void test_parse_errors(void **state)
{
	char buf[256];
	uint16_t family, port;
	uint8_t addr[16];
	struct tcp_tuple t = tuple4();

	/* "not tracked" from the kernel */
	struct {
		struct nlmsghdr nh;
		struct nlmsgerr err;
	} e = { .nh = { .nlmsg_len = sizeof(e), .nlmsg_type = NLMSG_ERROR }, .err = { .error = -ENOENT } };
	assert_int_equal(conntrack_parse_reply(&e, sizeof(e), &family, addr, &port), -ENOENT);
	/* a GET echoed back has no reply tuple */
	int n = conntrack_build_get(&t, 1, buf, sizeof(buf));
	assert_int_equal(conntrack_parse_reply(buf, n, &family, addr, &port), -EINVAL);
	/* every truncation is refused, none crashes */
	struct tcp_tuple r = tuple4();
	n = fake_reply(&r, buf, sizeof(buf));
	for (int cut = 0; cut < n; cut++) {
		char copy[256];
		memcpy(copy, buf, cut);
		if (cut >= (int)sizeof(struct nlmsghdr))
			((struct nlmsghdr *)copy)->nlmsg_len = cut;
		assert_int_not_equal(conntrack_parse_reply(copy, cut, &family, addr, &port), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_get),
		cmocka_unit_test(test_parse_reply_v4_and_v6),
		cmocka_unit_test(test_parse_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
