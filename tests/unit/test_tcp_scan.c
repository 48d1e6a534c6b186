#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tcp/addr.h"
#include "tcp/scan.h"

#define HEADER4                                                                              \
	"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  " \
	"timeout inode\n"
#define HEADER6                                                                              \
	"  sl  local_address                         remote_address                        " \
	"st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"

/* The exact LISTEN line of the brief, as the kernel prints it for 127.0.0.1:8080. */
#define LISTEN4                                                                              \
	"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 " \
	"       0 12345 1 0000000000000000 100 0 0 10 0"

static void assert_ip(const struct tcp_tuple *t, const uint8_t *addr, bool local,
		      const char *want)
{
	char buf[TCP_ADDR_STRLEN];

	tcp_ip_format(t->family, addr, buf, sizeof(buf));
	if (strcmp(buf, want))
		fail_msg("%s address %s, want %s", local ? "local" : "remote", buf, want);
}

/* The kernel's text for an address: each 32-bit word as %08X of its in-memory value. */
static void kernel_hex(uint16_t family, const char *text, char *out)
{
	uint8_t a[16] = { 0 };
	int words = family == AF_INET ? 1 : 4;

	assert_int_equal(inet_pton(family, text, a), 1);
	for (int w = 0; w < words; w++) {
		uint32_t v;
		memcpy(&v, a + 4 * w, 4);
		sprintf(out + 8 * w, "%08X", v);
	}
}

static void test_header_rejected(void **state)
{
	struct tcp_scan_entry e;

	assert_int_equal(tcp_scan_parse_line(HEADER4, AF_INET, &e), -EINVAL);
	assert_int_equal(tcp_scan_parse_line(HEADER6, AF_INET6, &e), -EINVAL);
	assert_int_equal(tcp_scan_parse_line("", AF_INET, &e), -EINVAL);
	assert_int_equal(tcp_scan_parse_line("\n", AF_INET, &e), -EINVAL);
}

static void test_listen_v4(void **state)
{
	struct tcp_scan_entry e;

	memset(&e, 0x5a, sizeof(e));
	assert_int_equal(tcp_scan_parse_line(LISTEN4, AF_INET, &e), 0);
	assert_int_equal(e.tuple.family, AF_INET);
	assert_ip(&e.tuple, e.tuple.saddr, true, "127.0.0.1");
	assert_int_equal(e.tuple.sport, 8080);
	assert_ip(&e.tuple, e.tuple.daddr, false, "0.0.0.0");
	assert_int_equal(e.tuple.dport, 0);
	assert_int_equal(e.state, TCP_STATE_LISTEN);
	assert_int_equal(e.state, 10);
	assert_int_equal(e.inode, 12345);
	/* network order in memory, the rest of the 16 bytes zero */
	static const uint8_t lo[16] = { 127, 0, 0, 1 };
	assert_memory_equal(e.tuple.saddr, lo, 16);
	static const uint8_t zero[16] = { 0 };
	assert_memory_equal(e.tuple.daddr, zero, 16);
	/* not known from the line: left for the scanner */
	assert_int_equal(e.fd, -1);
	assert_int_equal(e.pid, 0);
	assert_int_equal(e.netns, 0);
	assert_false(e.inbound);

	char peer[TCP_ADDR_STRLEN];
	tcp_addr_format(e.tuple.family, e.tuple.saddr, e.tuple.sport, peer, sizeof(peer));
	assert_string_equal(peer, "127.0.0.1:8080");

	/* with the trailing newline fgets leaves */
	assert_int_equal(tcp_scan_parse_line(LISTEN4 "\n", AF_INET, &e), 0);
	assert_int_equal(e.inode, 12345);
	assert_int_equal(e.tuple.sport, 8080);
}

/* A line of /proc/net/udp (the same leading fields): dnsmasq bound to 127.0.0.77:53, state 07. */
static void test_udp_dns_server_line(void **state)
{
	struct tcp_scan_entry e;
	(void)state;
	assert_int_equal(tcp_scan_parse_line("  123: 4D00007F:0035 00000000:0000 07 00000000:00000000 "
					     "00:00000000 00000000     0        0 98765 2 "
					     "0000000000000000 0",
					     AF_INET, &e),
			 0);
	assert_int_equal(e.tuple.sport, 53);
	assert_int_equal(e.tuple.dport, 0);
	assert_int_equal(e.state, 7);
	assert_int_equal(e.inode, 98765);
	assert_ip(&e.tuple, e.tuple.saddr, true, "127.0.0.77");
}

