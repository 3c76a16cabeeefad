/* Runs N packets through source -> classify -> sinks | error-drop on one
 * thread and prints how many allocator calls the whole process made. The
 * allocator is interposed here; test_noalloc.sh compares N = 1M with 2M (and
 * strace's system call counts likewise): per-packet work must add none. */
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "tests/graph/test_nodes.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static atomic_ulong n_alloc_calls;

void *malloc(size_t n)
{
	n_alloc_calls++;
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	n_alloc_calls++;
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	n_alloc_calls++;
	return __libc_realloc(p, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	n_alloc_calls++;
	return __libc_memalign(align, n);
}

int posix_memalign(void **p, size_t align, size_t n)
{
	n_alloc_calls++;
	*p = __libc_memalign(align, n);
	return *p ? 0 : 12;
}

void free(void *p)
{
	if (p)
		n_alloc_calls++;
	__libc_free(p);
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000000;
	char err[256];
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 4096;
	bc.page_size = 4096;
	if (buffer_main_init(&bc, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	tn_source.burst = FRAME_SIZE;
	tn_source.budget[0] = n;
	const struct node_reg *regs[] = { node_registry_find("error-drop"), &tn_source_node, &tn_classify_node,
					  &tn_forward_node, &tn_sink_a_node, &tn_sink_b_node, &tn_sink_c_node };
	struct graph *g = graph_create(NULL, err, sizeof(err));
	for (uint32_t i = 0; i < ARRAY_LEN(regs); i++)
		graph_add_node(g, regs[i], err, sizeof(err));
	if (!g || graph_build(g, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	unsigned long before = n_alloc_calls;
	while (tn_source.produced[0] < n)
		graph_main_poll(g);
	unsigned long during = n_alloc_calls - before;
	uint64_t dropped = graph_node_error_count(g, (uint32_t)graph_node_index(g, "tn-classify"), 0);
	graph_destroy(g);
	buffer_main_free();
	printf("packets=%llu dropped=%llu allocs_during_run=%lu allocs_total=%lu\n", (unsigned long long)n,
	       (unsigned long long)dropped, during, (unsigned long)n_alloc_calls);
	return 0;
}
