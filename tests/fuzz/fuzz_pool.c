/* The buffer pool of the harnesses that need buffers but no graph. */
#include <stdio.h>
#include <stdlib.h>

#include "graph/buffer.h"
#include "tests/fuzz/fuzz.h"

void fuzz_pool_init(const char *harness, uint32_t n_buffers)
{
	struct buffer_config bc;
	char err[256];
	buffer_config_default(&bc);
	bc.buffers_per_numa = n_buffers;
	bc.page_size = 4096;
	if (buffer_main_init(&bc, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", harness, err);
		abort();
	}
}
