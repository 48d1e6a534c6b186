/* DNS message parsing. See dns.h. */
#include "dns.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define DNS_HEADER 12
#define DNS_MAX_JUMPS 16
#define TYPE_A 1
#define TYPE_PTR 12
#define TYPE_AAAA 28

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * Reads the name at *pos into out (NULL: skipped), following pointers at
 * most DNS_MAX_JUMPS times; *pos ends past the name where it was written
 * (past the first pointer). Returns 0 or -EINVAL.
 */
static int read_name(const uint8_t *p, size_t n, size_t *pos, char *out)
{
	size_t at = *pos, len = 0, end = 0;
	unsigned jumps = 0;

	if (out)
		out[0] = '\0';
	for (;;) {
		if (at >= n)
			return -EINVAL;
		uint8_t l = p[at];
		if ((l & 0xc0) == 0xc0) {
			if (at + 1 >= n || ++jumps > DNS_MAX_JUMPS)
				return -EINVAL;
			if (!end)
				end = at + 2;
			at = (size_t)(l & 0x3f) << 8 | p[at + 1];
			continue;
		}
		if (l & 0xc0)
			return -EINVAL; /* the reserved label types */
		if (!l) {
			if (!end)
				end = at + 1;
			break;
		}
		if (at + 1 + l > n || len + l + (len ? 1 : 0) >= DNS_NAME_LEN)
			return -EINVAL;
		if (out) {
			if (len)
				out[len++] = '.';
			for (unsigned i = 0; i < l; i++) {
				uint8_t c = p[at + 1 + i];
				out[len++] = c > 0x20 && c < 0x7f ? (char)c : '?';
			}
			out[len] = '\0';
		}
		at += 1 + (size_t)l;
	}
	*pos = end;
	return 0;
}

int dns_parse(const uint8_t *p, size_t n, struct dns_msg *m)
{
	size_t pos = DNS_HEADER;

	if (!p || n < DNS_HEADER)
		return -EINVAL;
	m->id = be16(p);
	m->response = p[2] & 0x80;
	m->rcode = p[3] & 0x0f;
	m->n_addrs = 0;
	unsigned opcode = (p[2] >> 3) & 0x0f, qd = be16(p + 4), an = be16(p + 6);
	if (opcode != 0 || qd != 1 || read_name(p, n, &pos, m->name) || pos + 4 > n)
		return -EINVAL;
	m->qtype = be16(p + pos);
	pos += 4;
	for (unsigned i = 0; i < an && m->n_addrs < DNS_MAX_ADDRS; i++) {
		if (read_name(p, n, &pos, NULL) || pos + 10 > n)
			break;
		uint16_t type = be16(p + pos), rdlen = be16(p + pos + 8);
		pos += 10;
		if (pos + rdlen > n)
			break;
		struct dns_addr *a = &m->addrs[m->n_addrs];
		if (type == TYPE_A && rdlen == 4) {
			memset(a, 0, sizeof(*a));
			a->family = AF_INET;
			memcpy(a->addr, p + pos, 4);
			m->n_addrs++;
		} else if (type == TYPE_AAAA && rdlen == 16) {
			a->family = AF_INET6;
			memcpy(a->addr, p + pos, 16);
			m->n_addrs++;
		}
		pos += rdlen;
	}
	return 0;
}

/* The names Go's DNS message package gives the types (what Coroot's labels carry). */
static const struct {
	uint16_t type;
	const char *name;
} type_names[] = {
	{ 1, "TypeA" },	   { 2, "TypeNS" },    { 5, "TypeCNAME" }, { 6, "TypeSOA" },
	{ 11, "TypeWKS" }, { 12, "TypePTR" },  { 13, "TypeHINFO" }, { 14, "TypeMINFO" },
	{ 15, "TypeMX" },  { 16, "TypeTXT" },  { 28, "TypeAAAA" },  { 33, "TypeSRV" },
	{ 41, "TypeOPT" }, { 252, "TypeAXFR" }, { 255, "TypeALL" },
};

const char *dns_type_name(uint16_t type, char *buf, size_t cap)
{
	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (type_names[i].type == type)
			return type_names[i].name;
	snprintf(buf, cap, "%u", type);
	return buf;
}

const char *dns_status_name(uint8_t rcode)
{
	static const char *const names[] = { "ok", "format_error", "servfail",
					     "nxdomain", "not_implemented", "refused" };
	return rcode < sizeof(names) / sizeof(names[0]) ? names[rcode] : NULL;
}

void dns_normalize_fqdn(const char *name, uint16_t qtype, char *out, size_t cap)
{
	if (!cap)
		return;
	if (qtype == TYPE_PTR) {
		snprintf(out, cap, "IP.in-addr.arpa");
		return;
	}
	/* ip-10-1-2-3.ec2.internal: EC2 names an address, one domain for them all */
	const char *dot = strchr(name, '.');
	if (!strncmp(name, "ip-", 3) && dot && !strncmp(dot + 1, "ec2", 3)) {
		snprintf(out, cap, "IP.ec2%s", dot + 4);
		return;
	}
	/* a public suffix (after the first label) with more labels after it: a search path's */
	for (const char *l = dot; l; l = strchr(l + 1, '.')) {
		const char *next = strchr(l + 1, '.');
		if (!next)
			break;
		size_t k = (size_t)(next - (l + 1));
		if ((k == 3 && (!strncmp(l + 1, "com", 3) || !strncmp(l + 1, "net", 3) ||
				!strncmp(l + 1, "org", 3))) ||
		    (k == 2 && !strncmp(l + 1, "io", 2))) {
			snprintf(out, cap, "%.*s.search_path_suffix", (int)(next - name), name);
			return;
		}
	}
	snprintf(out, cap, "%s", name);
}
