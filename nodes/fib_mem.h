/* The pages a FIB's lookup tables live on, shared by the IPv4 and IPv6
 * FIBs (nodes/ip4/ip4_fib_mem.c, nodes/ip6/ip6_fib_mem.c): 2 MB hugetlb,
 * THP-advised or 4 KB, faulted in at create in the two fixed modes so that
 * no update pays for a fault (DPDK's rte_lpm/rte_fib tables are zeroed at
 * create too). Control side only. */
#ifndef SLUICE_NODES_FIB_MEM_H
#define SLUICE_NODES_FIB_MEM_H

#include <stdbool.h>
#include <stddef.h>

/* The same values as enum ip4_fib_mem / ip6_fib_mem. */
enum fib_mem_mode {
	FIB_MEM_AUTO = 0, /* hugetlb if try_huge and pages are free, else THP */
	FIB_MEM_HUGETLB,  /* 2 MB hugetlb, populated; fails without pages */
	FIB_MEM_4K,       /* 4 KB, no THP, populated */
};

/* The same values as enum ip4_fib_pages / ip6_fib_pages. */
enum fib_pages {
	FIB_PAGES_4K,
	FIB_PAGES_THP,
	FIB_PAGES_HUGETLB,
};

/* bytes (a multiple of 2 MB) of zeroed table on the pages mem asks for, or
 * NULL; *pages says what was mapped. Free with munmap. */
void *fib_map_table(size_t bytes, enum fib_mem_mode mem, bool try_huge, enum fib_pages *pages);

/* "4 KB", "THP-advised" or "2 MB hugetlb". */
const char *fib_pages_name(enum fib_pages p);

#endif