static void test_established_v4(void **state)
{
	struct tcp_scan_entry e;
	/* 10.0.0.2:40000 -> 93.184.216.34:443, uid 1000, a big inode, high slot number */
	const char *line = "  17: 0200000A:9C40 22D8B85D:01BB 01 00000000:00000000 02:000A7B2C "
			   "00000000  1000        0 4294967301 2 0000000000000000 20 4 30 10 -1\n";

	assert_int_equal(tcp_scan_parse_line(line, AF_INET, &e), 0);
	assert_ip(&e.tuple, e.tuple.saddr, true, "10.0.0.2");
	assert_int_equal(e.tuple.sport, 40000);
	assert_ip(&e.tuple, e.tuple.daddr, false, "93.184.216.34");
	assert_int_equal(e.tuple.dport, 443);
	assert_int_equal(e.state, TCP_STATE_ESTABLISHED);
	assert_int_equal(e.inode, 4294967301ull);

	/* a TIME_WAIT line (inode 0) parses; the scanner skips it by state */
	const char *tw = "   3: 0100007F:1F90 0100007F:D6A2 06 00000000:00000000 03:000016A1 "
			 "00000000     0        0 0 3 0000000000000000";
	assert_int_equal(tcp_scan_parse_line(tw, AF_INET, &e), 0);
	assert_int_equal(e.state, 6);
	assert_int_equal(e.inode, 0);
	assert_int_equal(e.tuple.dport, 0xD6A2);
}

static void test_established_v6_loopback(void **state)
{
	struct tcp_scan_entry e;
	char hex[33];
	char line[512];

	kernel_hex(AF_INET6, "::1", hex);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	assert_string_equal(hex, "00000000000000000000000001000000");
#endif
	snprintf(line, sizeof(line),
		 "   1: %s:01BB %s:C350 01 00000000:00000000 00:00000000 00000000  1000        0 "
		 "54321 1 0000000000000000 20 4 30 10 -1\n",
		 hex, hex);
	assert_int_equal(tcp_scan_parse_line(line, AF_INET6, &e), 0);
	assert_int_equal(e.tuple.family, AF_INET6);
	assert_memory_equal(e.tuple.saddr, &in6addr_loopback, 16);
	assert_memory_equal(e.tuple.daddr, &in6addr_loopback, 16);
	assert_int_equal(e.tuple.sport, 443);
	assert_int_equal(e.tuple.dport, 50000);
	assert_int_equal(e.state, TCP_STATE_ESTABLISHED);
	assert_int_equal(e.inode, 54321);

	char peer[TCP_ADDR_STRLEN];
	tcp_addr_format(e.tuple.family, e.tuple.daddr, e.tuple.dport, peer, sizeof(peer));
	assert_string_equal(peer, "[::1]:50000");

	/* a global address, every byte distinct: checks the word and byte order */
	kernel_hex(AF_INET6, "2001:db8:1234:5678:9abc:def0:fedc:ba98", hex);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	assert_string_equal(hex, "B80D012078563412F0DEBC9A98BADCFE");
#endif
	snprintf(line, sizeof(line),
		 "   2: %s:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 "
		 "00:00000000 00000000     0        0 777 1 0000000000000000 100 0 0 10 0",
		 hex);
	assert_int_equal(tcp_scan_parse_line(line, AF_INET6, &e), 0);
	assert_ip(&e.tuple, e.tuple.saddr, true, "2001:db8:1234:5678:9abc:def0:fedc:ba98");
	assert_ip(&e.tuple, e.tuple.daddr, false, "::");
	assert_int_equal(e.state, TCP_STATE_LISTEN);
	assert_int_equal(e.tuple.sport, 8080);
	assert_int_equal(e.inode, 777);

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* the literal x86-64 text, lower-case hex accepted too */
	const char *lit = "   0: 00000000000000000000000001000000:0277 "
			  "B80D0120000000000000000001000000:ce4a 01 00000000:00000000 "
			  "00:00000000 00000000     0        0 99 1 0000000000000000 20 4 30 10 -1";
	assert_int_equal(tcp_scan_parse_line(lit, AF_INET6, &e), 0);
	assert_ip(&e.tuple, e.tuple.saddr, true, "::1");
	assert_ip(&e.tuple, e.tuple.daddr, false, "2001:db8::1");
	assert_int_equal(e.tuple.sport, 631);
	assert_int_equal(e.tuple.dport, 0xce4a);
#endif
}

