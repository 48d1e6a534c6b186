/*
 * DNS messages (RFC 1035), pure: the header, the one question, and the
 * addresses of the A and AAAA answers — what the DNS metrics and the
 * address-to-name map need. Names follow compression pointers (bounded).
 */
#ifndef NODESCOPE_L7_DNS_H
#define NODESCOPE_L7_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_NAME_LEN 256 /* 255 bytes of presentation form, and a NUL */
#define DNS_MAX_ADDRS 16

struct dns_addr {
	uint16_t family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
};

struct dns_msg {
	uint16_t id;
	bool response;
	uint8_t rcode;
	uint16_t qtype;
	char name[DNS_NAME_LEN]; /* the question's name, no trailing dot ("" for the root) */
	unsigned n_addrs;	 /* A and AAAA answers kept (at most DNS_MAX_ADDRS) */
	struct dns_addr addrs[DNS_MAX_ADDRS];
};

/*
 * Parses one message (a UDP datagram, or a TCP message without its length
 * prefix) of which n bytes are at p. Only a standard query or its answer
 * with exactly one question is taken, as the metrics count per question.
 * An answer section cut short keeps the addresses before the cut.
 * Returns 0, or -EINVAL.
 */
int dns_parse(const uint8_t *p, size_t n, struct dns_msg *m);

/* The question type as Coroot's labels have it ("TypeA", "TypeAAAA"; else the number) into buf. */
const char *dns_type_name(uint16_t type, char *buf, size_t cap);
/* The status label of a response code ("ok", "nxdomain", ...), NULL for codes Coroot does not count. */
const char *dns_status_name(uint8_t rcode);
/*
 * The domain as Coroot labels it: PTR questions are one domain
 * ("IP.in-addr.arpa"), EC2's per-address names one per region, and a name
 * with a search-path suffix appended after a public suffix is cut there.
 */
void dns_normalize_fqdn(const char *name, uint16_t qtype, char *out, size_t cap);

#endif
