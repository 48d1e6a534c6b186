/* libFuzzer target for the nats parser (src/l7/); the input and checks are in fuzz_l7_db.h. */
#include "fuzz_l7_db.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fz_l7_db(&l7_proto_nats, data, size);
}
