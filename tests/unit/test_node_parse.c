/*
 * The node parsers (src/node/): /proc/stat, /proc/uptime, /proc/meminfo,
 * /proc/diskstats and rtnetlink dumps, on files captured from the build
 * machine (tests/unit/data/node/, see capture.sh there) and on hand-made
 * edge cases; Coroot's device and interface filters; node_cloud_info's
 * labels from DMI and the flags.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "data_file.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node/cloud.h"
#include "node/diskstats.h"
#include "node/meminfo.h"
#include "node/net.h"
#include "node/netlink.h"
#include "node/stat.h"

#define DATA "tests/unit/data/node/"


/* ---- /proc/stat ---- */

static void test_stat_captured(void **state)
{
	char *text = test_file_read(DATA "stat", NULL);
	struct node_cpu cpu;

	assert_int_equal(node_stat_parse(text, &cpu), 0);
	/* "cpu  2125129 301086 239835 1444460 21113 0 11095 13650 0 0" */
	const uint64_t want[NODE_CPU_MODES] = { 2125129, 301086, 239835, 1444460,
						21113,	 0,	 11095,	 13650 };
	for (int m = 0; m < NODE_CPU_MODES; m++)
		assert_int_equal(cpu.ticks[m], want[m]);
	assert_int_equal(cpu.logical_cores, 2);
	assert_string_equal(node_cpu_mode_names[NODE_CPU_STEAL], "steal");
	free(text);
}

static void test_stat_edges(void **state)
{
	struct node_cpu cpu;

	/* The largest 64-bit count is a count; one more is not. */
	assert_int_equal(node_stat_parse("cpu 18446744073709551615 1 2 3 4 5 6 7\n"
					 "cpu0 1 2 3 4 5 6 7 8\ncpu1 1\ncpu12 0\n",
					 &cpu),
			 0);
	assert_true(cpu.ticks[NODE_CPU_USER] == UINT64_MAX);
	assert_int_equal(cpu.ticks[NODE_CPU_STEAL], 7);
	assert_int_equal(cpu.logical_cores, 3);
	assert_int_equal(node_stat_parse("cpu 18446744073709551616 1 2 3 4 5 6 7\n", &cpu),
			 -ERANGE);
	/* Truncated line, letters, signs, no line at all. */
	assert_int_equal(node_stat_parse("cpu 1 2 3 4 5\ncpu0 1 2 3 4 5\n", &cpu), -EINVAL);
	assert_int_equal(node_stat_parse("cpu 1 2 3 4 5 6 7", &cpu), -EINVAL);
	assert_int_equal(node_stat_parse("cpu 1 2 3 x 5 6 7 8\n", &cpu), -EINVAL);
	assert_int_equal(node_stat_parse("cpu 1 2 3 4x 5 6 7 8\n", &cpu), -EINVAL);
	assert_int_equal(node_stat_parse("cpu 1 2 3 -4 5 6 7 8\n", &cpu), -EINVAL);
	assert_int_equal(node_stat_parse("cpu0 1 2 3 4 5 6 7 8\nintr 5\n", &cpu), -EINVAL);
	assert_int_equal(node_stat_parse("", &cpu), -EINVAL);
	/* Exactly eight numbers, the last line without a newline: fine. */
	assert_int_equal(node_stat_parse("cpu 1 2 3 4 5 6 7 8", &cpu), 0);
	assert_int_equal(cpu.logical_cores, 0);
}

/* ---- /proc/uptime ---- */

static void test_uptime(void **state)
{
	char *text = test_file_read(DATA "uptime", NULL);
	double up;

	assert_int_equal(node_uptime_parse(text, &up), 0);
	assert_true(up == 20833.82);
	free(text);
	assert_int_equal(node_uptime_parse("5.00 9.50", &up), 0);
	assert_true(up == 5.0);
	assert_int_equal(node_uptime_parse("", &up), -EINVAL);
	assert_int_equal(node_uptime_parse("12.5\n", &up), -EINVAL);
	assert_int_equal(node_uptime_parse("12.5 1 2\n", &up), -EINVAL);
	assert_int_equal(node_uptime_parse("abc 1\n", &up), -EINVAL);
	assert_int_equal(node_uptime_parse("-3 1\n", &up), -EINVAL);
	assert_int_equal(node_uptime_parse("nan 1\n", &up), -EINVAL);
	assert_int_equal(node_uptime_parse("1e999 1\n", &up), -EINVAL);
}

