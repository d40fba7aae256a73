/*
 * fuzz_one.c - the libFuzzer harness of one parser, chosen at compile time
 * (-DFZ_TARGET=FZ_KINETO, ...; see tests/fuzz/fuzz.cmake).  The work is in
 * fuzz_targets.h, shared with the replay test tests/unit/test_regress.c.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_targets.h"

#ifndef FZ_TARGET
#error "build with -DFZ_TARGET=FZ_<NAME>"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

FZ_DEFINE_INITIALIZE

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cvc_status st = fz_run(FZ_TARGET, data, size);

	if (!fz_check(st)) {
		fprintf(stderr, "fuzz: %s: status %d (%s) with message '%s'\n",
			fz_target_name(FZ_TARGET), (int)st, cvc_strerror(st), fz_state()->msg);
		abort();
	}
	return 0;
}
