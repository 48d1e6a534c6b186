/* Socket address text, as nodescope prints it everywhere. Pure. */
#ifndef NODESCOPE_TCP_ADDR_H
#define NODESCOPE_TCP_ADDR_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli.h"

#define TCP_ADDR_STRLEN 64 /* "[ffff:...:ffff]:65535" and a NUL fit */

/*
 * "1.2.3.4:80" for IPv4, "[::1]:80" for IPv6; IPv4-mapped IPv6 addresses
 * (::ffff:a.b.c.d) print as IPv4, so one peer has one name. addr holds the
 * address in network byte order (IPv4 in its first 4 bytes).
 */
void tcp_addr_format(uint16_t family, const uint8_t addr[16], uint16_t port, char *out,
		     size_t len);
/* The same without the port (and without brackets). */
void tcp_ip_format(uint16_t family, const uint8_t addr[16], char *out, size_t len);

/*
 * Whether port is in one of the ephemeral ranges (NULL: none), whose
 * destinations and listens Coroot leaves out of the metrics: a port the
 * kernel handed out is no service. 50051 (gRPC's usual port) stays in.
 */
bool tcp_port_ephemeral(uint16_t port, const struct ns_port_ranges *ranges);
/* "1.2.3.4:80" or "[::1]:80" (as tcp_addr_format writes them) back to the address. 0 or -EINVAL. */
int tcp_addr_parse(const char *text, uint16_t *family, uint8_t addr[16]);

/* 127.0.0.0/8, ::1 or ::ffff:127.x.x.x. */
bool tcp_addr_loopback(uint16_t family, const uint8_t addr[16]);
/* 169.254.0.0/16, fe80::/10 or ::ffff:169.254.x.x: Coroot leaves these destinations out. */
bool tcp_addr_link_local(uint16_t family, const uint8_t addr[16]);
/* Neither loopback nor private (RFC 1918, 100.64.0.0/10, fc00::/7): Coroot's "external". */
bool tcp_addr_external(uint16_t family, const uint8_t addr[16]);

#endif