/* ---- /proc/meminfo ---- */

static void test_meminfo_captured(void **state)
{
	char *text = test_file_read(DATA "meminfo", NULL);
	struct node_mem mem;

	assert_int_equal(node_meminfo_parse(text, &mem), 0);
	assert_int_equal(mem.have, 0xf);
	/* kB is 1024 bytes (Coroot multiplies by 1000). */
	assert_int_equal(mem.bytes[NODE_MEM_TOTAL], 24683664ull * 1024);
	assert_int_equal(mem.bytes[NODE_MEM_FREE], 21193224ull * 1024);
	assert_int_equal(mem.bytes[NODE_MEM_AVAILABLE], 23334840ull * 1024);
	/* Cached, not SwapCached (0 on the next line). */
	assert_int_equal(mem.bytes[NODE_MEM_CACHED], 2161072ull * 1024);
	free(text);
}

static void test_meminfo_edges(void **state)
{
	struct node_mem mem;

	/* An old kernel: no MemAvailable, which is left out, not 0. */
	assert_int_equal(node_meminfo_parse("MemTotal: 100 kB\nMemFree: 50 kB\nCached: 7 kB\n",
					    &mem),
			 0);
	assert_int_equal(mem.have, (1u << NODE_MEM_TOTAL) | (1u << NODE_MEM_FREE) |
					   (1u << NODE_MEM_CACHED));
	assert_int_equal(mem.bytes[NODE_MEM_TOTAL], 102400);
	/* No unit: bytes. The last line without a newline. */
	assert_int_equal(node_meminfo_parse("HugePages_Total: 3\nMemTotal: 4096", &mem), 0);
	assert_int_equal(mem.bytes[NODE_MEM_TOTAL], 4096);
	/* Past 64 bits as bytes, or as a number. */
	assert_int_equal(node_meminfo_parse("MemTotal: 18014398509481984 kB\n", &mem), -ERANGE);
	assert_int_equal(node_meminfo_parse("MemTotal: 18014398509481983 kB\n", &mem), 0);
	assert_int_equal(mem.bytes[NODE_MEM_TOTAL], 18014398509481983ull * 1024);
	assert_int_equal(node_meminfo_parse("MemTotal: 99999999999999999999 kB\n", &mem), -ERANGE);
	/* Truncated, garbage, an unknown unit, no MemTotal. */
	assert_int_equal(node_meminfo_parse("MemTotal:\n", &mem), -EINVAL);
	assert_int_equal(node_meminfo_parse("MemTotal: 12 kB\nMemFree: x kB\n", &mem), -EINVAL);
	assert_int_equal(node_meminfo_parse("MemTotal: 12 MB\n", &mem), -EINVAL);
	assert_int_equal(node_meminfo_parse("MemFree: 12 kB\n", &mem), -EINVAL);
	assert_int_equal(node_meminfo_parse("", &mem), -EINVAL);
	/* Lines it does not want may say anything. */
	assert_int_equal(node_meminfo_parse("Foo: bar\nMemTotal: 1 kB\n\n\nX", &mem), 0);
}

/* ---- /proc/diskstats ---- */

struct disks {
	int n;
	struct node_disk d[32];
};

static void on_disk(void *ctx, const struct node_disk *d)
{
	struct disks *s = ctx;
	if (s->n < 32)
		s->d[s->n++] = *d;
}

