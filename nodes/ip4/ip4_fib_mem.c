/* The IPv4 FIB's memory: creating and destroying its tables on the pages
 * ip4_fib_config.mem asks for (2 MB hugetlb, THP-advised, or 4 KB, all
 * faulted in at create so that no add pays for a fault), and the stats of
 * what the table holds and costs. */
#include "nodes/ip4/ip4_fib_private.h"
#include "nodes/fib_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

_Static_assert(IP4_FIB_MEM_4K == (int)FIB_MEM_4K && IP4_FIB_PAGES_HUGETLB == (int)FIB_PAGES_HUGETLB,
	       "ip4_fib enums match fib_mem.h");

#define HUGE_2M (2u << 20)

#define N_TBL8_DEFAULT 65536u
#define N_TBL8_MAX (1u << 24)
#define MAX_ADJ_DEFAULT 4096u
#define MAX_LB_DEFAULT 65536u

void ip4_fib_config_default(struct ip4_fib_config *c)
{
	*c = (struct ip4_fib_config){
		.max_routes = 0,
		.n_tbl8 = N_TBL8_DEFAULT,
		.max_adj = MAX_ADJ_DEFAULT,
		.max_lb = MAX_LB_DEFAULT,
	};
}

/* The tables' pages (nodes/fib_mem.h, shared with the IPv6 FIB, whose
 * enums have the same values). */
static void *map_table(size_t bytes, enum ip4_fib_mem mem, bool try_huge,
		       enum ip4_fib_pages *pages)
{
	enum fib_pages p = FIB_PAGES_4K;
	void *t = fib_map_table(bytes, (enum fib_mem_mode)mem, try_huge, &p);
	*pages = (enum ip4_fib_pages)p;
	return t;
}

const char *ip4_fib_pages_name(enum ip4_fib_pages p)
{
	return fib_pages_name((enum fib_pages)p);
}

/* The groups' mapping: whole 2 MB pages, so hugetlb can hold it. */
static size_t tbl8_bytes(uint32_t n_tbl8)
{
	size_t b = (size_t)n_tbl8 * IP4_FIB_GROUP_BYTES;
	return (b + HUGE_2M - 1) / HUGE_2M * HUGE_2M;
}

