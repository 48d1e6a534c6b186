/* What every fuzz target asserts with: a failed check aborts, so libFuzzer keeps the input. */
#ifndef NODESCOPE_FUZZ_CHECK_H
#define NODESCOPE_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                    \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                \
			abort();                                                       \
		}                                                                      \
	} while (0)

#endif