static void test_diskstats_captured(void **state)
{
	char *text = test_file_read(DATA "diskstats", NULL);
	struct disks s = { 0 };

	assert_int_equal(node_diskstats_parse(text, on_disk, &s), 0);
	assert_int_equal(s.n, 10); /* loop0..7, vda, zram0 */
	int kept = 0;
	for (int i = 0; i < s.n; i++) {
		if (!node_disk_kept(s.d[i].name))
			continue;
		kept++;
		/* "254 0 vda 1615930 76317 52395866 6031228 395898 373492 112777160 1178554 0 436452 ..." */
		assert_string_equal(s.d[i].name, "vda");
		assert_int_equal(s.d[i].reads, 1615930);
		assert_int_equal(s.d[i].read_sectors, 52395866);
		assert_int_equal(s.d[i].read_ms, 6031228);
		assert_int_equal(s.d[i].writes, 395898);
		assert_int_equal(s.d[i].written_sectors, 112777160);
		assert_int_equal(s.d[i].write_ms, 1178554);
		assert_int_equal(s.d[i].io_ms, 436452);
	}
	assert_int_equal(kept, 1);
	free(text);
}

static void test_diskstats_edges(void **state)
{
	struct disks s = { 0 };

	/* A 2.6-era line with exactly 11 fields, a blank line, a huge value. */
	assert_int_equal(node_diskstats_parse("   8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n\n"
					      " 8 16 sdb 18446744073709551615 0 0 0 0 0 0 0 0 0 0\n",
					      on_disk, &s),
			 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.d[0].reads, 1);
	assert_int_equal(s.d[0].read_sectors, 3);
	assert_int_equal(s.d[0].io_ms, 10);
	assert_true(s.d[1].reads == UINT64_MAX);

	/* Each malformed line is skipped and counted; the good ones still come. */
	s.n = 0;
	assert_int_equal(node_diskstats_parse("8 0 sda 1 2 3 4 5 6 7 8 9 10\n"   /* 10 fields */
					      "8 0 sda 1 2 3 4 5 6 7 8 9 x 11\n" /* letters */
					      "8 0\n"				  /* no name */
					      "8 0 sda 18446744073709551616 0 0 0 0 0 0 0 0 0 0\n"
					      "8 0 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
					      " 1 2 3 4 5 6 7 8 9 10 11\n"
					      "x 0 sda 1 2 3 4 5 6 7 8 9 10 11\n"
					      "259 0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11", /* no newline */
					      on_disk, &s),
			 6);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.d[0].name, "nvme0n1");
	assert_int_equal(node_diskstats_parse("", on_disk, &s), 0);
}

static void test_disk_filter(void **state)
{
	const char *kept[] = { "vda", "sda", "sdz", "hdc", "xvdb", "nvme0n1", "nvme12n3", "dm-0",
			       "dm-12", "md127", "mmcblk0", "rbd3" };
	const char *left[] = { "vda1", "sdaa", "sda1", "nvme0n1p1", "nvme0", "dm-", "md",
			       "mmcblk0p1", "mmcblk0boot0", "loop0", "zram0", "sr0", "ram0",
			       "xvda2", "", "dm-0x", "Sda" };

	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (!node_disk_kept(kept[i]))
			fail_msg("%s left out", kept[i]);
	for (size_t i = 0; i < sizeof(left) / sizeof(left[0]); i++)
		if (node_disk_kept(left[i]))
			fail_msg("%s kept", left[i]);
}

/* ---- interfaces ---- */

static void test_net_name_filter(void **state)
{
	const char *kept[] = { "eth0",	    "ETH0",  "eth0.100", "enp0s3", "enp2s0f1", "enp1p2s0",
			       "ens5",	    "eno1",  "em1",	 "bond0",  "p1p1",     "enx001122aabbcc",
			       "br0",	    "vmbr0", "eth57x" };
	const char *left[] = { "lo",	"docker0", "veth1a2b", "cni-podman0", "br-0f1e", "wlan0",
			       "ifb0", "eth",	  "enp",      "virbr0",	      "tun0",	 "" };

	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (!node_net_name_kept(kept[i]))
			fail_msg("%s left out", kept[i]);
	for (size_t i = 0; i < sizeof(left) / sizeof(left[0]); i++)
		if (node_net_name_kept(left[i]))
			fail_msg("%s kept", left[i]);
}

static int ip_kept(const char *text)
{
	uint8_t ip[16];
	int family = strchr(text, ':') ? AF_INET6 : AF_INET;

	assert_int_equal(inet_pton(family, text, ip), 1);
	return node_net_ip_kept(family, ip);
}

