/* What every harness in tests/fuzz provides: libFuzzer's two entry points,
 * and a check the seed runner (seed_main.c, the plain build) calls after
 * feeding every seed, which says whether the seeds reached what they must
 * (0) or not (1, with the reason printed). */
#ifndef SLUICE_TESTS_FUZZ_FUZZ_H
#define SLUICE_TESTS_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int fuzz_seed_check(void);

/* For harnesses without a graph (fuzz_pool.c): a pool of n_buffers small
 * buffers on 4 KB pages, or abort with the reason. */
void fuzz_pool_init(const char *harness, uint32_t n_buffers);

#endif
