#include "scan.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "events.h"
#include "proc/procfs.h"
#include "util/hmap.h"

#define SCAN_MAX_SOCKETS 262144

static int parse_hex_addr(const char *s, uint16_t family, uint8_t out[16], uint16_t *port)
{
	/* The kernel prints each 32-bit word of the address as %08X of its
	 * in-memory (network order) value read as a host integer. */
	int words = family == AF_INET ? 1 : 4;
	memset(out, 0, 16);
	for (int w = 0; w < words; w++) {
		char buf[9];
		for (int i = 0; i < 8; i++) {
			if (!isxdigit((unsigned char)s[i]))
				return -EINVAL;
			buf[i] = s[i];
		}
		buf[8] = '\0';
		uint32_t v = (uint32_t)strtoul(buf, NULL, 16);
		memcpy(out + 4 * w, &v, 4);
		s += 8;
	}
	if (*s != ':')
		return -EINVAL;
	/* The port is %04X: only hex digits to the end of the field (strtoul alone
	 * would take "1F9G" as 0x1F9, and a sign or a "0x" too). */
	size_t n = strspn(s + 1, "0123456789abcdefABCDEF");
	if (n == 0 || n > 4 || s[1 + n] != '\0')
		return -EINVAL;
	*port = (uint16_t)strtoul(s + 1, NULL, 16);
	return 0;
}

int tcp_scan_parse_line(const char *line, uint16_t family, struct tcp_scan_entry *out)
{
	char local[64], remote[64];
	unsigned state;
	unsigned long long inode;

	memset(out, 0, sizeof(*out));
	/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
	if (sscanf(line, " %*u: %63s %63s %x %*s %*s %*s %*u %*d %llu", local, remote, &state,
		   &inode) != 4)
		return -EINVAL;
	out->tuple.family = family;
	if (parse_hex_addr(local, family, out->tuple.saddr, &out->tuple.sport) ||
	    parse_hex_addr(remote, family, out->tuple.daddr, &out->tuple.dport))
		return -EINVAL;
	out->state = (int)state;
	out->inode = inode;
	out->fd = -1;
	return 0;
}

struct scan_sock {
	struct hmap_node node;
	struct tcp_scan_entry e;
	bool reported;
};

struct scan {
	struct hmap socks; /* inode -> socket (inodes are unique across namespaces) */
	struct hmap netns; /* namespaces already read */
	struct hmap listen_ports; /* key: netns ^ port, for telling inbound from outbound */
};

static uint64_t listen_key(uint64_t netns, uint16_t port)
{
	return netns * 65537 + port;
}

/*
 * Whether a socket of the table is one the scan reports: TCP established or
 * listening; UDP bound to port 53 (a DNS server's) or connected to it.
 */
static bool scan_wanted(struct tcp_scan_entry *e, bool udp)
{
	if (!udp)
		return e->state == TCP_STATE_ESTABLISHED || e->state == TCP_STATE_LISTEN;
	e->udp = true;
	e->inbound = e->tuple.sport == NS_DNS_PORT;
	return e->inbound || (e->state == TCP_STATE_ESTABLISHED && e->tuple.dport == NS_DNS_PORT);
}

static void scan_read_table(struct scan *s, int pid, const char *name, uint16_t family,
			    uint64_t netns)
{
	bool udp = !strncmp(name, "udp", 3);
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/net/%s", pid, name);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct tcp_scan_entry e;
		if (tcp_scan_parse_line(line, family, &e))
			continue;
		if (!scan_wanted(&e, udp))
			continue;
		if (!e.inode || s->socks.count >= SCAN_MAX_SOCKETS)
			continue;
		e.netns = netns;
		if (e.state == TCP_STATE_LISTEN && !udp) {
			struct hmap_node *n = calloc(1, sizeof(*n));
			if (n)
				hmap_insert(&s->listen_ports, n, listen_key(netns, e.tuple.sport));
		}
		struct scan_sock *ss = calloc(1, sizeof(*ss));
		if (!ss)
			break;
		ss->e = e;
		hmap_insert(&s->socks, &ss->node, e.inode);
	}
	fclose(f);
}

static void scan_netns_of(struct scan *s, int pid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	if (stat(path, &st))
		return;
	if (hmap_get(&s->netns, st.st_ino))
		return;
	struct hmap_node *n = calloc(1, sizeof(*n));
	if (!n)
		return;
	hmap_insert(&s->netns, n, st.st_ino);
	scan_read_table(s, pid, "tcp", AF_INET, st.st_ino);
	scan_read_table(s, pid, "tcp6", AF_INET6, st.st_ino);
	scan_read_table(s, pid, "udp", AF_INET, st.st_ino);
	scan_read_table(s, pid, "udp6", AF_INET6, st.st_ino);
}

static void scan_fds_of(struct scan *s, int pid, tcp_scan_fn fn, void *ctx)
{
	char path[64], link[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	DIR *d = opendir(path);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		char fdpath[sizeof(path) + sizeof(de->d_name) + 2];
		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, de->d_name);
		ssize_t n = readlink(fdpath, link, sizeof(link) - 1);
		if (n <= 8)
			continue;
		link[n] = '\0';
		unsigned long long inode;
		if (sscanf(link, "socket:[%llu]", &inode) != 1)
			continue;
		struct hmap_node *hn = hmap_get(&s->socks, inode);
		if (!hn)
			continue;
		struct scan_sock *ss = hmap_entry(hn, struct scan_sock, node);
		if (ss->reported)
			continue; /* shared after fork: the first holder owns it */
		ss->reported = true;
		ss->e.pid = (uint32_t)pid;
		ss->e.fd = atoi(de->d_name);
		if (!ss->e.udp)
			ss->e.inbound = ss->e.state == TCP_STATE_ESTABLISHED &&
					hmap_get(&s->listen_ports,
						 listen_key(ss->e.netns, ss->e.tuple.sport));
		fn(ctx, &ss->e);
	}
	closedir(d);
}

static void free_all(struct hmap *m, size_t offset)
{
	struct hmap_node *n;
	while ((n = hmap_pop(m)))
		free((char *)n - offset);
	hmap_destroy(m);
}

/* Pass 0 reads each namespace's tables; pass 1 maps sockets to processes. */
struct scan_pass {
	struct scan *s;
	tcp_scan_fn fn;
	void *ctx;
	int pass;
};

static void scan_pid(void *ctx, pid_t pid)
{
	struct scan_pass *sp = ctx;
	if (sp->pass == 0)
		scan_netns_of(sp->s, pid);
	else
		scan_fds_of(sp->s, pid, sp->fn, sp->ctx);
}

int tcp_scan(tcp_scan_fn fn, void *ctx)
{
	struct scan s;

	if (hmap_init(&s.socks, 4096) || hmap_init(&s.netns, 64) ||
	    hmap_init(&s.listen_ports, 1024))
		return -ENOMEM;
	struct scan_pass sp = { &s, fn, ctx, 0 };
	for (sp.pass = 0; sp.pass < 2; sp.pass++)
		if (procfs_foreach_pid(scan_pid, &sp))
			break;
	free_all(&s.socks, offsetof(struct scan_sock, node));
	free_all(&s.netns, 0);
	free_all(&s.listen_ports, 0);
	return 0;
}