static void test_net_ip_filter(void **state)
{
	assert_true(ip_kept("10.0.0.1"));
	assert_true(ip_kept("192.0.2.2"));
	assert_true(ip_kept("127.0.0.1"));
	assert_true(ip_kept("169.253.255.255"));
	assert_false(ip_kept("169.254.1.1"));
	assert_false(ip_kept("224.0.0.1"));
	assert_false(ip_kept("239.255.255.250"));
	assert_true(ip_kept("240.0.0.1"));
	assert_true(ip_kept("fd00::2"));
	assert_true(ip_kept("fec0::1"));
	assert_true(ip_kept("2001:db8::1"));
	assert_false(ip_kept("fe80::1"));
	assert_false(ip_kept("febf::1"));
	assert_false(ip_kept("ff02::1"));
	assert_false(node_net_ip_kept(AF_UNIX, (const uint8_t *)"\0\0\0\0"));
}

/* ---- rtnetlink ---- */

struct net_seen {
	int n_links, n_addrs;
	struct node_link links[16];
	struct node_addr addrs[32];
};

static void on_link(void *ctx, const struct node_link *l)
{
	struct net_seen *s = ctx;
	if (s->n_links < 16)
		s->links[s->n_links++] = *l;
}

static void on_addr(void *ctx, const struct node_addr *a)
{
	struct net_seen *s = ctx;
	if (s->n_addrs < 32)
		s->addrs[s->n_addrs++] = *a;
}

static const char *addr_text(const struct node_addr *a)
{
	static char buf[64];
	return inet_ntop(a->family, a->ip, buf, sizeof(buf));
}

static void test_netlink_captured(void **state)
{
	size_t len;
	char *links = test_file_read(DATA "links.nl", &len);
	struct net_seen s = { 0 };

	/* The captured datagrams one after the other end with NLMSG_DONE. */
	assert_int_equal(node_netlink_parse(links, len, on_link, on_addr, &s), 1);
	assert_int_equal(s.n_links, 5);
	assert_int_equal(s.n_addrs, 0);
	assert_string_equal(s.links[0].name, "lo");
	assert_false(s.links[0].up); /* IF_OPER_UNKNOWN: Coroot's 0 too */
	assert_string_equal(s.links[3].name, "eth0");
	assert_int_equal(s.links[3].index, 4);
	assert_true(s.links[3].up);
	assert_int_equal(s.links[3].rx_packets, 149152);
	assert_int_equal(s.links[3].tx_packets, 95938);
	assert_int_equal(s.links[3].rx_bytes, 6044115211ull);
	assert_int_equal(s.links[3].tx_bytes, 6559494);
	assert_string_equal(s.links[4].name, "cni-podman0");
	assert_false(s.links[4].up);
	free(links);

	char *addrs = test_file_read(DATA "addrs.nl", &len);
	memset(&s, 0, sizeof(s));
	assert_int_equal(node_netlink_parse(addrs, len, on_link, on_addr, &s), 1);
	assert_int_equal(s.n_links, 0);
	const struct { int index; const char *ip; } want[] = {
		{ 1, "127.0.0.1" }, { 4, "192.0.2.2" },	   { 5, "10.88.0.1" },
		{ 1, "::1" },	    { 4, "fd00::2" },	   { 4, "fe80::fc:ff:fe00:1" },
		{ 5, "fe80::60aa:77ff:feb4:a40f" },
	};
	assert_int_equal(s.n_addrs, sizeof(want) / sizeof(want[0]));
	for (int i = 0; i < s.n_addrs; i++) {
		assert_int_equal(s.addrs[i].index, want[i].index);
		assert_string_equal(addr_text(&s.addrs[i]), want[i].ip);
	}
	free(addrs);
}

/* Appends one attribute to the message at h. */
static void put_attr(struct nlmsghdr *h, uint16_t type, const void *data, size_t n)
{
	struct rtattr *a = (void *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));
	a->rta_type = type;
	a->rta_len = RTA_LENGTH(n);
	memcpy(RTA_DATA(a), data, n);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

