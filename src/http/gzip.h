/* gzip for HTTP bodies (zlib): whether a client asks for it, and the compression. Pure. */
#ifndef NODESCOPE_HTTP_GZIP_H
#define NODESCOPE_HTTP_GZIP_H

#include <stdbool.h>
#include <stddef.h>

#include "util/strbuf.h"

/*
 * Whether an Accept-Encoding value (NULL: no header) accepts gzip: "gzip"
 * or "x-gzip", or "*" when gzip is not named, with a q-value that is not 0
 * (RFC 9110, 12.5.3).
 */
bool http_accepts_gzip(const char *accept_encoding);

/* in[0..n) as one gzip member appended to out. Returns 0 or -ENOMEM. */
int http_gzip(const void *in, size_t n, struct strbuf *out);

#endif
