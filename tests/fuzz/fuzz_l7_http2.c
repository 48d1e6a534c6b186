/* libFuzzer target for the HTTP/2 parser (src/l7/h2.c, with hpack.c); the input and checks are in fuzz_l7_db.h. */
#include "fuzz_l7_db.h"
#include "l7/h2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fz_l7_db(&l7_proto_http2, data, size);
}