static struct nlmsghdr *new_msg(char *buf, uint16_t type, size_t hdr)
{
	struct nlmsghdr *h = (void *)buf;
	memset(buf, 0, 4096);
	h->nlmsg_type = type;
	h->nlmsg_len = NLMSG_LENGTH(hdr);
	return h;
}

static void test_netlink_edges(void **state)
{
	char buf[4096] __attribute__((aligned(8)));
	struct net_seen s = { 0 };

	/* 32-bit counters when the kernel gives no 64-bit ones. */
	struct nlmsghdr *h = new_msg(buf, RTM_NEWLINK, sizeof(struct ifinfomsg));
	((struct ifinfomsg *)NLMSG_DATA(h))->ifi_index = 7;
	put_attr(h, IFLA_IFNAME, "eth7", 5);
	struct rtnl_link_stats st32 = { .rx_packets = 1, .tx_packets = 2, .rx_bytes = 3,
					.tx_bytes = 4 };
	put_attr(h, IFLA_STATS, &st32, sizeof(st32));
	uint8_t up = IF_OPER_UP;
	put_attr(h, IFLA_OPERSTATE, &up, 1);
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), 0);
	assert_int_equal(s.n_links, 1);
	assert_true(s.links[0].up);
	assert_int_equal(s.links[0].rx_bytes, 3);
	assert_int_equal(s.links[0].tx_packets, 2);

	/* 64-bit counters win, whatever the order; the values past 32 bits. */
	struct rtnl_link_stats64 st64 = { .rx_bytes = 1ull << 40, .tx_bytes = UINT64_MAX };
	put_attr(h, IFLA_STATS64, &st64, sizeof(st64));
	put_attr(h, IFLA_STATS, &st32, sizeof(st32));
	s.n_links = 0;
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), 0);
	assert_true(s.links[0].rx_bytes == 1ull << 40);
	assert_true(s.links[0].tx_bytes == UINT64_MAX);

	/* A link without a name is no interface; a name without its NUL is malformed. */
	h = new_msg(buf, RTM_NEWLINK, sizeof(struct ifinfomsg));
	s.n_links = 0;
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), 0);
	assert_int_equal(s.n_links, 0);
	put_attr(h, IFLA_IFNAME, "eth0", 4);
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), -EINVAL);
	h = new_msg(buf, RTM_NEWLINK, sizeof(struct ifinfomsg));
	put_attr(h, IFLA_IFNAME, "a-name-longer-than-ifnamsiz", 28);
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), -EINVAL);
	/* Stats too short for the four counters. */
	h = new_msg(buf, RTM_NEWLINK, sizeof(struct ifinfomsg));
	put_attr(h, IFLA_STATS64, &st64, 16);
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), -EINVAL);

	/* An attribute running past its message, a message past the datagram. */
	h = new_msg(buf, RTM_NEWLINK, sizeof(struct ifinfomsg));
	put_attr(h, IFLA_IFNAME, "eth0", 5);
	((struct rtattr *)((char *)h + NLMSG_LENGTH(sizeof(struct ifinfomsg))))->rta_len = 200;
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), -EINVAL);
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len - 4, on_link, on_addr, &s),
			 -EINVAL);
	h = new_msg(buf, RTM_NEWLINK, 2); /* shorter than an ifinfomsg */
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), -EINVAL);

	/* Addresses: IFA_ADDRESS alone; IFA_LOCAL over IFA_ADDRESS (a point-to-point peer). */
	h = new_msg(buf, RTM_NEWADDR, sizeof(struct ifaddrmsg));
	struct ifaddrmsg *ifa = NLMSG_DATA(h);
	ifa->ifa_family = AF_INET;
	ifa->ifa_index = 9;
	put_attr(h, IFA_ADDRESS, "\x0a\x00\x00\x02", 4);
	s.n_addrs = 0;
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), 0);
	assert_int_equal(s.n_addrs, 1);
	assert_string_equal(addr_text(&s.addrs[0]), "10.0.0.2");
	put_attr(h, IFA_LOCAL, "\x0a\x00\x00\x01", 4);
	s.n_addrs = 0;
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), 0);
	assert_string_equal(addr_text(&s.addrs[0]), "10.0.0.1");
	assert_int_equal(s.addrs[0].index, 9);
	/* An IPv4 address of 16 bytes is malformed; another family is skipped. */
	put_attr(h, IFA_ADDRESS, "0123456789abcdef", 16);
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), -EINVAL);
	ifa->ifa_family = AF_PACKET;
	s.n_addrs = 0;
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), 0);
	assert_int_equal(s.n_addrs, 0);

	/* The kernel's error, and an error message too short to say which. */
	h = new_msg(buf, NLMSG_ERROR, sizeof(struct nlmsgerr));
	((struct nlmsgerr *)NLMSG_DATA(h))->error = -EPERM;
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), -EPERM);
	/* Found by fuzz_node_netlink: an "error" that is no errno is no answer. */
	((struct nlmsgerr *)NLMSG_DATA(h))->error = INT32_MIN;
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), -EINVAL);
	((struct nlmsgerr *)NLMSG_DATA(h))->error = 0; /* an ACK ends nothing a dump waits for */
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), -EINVAL);
	h->nlmsg_len = NLMSG_LENGTH(2);
	assert_int_equal(node_netlink_parse(buf, h->nlmsg_len, on_link, on_addr, &s), -EINVAL);
	/* Trailing bytes shorter than a header are padding; a header shorter than itself is not. */
	h = new_msg(buf, NLMSG_DONE, 4);
	assert_int_equal(node_netlink_parse(buf, 0, on_link, on_addr, &s), 0);
	h->nlmsg_len = 8;
	assert_int_equal(node_netlink_parse(buf, 16, on_link, on_addr, &s), -EINVAL);
}

