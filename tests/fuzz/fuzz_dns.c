/*
 * libFuzzer target for src/l7/dns.c: any datagram. Besides "no crash, no
 * read past the end" (the input is copied into a buffer of its exact size),
 * it checks that the name is printable and bounded, the addresses are at
 * most DNS_MAX_ADDRS, a message parsed whole parses the same with bytes
 * after it, and the normalised domain is bounded.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "l7/dns.h"

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);
	struct dns_msg m, m2;
	char out[DNS_NAME_LEN], tbuf[8];

	CHECK(p);
	memcpy(p, data, size);
	if (dns_parse(p, size, &m) == 0) {
		size_t n = strlen(m.name);
		CHECK(n < DNS_NAME_LEN);
		for (size_t i = 0; i < n; i++)
			CHECK(m.name[i] > 0x20 && m.name[i] < 0x7f);
		CHECK(m.n_addrs <= DNS_MAX_ADDRS);
		dns_normalize_fqdn(m.name, m.qtype, out, sizeof(out));
		CHECK(strlen(out) < sizeof(out));
		CHECK(strlen(dns_type_name(m.qtype, tbuf, sizeof(tbuf))) < 16);
		/* trailing bytes change nothing of the header and question */
		uint8_t *q = malloc(size + 7);
		CHECK(q);
		memcpy(q, p, size);
		memset(q + size, 0xc0, 7);
		CHECK(dns_parse(q, size + 7, &m2) == 0);
		CHECK(m2.id == m.id && m2.qtype == m.qtype && !strcmp(m2.name, m.name));
		CHECK(m2.n_addrs >= m.n_addrs);
		free(q);
	}
	free(p);
	return 0;
}
