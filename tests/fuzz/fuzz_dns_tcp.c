/*
 * libFuzzer target for src/l7/dns_tcp.c: a connection's bytes in chunks.
 * Each chunk is a 3-byte head (its length, how much of it was captured, the
 * direction) and its bytes. Besides "no crash, no read past the end" (each
 * chunk is copied into a buffer of its captured size), it checks that every
 * message handed on is within the reader's bound and that the framer's
 * drop counts stay within the chunks fed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "l7/dns_tcp.h"

#include "fuzz_check.h"

struct seen {
	uint64_t messages, last_ts;
};

static void on_msg(void *ctx, const uint8_t *msg, size_t len, uint64_t ts_ns)
{
	struct seen *s = ctx;
	CHECK(len <= L7_READER_BUF);
	CHECK(!len || msg);
	CHECK(ts_ns <= s->last_ts);
	s->messages++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_tcp *d = calloc(1, sizeof(*d));
	struct l7_counters cnt = { 0 };
	struct seen s = { 0 };
	uint64_t chunks = 0;

	CHECK(d);
	dns_tcp_init(d);
	while (size >= 3) {
		size_t total = data[0], captured = data[1] % (total + 1);
		bool req = data[2] & 1;
		data += 3, size -= 3;
		if (captured > size)
			captured = size;
		uint8_t *p = malloc(captured ? captured : 1);
		CHECK(p);
		memcpy(p, data, captured);
		s.last_ts = ++chunks;
		dns_tcp_feed(d, req, captured ? p : NULL, captured, total, chunks, &cnt, on_msg, &s);
		free(p);
		data += captured, size -= captured;
	}
	CHECK(cnt.lost <= chunks && cnt.unparseable <= chunks);
	free(d);
	return 0;
}
