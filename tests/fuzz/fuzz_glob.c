/*
 * libFuzzer target for src/util/glob.c (Coroot's --exclude-http-requests-by-path,
 * matched against paths from the network) and the duration form of src/cli_value.c.
 *
 * Input: byte 0 = the pattern's length (the rest is the path), byte 1 bit 0:
 * also parse the whole input after byte 1 as a duration. Checks, besides "no
 * crash, no read past either buffer" (both are copied into buffers of exactly
 * their length):
 *  - a valid pattern matches itself read literally when it has no special byte;
 *  - "*" + pattern + "*" matches whenever the pattern does;
 *  - a duration that parses is at most 292 years of nanoseconds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/glob.h"

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t plen = data[0];
	bool duration = data[1] & 1;
	data += 2, size -= 2;
	if (plen > size)
		plen = size;
	char *pat = malloc(plen ? plen : 1), *path = malloc(size - plen ? size - plen : 1);
	memcpy(pat, data, plen);
	memcpy(path, data + plen, size - plen);
	size_t slen = size - plen;

	if (glob_valid(pat, plen)) {
		bool m = glob_match(pat, plen, path, slen);
		if (!memchr(pat, '*', plen) && !memchr(pat, '?', plen) && !memchr(pat, '[', plen) &&
		    !memchr(pat, '{', plen) && !memchr(pat, '\\', plen))
			CHECK(glob_match(pat, plen, pat, plen));
		if (m && plen + 2 <= 512) {
			char *wide = malloc(plen + 2);
			wide[0] = '*';
			memcpy(wide + 1, pat, plen);
			wide[plen + 1] = '*';
			CHECK(glob_valid(wide, plen + 2));
			CHECK(glob_match(wide, plen + 2, path, slen));
			free(wide);
		}
	}
	if (duration) {
		char *text = malloc(size + 1);
		memcpy(text, data, size);
		text[size] = '\0';
		unsigned long long ns;
		if (!cli_parse_duration(text, &ns))
			CHECK(ns <= (unsigned long long)INT64_MAX);
		free(text);
	}
	free(pat);
	free(path);
	return 0;
}
