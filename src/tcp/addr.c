#include "addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static const uint8_t v4_mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* Returns the family to print with, pointing *a at the bytes to print. */
static int normalize(uint16_t family, const uint8_t addr[16], const uint8_t **a)
{
	*a = addr;
	if (family == AF_INET6 && !memcmp(addr, v4_mapped_prefix, sizeof(v4_mapped_prefix))) {
		*a = addr + 12;
		return AF_INET;
	}
	return family == AF_INET6 ? AF_INET6 : AF_INET;
}

void tcp_ip_format(uint16_t family, const uint8_t addr[16], char *out, size_t len)
{
	const uint8_t *a;
	int f = normalize(family, addr, &a);
	char buf[INET6_ADDRSTRLEN];

	if (!inet_ntop(f, a, buf, sizeof(buf)))
		strcpy(buf, "?");
	snprintf(out, len, "%s", buf);
}

void tcp_addr_format(uint16_t family, const uint8_t addr[16], uint16_t port, char *out,
		     size_t len)
{
	const uint8_t *a;
	int f = normalize(family, addr, &a);
	char buf[INET6_ADDRSTRLEN];

	if (!inet_ntop(f, a, buf, sizeof(buf)))
		strcpy(buf, "?");
	if (f == AF_INET6)
		snprintf(out, len, "[%s]:%u", buf, port);
	else
		snprintf(out, len, "%s:%u", buf, port);
}

bool tcp_port_ephemeral(uint16_t port, const struct ns_port_ranges *ranges)
{
	if (!ranges || port == 50051)
		return false;
	for (unsigned i = 0; i < ranges->n; i++)
		if (port >= ranges->r[i].lo && port <= ranges->r[i].hi)
			return true;
	return false;
}

int tcp_addr_parse(const char *text, uint16_t *family, uint8_t addr[16])
{
	char ip[TCP_ADDR_STRLEN];
	const char *colon = strrchr(text, ':');
	size_t n = colon ? (size_t)(colon - text) : 0;

	if (!n || n >= sizeof(ip))
		return -EINVAL;
	memset(addr, 0, 16);
	if (text[0] == '[' && text[n - 1] == ']') {
		memcpy(ip, text + 1, n - 2);
		ip[n - 2] = '\0';
		*family = AF_INET6;
	} else {
		memcpy(ip, text, n);
		ip[n] = '\0';
		*family = AF_INET;
	}
	return inet_pton(*family, ip, addr) == 1 ? 0 : -EINVAL;
}

/* The IPv4 address in addr (AF_INET, or an IPv4-mapped IPv6 one), or NULL. */
static const uint8_t *v4_of(uint16_t family, const uint8_t addr[16])
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (family == AF_INET)
		return addr;
	if (family == AF_INET6 && !memcmp(addr, mapped, sizeof(mapped)))
		return addr + 12;
	return NULL;
}

bool tcp_addr_loopback(uint16_t family, const uint8_t addr[16])
{
	static const uint8_t one[16] = { [15] = 1 };
	const uint8_t *v4 = v4_of(family, addr);
	if (v4)
		return v4[0] == 127;
	return family == AF_INET6 && !memcmp(addr, one, sizeof(one));
}

bool tcp_addr_link_local(uint16_t family, const uint8_t addr[16])
{
	const uint8_t *v4 = v4_of(family, addr);
	if (v4)
		return v4[0] == 169 && v4[1] == 254;
	return family == AF_INET6 && addr[0] == 0xfe && (addr[1] & 0xc0) == 0x80;
}

bool tcp_addr_external(uint16_t family, const uint8_t addr[16])
{
	const uint8_t *v4 = v4_of(family, addr);
	if (tcp_addr_loopback(family, addr))
		return false;
	if (v4)
		return !(v4[0] == 10 || (v4[0] == 172 && (v4[1] & 0xf0) == 16) ||
			 (v4[0] == 192 && v4[1] == 168) || (v4[0] == 100 && (v4[1] & 0xc0) == 64));
	return (addr[0] & 0xfe) != 0xfc;
}