static void test_netlink_request(void **state)
{
	char buf[64] __attribute__((aligned(8)));
	size_t n = node_netlink_build_request(RTM_GETADDR, 42, buf, sizeof(buf));
	const struct nlmsghdr *h = (const void *)buf;

	assert_int_equal(n, NLMSG_LENGTH(sizeof(struct ifinfomsg)));
	assert_int_equal(h->nlmsg_len, n);
	assert_int_equal(h->nlmsg_type, RTM_GETADDR);
	assert_int_equal(h->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
	assert_int_equal(h->nlmsg_seq, 42);
	assert_int_equal(((const struct ifinfomsg *)NLMSG_DATA(h))->ifi_family, AF_UNSPEC);
	assert_int_equal(node_netlink_build_request(RTM_GETLINK, 1, buf, 8), 0);
	assert_int_equal(node_netlink_build_request(RTM_GETROUTE, 1, buf, sizeof(buf)), 0);
}

/* ---- node_cloud_info ---- */

static void test_cloud_from_dmi(void **state)
{
	struct node_cloud_flags none = { 0 };
	struct node_cloud c;
	struct node_dmi d = { 0 };

	node_cloud_detect(&d, &none, &c);
	for (int i = 0; i < NODE_CLOUD_LABELS; i++)
		assert_string_equal(c.v[i], "");
	assert_string_equal(node_cloud_label_names[NODE_CLOUD_AVAILABILITY_ZONE_ID],
			    "availability_zone_id");

	/* EC2 Nitro: the vendor, and the instance id in the board's asset tag. */
	strcpy(d.board_vendor, "Amazon EC2");
	strcpy(d.board_asset_tag, "i-0af01c0123456789a");
	node_cloud_detect(&d, &none, &c);
	assert_string_equal(c.v[NODE_CLOUD_PROVIDER], "AWS");
	assert_string_equal(c.v[NODE_CLOUD_INSTANCE_ID], "i-0af01c0123456789a");
	/* An asset tag that is no instance id is none. */
	strcpy(d.board_asset_tag, "i-not-hex");
	node_cloud_detect(&d, &none, &c);
	assert_string_equal(c.v[NODE_CLOUD_INSTANCE_ID], "");

	const struct { const char *field, *value, *provider; } cases[] = {
		{ "hypervisor", "EC2e1916-9099-7caf-fd21-012345abcdef", "AWS" },
		{ "board", "Google", "GCP" },
		{ "board", "Microsoft Corporation", "Azure" },
		{ "board", "DigitalOcean", "DigitalOcean" },
		{ "sys", "Hetzner", "Hetzner" },
		{ "sys", "Alibaba Cloud", "Alibaba" },
		{ "sys", "Scaleway", "Scaleway" },
		{ "chassis", "IBM:Cloud Compute Server 1.0", "IBM" },
		{ "tag", "OracleCloud.com", "Oracle" },
		{ "board", "QEMU", "" },
		{ "sys", "Google", "" }, /* GCP is told by the board vendor */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&d, 0, sizeof(d));
		char *f = !strcmp(cases[i].field, "hypervisor") ? d.hypervisor_uuid
			  : !strcmp(cases[i].field, "board")	? d.board_vendor
			  : !strcmp(cases[i].field, "sys")	? d.sys_vendor
			  : !strcmp(cases[i].field, "chassis")	? d.chassis_vendor
								: d.chassis_asset_tag;
		strcpy(f, cases[i].value);
		node_cloud_detect(&d, &none, &c);
		if (strcmp(c.v[NODE_CLOUD_PROVIDER], cases[i].provider))
			fail_msg("%s=%s: provider %s, want %s", cases[i].field, cases[i].value,
				 c.v[NODE_CLOUD_PROVIDER], cases[i].provider);
	}
}

