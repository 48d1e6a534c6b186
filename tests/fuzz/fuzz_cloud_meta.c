/*
 * libFuzzer target for the cloud metadata answers (src/node/cloud_meta.c):
 * the first byte picks one request of one provider's row, the rest is its
 * answer's body, copied into a buffer of its exact size (no NUL after it),
 * so a read past the body is caught. Besides crashes it checks that what
 * an accepted answer gives, and what is derived from it, is printable
 * ASCII that fits its label, and that a refused one is -EINVAL.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node/cloud_meta.h"

#include "fuzz_check.h"

static const char *const providers[] = { "AWS",	    "GCP",	"Azure",  "Hetzner", "DigitalOcean",
					 "Alibaba", "Scaleway", "Oracle", "IBM" };

static void check_value(const char *v, size_t size)
{
	size_t len = strnlen(v, size);
	CHECK(len < size);
	for (size_t i = 0; i < len; i++)
		CHECK(v[i] >= 0x20 && v[i] < 0x7f);
}

static void check_all(const struct cloud_answers *a)
{
	for (int l = 0; l < NODE_CLOUD_LABELS; l++)
		check_value(a->cloud.v[l], sizeof(a->cloud.v[l]));
	check_value(a->token, sizeof(a->token));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct cloud_request *all[64];
	const struct cloud_provider *of[64];
	size_t n = 0;

	if (!size)
		return 0;
	for (size_t p = 0; p < sizeof(providers) / sizeof(providers[0]); p++) {
		const struct cloud_provider *row = cloud_provider_find(providers[p]);
		CHECK(row);
		for (int i = 0; i < CLOUD_MAX_REQUESTS && row->requests[i].path && n < 64; i++) {
			of[n] = row;
			all[n++] = &row->requests[i];
		}
	}
	size_t pick = data[0] % n;
	char *body = malloc(size - 1 ? size - 1 : 1);
	CHECK(body);
	memcpy(body, data + 1, size - 1);

	static struct cloud_answers a;
	memset(&a, 0, sizeof(a));
	int rc = cloud_parse(all[pick], body, size - 1, &a);
	CHECK(rc == 0 || rc == -EINVAL);
	check_all(&a);
	cloud_derive(of[pick], &a.cloud);
	check_all(&a);
	free(body);
	return 0;
}