static void test_established_v6_mapped(void **state)
{
	struct tcp_scan_entry e;
	char src[33], dst[33], line[512];

	kernel_hex(AF_INET6, "::ffff:10.0.0.1", src);
	kernel_hex(AF_INET6, "::ffff:192.168.1.7", dst);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	assert_string_equal(src, "0000000000000000FFFF00000100000A");
	assert_string_equal(dst, "0000000000000000FFFF00000701A8C0");
#endif
	snprintf(line, sizeof(line),
		 "   5: %s:0050 %s:E4F2 01 00000000:00000000 00:00000000 00000000    33        0 "
		 "888888 1 0000000000000000 20 4 30 10 -1\n",
		 src, dst);
	assert_int_equal(tcp_scan_parse_line(line, AF_INET6, &e), 0);
	assert_int_equal(e.tuple.family, AF_INET6);
	static const uint8_t want[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1 };
	assert_memory_equal(e.tuple.saddr, want, 16);
	assert_int_equal(e.tuple.sport, 80);
	assert_int_equal(e.tuple.dport, 0xE4F2);
	assert_int_equal(e.state, TCP_STATE_ESTABLISHED);
	assert_int_equal(e.inode, 888888);

	/* printed as IPv4, like the same peer seen over AF_INET */
	char peer[TCP_ADDR_STRLEN];
	tcp_addr_format(e.tuple.family, e.tuple.daddr, e.tuple.dport, peer, sizeof(peer));
	assert_string_equal(peer, "192.168.1.7:58610");
	tcp_addr_format(e.tuple.family, e.tuple.saddr, e.tuple.sport, peer, sizeof(peer));
	assert_string_equal(peer, "10.0.0.1:80");
}

