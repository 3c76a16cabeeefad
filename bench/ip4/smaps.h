/* Which pages the kernel gave a mapping: the /proc/self/smaps fields of the
 * mapping holding an address. bench/ip4 reports every table's pages with it
 * (fibbench.h, for sluice and the DPDK peer alike) and tests/nodes checks the
 * FIB's memory modes with it. Header-only, plain C. */
#ifndef SLUICE_BENCH_IP4_SMAPS_H
#define SLUICE_BENCH_IP4_SMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* kB, as smaps gives them; name: the mapping's path or [tag], "" for none. */
struct smaps_kb {
	long size, kernel_page, rss, anon_huge, shmem_pmd;
	char name[128];
};

/* Fill *m for the mapping holding addr; false when none holds it or smaps
 * cannot be read. */
static inline bool smaps_of(const void *addr, struct smaps_kb *m)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false, found = false;
	*m = (struct smaps_kb){ 0 };
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char c;
		/* a mapping's first line ("lo-hi perms ..."): no field parses so */
		if (sscanf(line, "%lx-%lx %c", &lo, &hi, &c) == 3) {
			if (in)
				break;
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
			found |= in;
			if (in && sscanf(line, "%*s %*s %*s %*s %*s %127s", m->name) != 1)
				m->name[0] = 0;
			continue;
		}
		if (!in)
			continue;
		sscanf(line, "Size: %ld", &m->size);
		sscanf(line, "KernelPageSize: %ld", &m->kernel_page);
		sscanf(line, "Rss: %ld", &m->rss);
		sscanf(line, "AnonHugePages: %ld", &m->anon_huge);
		sscanf(line, "ShmemPmdMapped: %ld", &m->shmem_pmd);
	}
	fclose(f);
	return found;
}

#endif