static void test_cloud_flags_win(void **state)
{
	struct node_dmi d = { 0 };
	struct node_cloud c;
	struct node_cloud_flags f = { .provider = "my-cloud", .region = "r1",
				      .availability_zone = "r1a", .instance_type = "m5.large",
				      .instance_life_cycle = "spot" };

	strcpy(d.board_vendor, "Google");
	node_cloud_detect(&d, &f, &c);
	assert_string_equal(c.v[NODE_CLOUD_PROVIDER], "my-cloud");
	assert_string_equal(c.v[NODE_CLOUD_REGION], "r1");
	assert_string_equal(c.v[NODE_CLOUD_AVAILABILITY_ZONE], "r1a");
	assert_string_equal(c.v[NODE_CLOUD_INSTANCE_TYPE], "m5.large");
	assert_string_equal(c.v[NODE_CLOUD_INSTANCE_LIFE_CYCLE], "spot");
	assert_string_equal(c.v[NODE_CLOUD_ACCOUNT_ID], "");
	/* "" is not given (as Coroot's overrides). */
	f.provider = "";
	node_cloud_detect(&d, &f, &c);
	assert_string_equal(c.v[NODE_CLOUD_PROVIDER], "GCP");
}

static void test_dmi_read(void **state)
{
	char root[] = "/tmp/ns-dmi-XXXXXX", cmd[256], path[256];
	struct node_dmi d;

	assert_non_null(mkdtemp(root));
	assert_int_equal(node_dmi_read(root, &d), 0);
	assert_string_equal(d.board_vendor, "");
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/sys/class/dmi/id", root);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/sys/class/dmi/id/board_vendor", root);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("Amazon EC2 \n", fp);
	fclose(fp);
	assert_int_equal(node_dmi_read(root, &d), 1);
	assert_string_equal(d.board_vendor, "Amazon EC2");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_captured),	  cmocka_unit_test(test_stat_edges),
		cmocka_unit_test(test_uptime),		  cmocka_unit_test(test_meminfo_captured),
		cmocka_unit_test(test_meminfo_edges),	  cmocka_unit_test(test_diskstats_captured),
		cmocka_unit_test(test_diskstats_edges),	  cmocka_unit_test(test_disk_filter),
		cmocka_unit_test(test_net_name_filter),	  cmocka_unit_test(test_net_ip_filter),
		cmocka_unit_test(test_netlink_captured),  cmocka_unit_test(test_netlink_edges),
		cmocka_unit_test(test_netlink_request),	  cmocka_unit_test(test_cloud_from_dmi),
		cmocka_unit_test(test_cloud_flags_win),	  cmocka_unit_test(test_dmi_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
