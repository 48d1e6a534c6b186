/*
 * Glob patterns as Coroot's --exclude-http-requests-by-path takes them
 * (gobwas/glob without separators): * any text, '/' too; ? one character;
 * [abc], [a-z], [!a-z] one of a class or not; {a,b*,c} one of the
 * alternatives (nested too); \x the character x itself. Pure.
 */
#ifndef NODESCOPE_UTIL_GLOB_H
#define NODESCOPE_UTIL_GLOB_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Whether pat (len bytes) is well formed: classes and braces closed, no
 * trailing '\', at most 512 bytes and 64 alternatives ("{a,b}{c,d}": 4).
 */
bool glob_valid(const char *pat, size_t len);
/*
 * Whether the whole of s matches the whole of pat (a well-formed one). In
 * time bounded by len(s) times len(pat) per alternative, whatever s holds.
 */
bool glob_match(const char *pat, size_t plen, const char *s, size_t slen);

#endif