static void test_malformed(void **state)
{
	static const char *const bad4[] = {
		/* truncated lines */
		"   0:",
		"   0: 0100007F:1F90",
		"   0: 0100007F:1F90 00000000:0000",
		"   0: 0100007F:1F90 00000000:0000 0A",
		"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0",
		"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 "
		"       0",
		/* no slot number */
		"0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   x: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		/* bad address hex */
		"   0: 0100007G:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 0100007:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 0100007F0:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 00000000000000000000000001000000:1F90 00000000:0000 0A 00000000:00000000 "
		"00:00000000 00000000 0 0 12345", /* an IPv6 address in tcp */
		"   0: 0100007F 1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 0100007F-1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: :1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 0x00007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 0100007F:1F90 0000000z:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		/* bad port hex */
		"   0: 0100007F: 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 0100007F:1F9G 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 0100007F:XYZ 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 0100007F:10000 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 0100007F:-1 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 0100007F:+50 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 0100007F:0x50 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 0100007F:1F90:1 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 0100007F:1F90 00000000:00zz 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 0100007F:1F90 00000000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		/* bad state, uid or inode */
		"   0: 0100007F:1F90 00000000:0000 ZZ 00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 x 0 12345",
		"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 inode",
	};
	static const char *const bad6[] = {
		/* an IPv4 address in tcp6 */
		"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345",
		/* 31 and 33 hex digits */
		"   0: 0000000000000000000000000100000:1F90 00000000000000000000000000000000:0000 0A "
		"00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 000000000000000000000000010000000:1F90 00000000000000000000000000000000:0000 0A "
		"00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 000000000000000000000000010000g0:1F90 00000000000000000000000000000000:0000 0A "
		"00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 00000000000000000000000001000000:1F90 0000000000000000000000000000000:0000 0A "
		"00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 00000000000000000000000001000000:1F9X 00000000000000000000000000000000:0000 0A "
		"00000000:00000000 00:00000000 00000000 0 0 12345",
		"   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000",
		"   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A "
		"00000000:00000000 00:00000000",
	};
	int wrong = 0;
	struct tcp_scan_entry e;

	for (size_t i = 0; i < sizeof(bad4) / sizeof(bad4[0]); i++) {
		int err = tcp_scan_parse_line(bad4[i], AF_INET, &e);
		if (err != -EINVAL) {
			print_error("tcp line \"%s\" = %d (port %u inode %llu), want -EINVAL\n",
				    bad4[i], err, e.tuple.sport, (unsigned long long)e.inode);
			wrong++;
		}
	}
	for (size_t i = 0; i < sizeof(bad6) / sizeof(bad6[0]); i++) {
		int err = tcp_scan_parse_line(bad6[i], AF_INET6, &e);
		if (err != -EINVAL) {
			print_error("tcp6 line \"%s\" = %d, want -EINVAL\n", bad6[i], err);
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);

	/* a very long token does not overflow the parser's buffers */
	char longline[1024];
	memset(longline, 'A', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	memcpy(longline, "   0: ", 6);
	assert_int_equal(tcp_scan_parse_line(longline, AF_INET, &e), -EINVAL);
	assert_int_equal(tcp_scan_parse_line(longline, AF_INET6, &e), -EINVAL);
}

static void test_port_edges(void **state)
{
	struct tcp_scan_entry e;

	assert_int_equal(tcp_scan_parse_line("   0: 0100007F:FFFF 0100007F:0000 01 00000000:00000000"
					     " 00:00000000 00000000     0        0 1 1",
					     AF_INET, &e),
			 0);
	assert_int_equal(e.tuple.sport, 65535);
	assert_int_equal(e.tuple.dport, 0);
	assert_int_equal(e.inode, 1);
	/* lower-case hex and a short port */
	assert_int_equal(tcp_scan_parse_line("   0: 0100007f:ff 0100007F:1 01 00000000:00000000"
					     " 00:00000000 00000000     0        0 1 1",
					     AF_INET, &e),
			 0);
	assert_int_equal(e.tuple.sport, 255);
	assert_int_equal(e.tuple.dport, 1);
	assert_ip(&e.tuple, e.tuple.saddr, true, "127.0.0.1");
}

/* ---- cross-check with this machine's /proc/net/tcp{,6} ---- */

static uint64_t inode_of(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_ino;
}

/* Finds the line of inode in path, parsed. Returns 0, or -ENOENT. */
static int find_inode(const char *path, uint16_t family, uint64_t inode,
		      struct tcp_scan_entry *out)
{
	char line[512];
	int lines = 0, found = -ENOENT;
	FILE *f = fopen(path, "re");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		struct tcp_scan_entry e;
		int err = tcp_scan_parse_line(line, family, &e);
		if (lines++ == 0) {
			assert_int_equal(err, -EINVAL); /* the header */
			continue;
		}
		if (err)
			fail_msg("%s: a real line not parsed: %s", path, line);
		if (e.inode == inode && found) {
			*out = e;
			found = 0;
		}
	}
	fclose(f);
	assert_true(lines >= 1);
	return found;
}

static void test_live_v4(void **state)
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	struct tcp_scan_entry e;

	assert_true(l >= 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(l, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(l, 4), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&sin, &len), 0);
	uint16_t port = ntohs(sin.sin_port);
	assert_true(port != 0);

	assert_int_equal(find_inode("/proc/self/net/tcp", AF_INET, inode_of(l), &e), 0);
	assert_int_equal(e.state, TCP_STATE_LISTEN);
	assert_int_equal(e.tuple.family, AF_INET);
	assert_int_equal(e.tuple.sport, port);
	assert_ip(&e.tuple, e.tuple.saddr, true, "127.0.0.1");
	assert_int_equal(e.tuple.dport, 0);
	assert_ip(&e.tuple, e.tuple.daddr, false, "0.0.0.0");

	/* and an established pair: both ends, tuples mirrored */
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(c >= 0);
	assert_int_equal(connect(c, (struct sockaddr *)&sin, sizeof(sin)), 0);
	int a = accept(l, NULL, NULL);
	assert_true(a >= 0);
	struct sockaddr_in csin;
	len = sizeof(csin);
	assert_int_equal(getsockname(c, (struct sockaddr *)&csin, &len), 0);

	struct tcp_scan_entry ec, ea;
	assert_int_equal(find_inode("/proc/self/net/tcp", AF_INET, inode_of(c), &ec), 0);
	assert_int_equal(find_inode("/proc/self/net/tcp", AF_INET, inode_of(a), &ea), 0);
	assert_int_equal(ec.state, TCP_STATE_ESTABLISHED);
	assert_int_equal(ea.state, TCP_STATE_ESTABLISHED);
	assert_int_equal(ec.tuple.sport, ntohs(csin.sin_port));
	assert_int_equal(ec.tuple.dport, port);
	assert_int_equal(ea.tuple.sport, port);
	assert_int_equal(ea.tuple.dport, ntohs(csin.sin_port));
	assert_memory_equal(ec.tuple.saddr, &csin.sin_addr, 4);
	assert_memory_equal(ec.tuple.saddr, ea.tuple.daddr, 16);
	assert_memory_equal(ec.tuple.daddr, ea.tuple.saddr, 16);
	close(a);
	close(c);
	close(l);
}