struct ip4_fib *ip4_fib_create(const struct ip4_fib_config *c, char *err, size_t err_len)
{
	struct ip4_fib_config def;
	if (!c) {
		ip4_fib_config_default(&def);
		c = &def;
	}
	if (c->n_tbl8 < 1 || c->n_tbl8 > N_TBL8_MAX) {
		snprintf(err, err_len, "ip4 fib: n_tbl8 %u out of range 1..%u", c->n_tbl8, N_TBL8_MAX);
		return NULL;
	}
	if (c->max_adj < 1 || c->max_adj > IP4_FIB_RESULT_LIMIT) {
		snprintf(err, err_len, "ip4 fib: max_adj %u out of range 1..%u", c->max_adj,
			 IP4_FIB_RESULT_LIMIT);
		return NULL;
	}
	if (c->mem > IP4_FIB_MEM_4K) {
		snprintf(err, err_len, "ip4 fib: unknown memory mode %d", (int)c->mem);
		return NULL;
	}
	struct ip4_fib *fib = calloc(1, sizeof(*fib));
	if (!fib)
		goto nomem;
	fib->n_tbl8 = c->n_tbl8;
	fib->max_routes = c->max_routes;
	fib->max_adj = c->max_adj;
	fib->tbl24 = map_table(IP4_FIB_TBL24_BYTES, c->mem, true, &fib->tbl24_pages);
	fib->tbl8 = map_table(tbl8_bytes(c->n_tbl8), c->mem, false, &fib->tbl8_pages);
	fib->n_long = calloc(c->n_tbl8, sizeof(*fib->n_long));
	fib->free_groups = malloc((size_t)c->n_tbl8 * sizeof(uint32_t));
	fib->pending_groups = malloc((size_t)c->n_tbl8 * sizeof(uint32_t));
	fib->adj = calloc(c->max_adj, sizeof(*fib->adj));
	fib->adj_free = malloc((size_t)c->max_adj * sizeof(uint32_t));
	/* calloc of this size maps fresh zero pages: touched only as used. */
	fib->max_lb = c->max_lb ? c->max_lb : MAX_LB_DEFAULT;
	fib->lb = calloc(fib->max_lb, sizeof(*fib->lb));
	fib->lb_ctl = calloc(fib->max_lb, sizeof(*fib->lb_ctl));
	fib->lb_free = malloc((size_t)fib->max_lb * sizeof(uint32_t));
	if (!fib->tbl24 || !fib->tbl8 || !fib->n_long || !fib->free_groups ||
	    !fib->pending_groups || !fib->adj || !fib->adj_free || !fib->lb || !fib->lb_ctl || !fib->lb_free) {
		ip4_fib_destroy(fib);
		goto nomem;
	}
	/* Pop order 0, 1, 2...: low groups first, so the touched part stays dense. */
	for (uint32_t g = 0; g < c->n_tbl8; g++)
		fib->free_groups[g] = c->n_tbl8 - 1 - g;
	fib->n_free = c->n_tbl8;
	fib->adj[IP4_ADJ_INDEX_DROP] = (struct ip4_adj){ .kind = IP4_ADJ_DROP, .n_refs = 1 };
	fib->n_adj = 1;
	fib->adj_hw = 1;
	fib->t.tbl24 = fib->tbl24;
	fib->t.tbl8 = fib->tbl8;
	fib->t.adj = fib->adj;
	fib->t.lb = fib->lb;
	return fib;
nomem:
	snprintf(err, err_len, "ip4 fib: out of memory (tbl24 %zu MB, %u tbl8 groups%s)",
		 IP4_FIB_TBL24_BYTES >> 20, c->n_tbl8,
		 c->mem == IP4_FIB_MEM_HUGETLB ? ", on 2 MB hugepages: are enough reserved?" : "");
	return NULL;
}

void ip4_fib_destroy(struct ip4_fib *fib)
{
	if (!fib)
		return;
	if (fib->tbl24)
		munmap(fib->tbl24, IP4_FIB_TBL24_BYTES);
	if (fib->tbl8)
		munmap(fib->tbl8, tbl8_bytes(fib->n_tbl8));
	ip4_rules_free(fib);
	free(fib->n_long);
	free(fib->free_groups);
	free(fib->pending_groups);
	free(fib->adj);
	free(fib->adj_free);
	free(fib->lb);
	free(fib->lb_ctl);
	free(fib->lb_free);
	free(fib);
}

void ip4_fib_stats(const struct ip4_fib *fib, struct ip4_fib_stats *s)
{
	*s = (struct ip4_fib_stats){
		.n_routes = fib->n_routes,
		.n_tbl8_used = fib->n_tbl8 - fib->n_free - fib->n_pending,
		.n_tbl8_pending = fib->n_pending,
		.n_tbl8 = fib->n_tbl8,
		.n_adj = fib->n_adj,
		.tbl24_hugepages = fib->tbl24_pages == IP4_FIB_PAGES_HUGETLB,
		.tbl24_pages = fib->tbl24_pages,
		.tbl8_pages = fib->tbl8_pages,
	};
	uint64_t bytes = IP4_FIB_TBL24_BYTES + (uint64_t)(fib->n_tbl8 - fib->n_free) * IP4_FIB_GROUP_BYTES;
	for (uint32_t l = 0; l <= 32; l++)
		s->n_routes_by_len[l] = fib->rules[l].n;
	bytes += ip4_rules_bytes(fib);
	bytes += (uint64_t)fib->max_adj * (sizeof(struct ip4_adj) + sizeof(uint32_t));
	bytes += (uint64_t)fib->lb_hw * (sizeof(struct ip4_lb) + sizeof(struct ip4_lb_ctl) + sizeof(uint32_t));
	s->mem_bytes = bytes;
}
