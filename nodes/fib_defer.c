/* Deferred frees (nodes/fib_defer.h). Thread-local: no lock, no atomics. */
#include <stdlib.h>

#include "nodes/fib_defer.h"

static _Thread_local uint32_t depth, pending;
static _Thread_local void *head; /* each block's first word: the next */

void fib_defer_begin(void)
{
	depth++;
}

void fib_free(void *p)
{
	if (!p)
		return;
	if (!depth) {
		free(p);
		return;
	}
	*(void **)p = head;
	head = p;
	pending++;
}

uint32_t fib_defer_end(void)
{
	if (!depth || --depth)
		return 0;
	uint32_t n = pending;
	while (head) {
		void *p = head;
		head = *(void **)p;
		free(p);
	}
	pending = 0;
	return n;
}

uint32_t fib_defer_pending(void)
{
	return pending;
}
