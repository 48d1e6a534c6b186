#include "gzip.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* The q-value of one element's parameters (";q=0.5"): 1 when absent, 0 when unreadable as more. */
static double qvalue(const char *p, size_t n)
{
	while (n) {
		size_t k = strcspn(p, ";");
		if (k > n)
			k = n;
		const char *q = p;
		size_t m = k;
		while (m && (*q == ' ' || *q == '\t'))
			q++, m--;
		if (m >= 2 && (q[0] == 'q' || q[0] == 'Q') && q[1] == '=') {
			char v[8] = { 0 };
			memcpy(v, q + 2, m - 2 < sizeof(v) - 1 ? m - 2 : sizeof(v) - 1);
			return strtod(v, NULL);
		}
		p += k;
		n -= k;
		if (n)
			p++, n--;
	}
	return 1;
}

bool http_accepts_gzip(const char *h)
{
	double gzip = -1, star = -1;

	if (!h)
		return false;
	for (const char *p = h; *p;) {
		size_t n = strcspn(p, ",");
		const char *t = p;
		size_t m = n;
		while (m && (*t == ' ' || *t == '\t'))
			t++, m--;
		size_t name = 0;
		while (name < m && t[name] != ';' && t[name] != ' ' && t[name] != '\t')
			name++;
		const char *params = t + name;
		size_t plen = m - name;
		while (plen && *params != ';')
			params++, plen--;
		if (plen)
			params++, plen--;
		if ((name == 4 && !strncasecmp(t, "gzip", 4)) || (name == 6 && !strncasecmp(t, "x-gzip", 6)))
			gzip = qvalue(params, plen);
		else if (name == 1 && *t == '*')
			star = qvalue(params, plen);
		p += n;
		if (*p)
			p++;
	}
	return gzip >= 0 ? gzip > 0 : star > 0;
}

int http_gzip(const void *in, size_t n, struct strbuf *out)
{
	z_stream z = { 0 };
	/* 15 + 16: a gzip header and trailer around the deflate stream. Level 6: zlib's default. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	uLong bound = deflateBound(&z, (uLong)n);
	char *buf = malloc(bound);
	if (!buf) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)buf;
	z.avail_out = (uInt)bound;
	int rc = deflate(&z, Z_FINISH); /* the bound is enough for one call */
	size_t len = bound - z.avail_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		return -ENOMEM;
	}
	strbuf_append(out, buf, len);
	free(buf);
	return out->oom ? -ENOMEM : 0;
}
