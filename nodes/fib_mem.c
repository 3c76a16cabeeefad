/* The pages a FIB's tables live on: see fib_mem.h. */
#include "nodes/fib_mem.h"

#include <stdint.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Fault every page in now, writable (DPDK's tables are zeroed at create
 * too); after the madvise that chose the page size. */
static void populate(void *p, size_t bytes)
{
	if (madvise(p, bytes, MADV_POPULATE_WRITE) == 0)
		return;
	for (size_t o = 0; o < bytes; o += 4096) /* kernels before 5.14 */
		((volatile uint8_t *)p)[o] = 0;
}

void *fib_map_table(size_t bytes, enum fib_mem_mode mem, bool try_huge, enum fib_pages *pages)
{
	const int anon = MAP_PRIVATE | MAP_ANONYMOUS;
	void *p;
	if (mem == FIB_MEM_HUGETLB || (mem == FIB_MEM_AUTO && try_huge)) {
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, anon | MAP_HUGETLB | MAP_POPULATE, -1, 0);
		*pages = FIB_PAGES_HUGETLB;
		if (p != MAP_FAILED || mem == FIB_MEM_HUGETLB)
			return p == MAP_FAILED ? NULL : p;
	}
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, anon | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (mem == FIB_MEM_4K) {
		madvise(p, bytes, MADV_NOHUGEPAGE); /* EINVAL without THP: 4 KB anyway */
		populate(p, bytes);
		*pages = FIB_PAGES_4K;
	} else {
		madvise(p, bytes, MADV_HUGEPAGE); /* advice only */
		*pages = FIB_PAGES_THP;
	}
	return p;
}

const char *fib_pages_name(enum fib_pages p)
{
	return p == FIB_PAGES_HUGETLB ? "2 MB hugetlb" : p == FIB_PAGES_THP ? "THP-advised" : "4 KB";
}

