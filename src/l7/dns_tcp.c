/* DNS over TCP framing. See dns_tcp.h. */
#include "dns_tcp.h"

#include <string.h>

bool dns_tcp_feed(struct dns_tcp_dir *d, const uint8_t *data, size_t captured, size_t total,
		  uint64_t ts_ns, dns_tcp_msg_fn fn, void *ctx)
{
	size_t at = 0;

	if (captured > total)
		captured = total;
	while (!d->lost && at < total) {
		if (!d->in_msg) {
			if (at >= captured) {
				d->lost = true; /* a prefix among the bytes not copied */
				break;
			}
			d->len_buf[d->len_have++] = data[at++];
			if (d->len_have < 2)
				continue;
			d->len_have = 0;
			d->need = (uint32_t)d->len_buf[0] << 8 | d->len_buf[1];
			d->got = 0;
			d->in_msg = d->need > 0;
			d->keep = d->need <= DNS_TCP_MSG_MAX;
			d->ts_ns = ts_ns;
			continue;
		}
		size_t n = d->need - d->got;
		if (n > total - at)
			n = total - at;
		if (d->keep) {
			if (at + n > captured)
				d->keep = false; /* part of it was not copied */
			else
				memcpy(d->buf + d->got, data + at, n);
		}
		d->got += (uint32_t)n;
		at += n;
		if (d->got < d->need)
			break;
		d->in_msg = false;
		if (d->keep)
			fn(ctx, d->buf, d->need, d->ts_ns);
		else
			d->truncated++;
	}
	return !d->lost;
}