static void test_live_v6(void **state)
{
	int l = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	socklen_t len = sizeof(sin6);
	struct tcp_scan_entry e;

	if (l < 0 || bind(l, (struct sockaddr *)&sin6, sizeof(sin6))) {
		if (l >= 0)
			close(l);
		skip(); /* no IPv6 loopback here */
	}
	assert_int_equal(listen(l, 4), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&sin6, &len), 0);
	uint16_t port = ntohs(sin6.sin6_port);

	assert_int_equal(find_inode("/proc/self/net/tcp6", AF_INET6, inode_of(l), &e), 0);
	assert_int_equal(e.state, TCP_STATE_LISTEN);
	assert_int_equal(e.tuple.sport, port);
	assert_memory_equal(e.tuple.saddr, &in6addr_loopback, 16);

	int c = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(c >= 0);
	assert_int_equal(connect(c, (struct sockaddr *)&sin6, sizeof(sin6)), 0);
	assert_int_equal(find_inode("/proc/self/net/tcp6", AF_INET6, inode_of(c), &e), 0);
	assert_int_equal(e.state, TCP_STATE_ESTABLISHED);
	assert_int_equal(e.tuple.dport, port);
	assert_memory_equal(e.tuple.saddr, &in6addr_loopback, 16);
	assert_memory_equal(e.tuple.daddr, &in6addr_loopback, 16);
	char peer[TCP_ADDR_STRLEN], want[TCP_ADDR_STRLEN];
	tcp_addr_format(e.tuple.family, e.tuple.daddr, e.tuple.dport, peer, sizeof(peer));
	snprintf(want, sizeof(want), "[::1]:%u", port);
	assert_string_equal(peer, want);
	close(c);
	close(l);

	/* a v4-mapped connection: an IPv4 client to a dual-stack listener */
	int d = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int off = 0;
	struct sockaddr_in6 any = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
	assert_true(d >= 0);
	assert_int_equal(setsockopt(d, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)), 0);
	assert_int_equal(bind(d, (struct sockaddr *)&any, sizeof(any)), 0);
	assert_int_equal(listen(d, 4), 0);
	len = sizeof(any);
	assert_int_equal(getsockname(d, (struct sockaddr *)&any, &len), 0);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = any.sin6_port };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&sin, sizeof(sin)), 0);
	int a = accept(d, NULL, NULL);
	assert_true(a >= 0);
	assert_int_equal(find_inode("/proc/self/net/tcp6", AF_INET6, inode_of(a), &e), 0);
	assert_int_equal(e.state, TCP_STATE_ESTABLISHED);
	assert_int_equal(e.tuple.sport, ntohs(any.sin6_port));
	tcp_ip_format(e.tuple.family, e.tuple.saddr, peer, sizeof(peer));
	assert_string_equal(peer, "127.0.0.1");
	tcp_ip_format(e.tuple.family, e.tuple.daddr, peer, sizeof(peer));
	assert_string_equal(peer, "127.0.0.1");
	static const uint8_t mapped_lo[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1 };
	assert_memory_equal(e.tuple.saddr, mapped_lo, 16);
	close(a);
	close(c);
	close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_rejected),
		cmocka_unit_test(test_listen_v4),
		cmocka_unit_test(test_udp_dns_server_line),
		cmocka_unit_test(test_established_v4),
		cmocka_unit_test(test_established_v6_loopback),
		cmocka_unit_test(test_established_v6_mapped),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_port_edges),
		cmocka_unit_test(test_live_v4),
		cmocka_unit_test(test_live_v6),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
