/* Socket address text, as nodescope prints it everywhere. Pure. */
#ifndef NODESCOPE_TCP_ADDR_H
#define NODESCOPE_TCP_ADDR_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

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
 * Whether port is in the ephemeral range lo..hi (lo > hi: no range), whose
 * destinations and listens Coroot leaves out of the metrics: a port the
 * kernel handed out is no service. 50051 (gRPC's usual port) stays in.
 */
bool tcp_port_ephemeral(uint16_t port, uint16_t lo, uint16_t hi);

/* 127.0.0.0/8, ::1 or ::ffff:127.x.x.x. */
bool tcp_addr_loopback(uint16_t family, const uint8_t addr[16]);
/* 169.254.0.0/16, fe80::/10 or ::ffff:169.254.x.x: Coroot leaves these destinations out. */
bool tcp_addr_link_local(uint16_t family, const uint8_t addr[16]);
/* Neither loopback nor private (RFC 1918, 100.64.0.0/10, fc00::/7): Coroot's "external". */
bool tcp_addr_external(uint16_t family, const uint8_t addr[16]);

#endif
