/* The IPv6 FIB's memory: its tables on the pages ip6_fib_config.mem asks for
 * (nodes/fib_mem.h), the control-side depth arrays, and the stats of what
 * the table holds and costs. */
#include "nodes/ip6/ip6_fib_private.h"
#include "nodes/fib_mem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

_Static_assert(IP6_FIB_MEM_4K == (int)FIB_MEM_4K && IP6_FIB_PAGES_HUGETLB == (int)FIB_PAGES_HUGETLB,
	       "ip6_fib enums match fib_mem.h");

#define HUGE_2M (2u << 20)
#define N_GROUPS_DEFAULT 65536u
#define N_GROUPS_MAX IP6_FIB_GROUPS_MAX /* EXT entries hold index << 8 */


/* The enums share fib_mem.h's values. */
static void *map_table(size_t bytes, enum ip6_fib_mem mem, bool try_huge,
		       enum ip6_fib_pages *pages)
{
	enum fib_pages p = FIB_PAGES_4K;
	void *t = fib_map_table(bytes, (enum fib_mem_mode)mem, try_huge, &p);
	*pages = (enum ip6_fib_pages)p;
	return t;
}

const char *ip6_fib_pages_name(enum ip6_fib_pages p)
{
	return fib_pages_name((enum fib_pages)p);
}

static size_t groups_bytes(uint32_t n_groups)
{
	size_t b = (size_t)n_groups * IP6_FIB_GROUP_BYTES;
	return (b + HUGE_2M - 1) / HUGE_2M * HUGE_2M;
}

static const char *config_error(const struct ip6_fib_config *c)
{
	if (c->n_groups < 1 || c->n_groups > N_GROUPS_MAX)
		return "n_groups out of range 1..8388608";
	if (c->mem > IP6_FIB_MEM_4K)
		return "unknown memory mode";
	return NULL;
}

/* What ip6_fib_config_default gives (ip6_fib_config_set_default). */
static struct ip6_fib_config config_default = { .n_groups = N_GROUPS_DEFAULT };

void ip6_fib_config_default(struct ip6_fib_config *c)
{
	*c = config_default;
}

int ip6_fib_config_set_default(const struct ip6_fib_config *c, char *err, size_t err_len)
{
	const char *bad = config_error(c);
	if (bad) {
		snprintf(err, err_len, "ip6 fib: %s", bad);
		return -EINVAL;
	}
	config_default = *c;
	return 0;
}

struct ip6_fib *ip6_fib_create(const struct ip6_fib_config *c, char *err, size_t err_len)
{
	struct ip6_fib_config def;
	if (!c) {
		ip6_fib_config_default(&def);
		c = &def;
	}
	const char *bad = config_error(c);
	if (bad) {
		snprintf(err, err_len, "ip6 fib: %s", bad);
		return NULL;
	}
	struct ip6_fib *fib = calloc(1, sizeof(*fib));
	if (!fib)
		goto nomem;
	fib->n_groups = c->n_groups;
	fib->max_routes = c->max_routes;
	fib->tbl24 = map_table(IP6_FIB_TBL24_BYTES, c->mem, true, &fib->tbl24_pages);
	fib->groups = map_table(groups_bytes(c->n_groups), c->mem, false, &fib->groups_pages);
	fib->depth24 = calloc(IP6_FIB_TBL24_ENTRIES, 1);
	fib->depth_groups = calloc((size_t)c->n_groups * IP6_FIB_GROUP_ENTRIES, 1);
	fib->n_long = calloc(c->n_groups, sizeof(*fib->n_long));
	fib->level = calloc(c->n_groups, 1);
	fib->free_groups = malloc((size_t)c->n_groups * sizeof(uint32_t));
	fib->pending_groups = malloc((size_t)c->n_groups * sizeof(uint32_t));
	if (!fib->tbl24 || !fib->groups || !fib->depth24 || !fib->depth_groups || !fib->n_long || !fib->level ||
	    !fib->free_groups || !fib->pending_groups) {
		ip6_fib_destroy(fib);
		goto nomem;
	}
	/* Pop order 0, 1, 2...: low groups first, the touched part stays dense. */
	for (uint32_t g = 0; g < c->n_groups; g++)
		fib->free_groups[g] = c->n_groups - 1 - g;
	fib->n_free = c->n_groups;
	fib->t.tbl24 = fib->tbl24;
	fib->t.groups = fib->groups;
	fib->t.groups_ext = (uintptr_t)fib->groups - (uintptr_t)IP6_FIB_E_EXT * sizeof(uint32_t);
	return fib;
nomem:
	snprintf(err, err_len, "ip6 fib: out of memory (tbl24 %zu MB, %u groups of 1 KB%s)",
		 IP6_FIB_TBL24_BYTES >> 20, c->n_groups,
		 c->mem == IP6_FIB_MEM_HUGETLB ? ", on 2 MB hugepages: are enough reserved?" : "");
	return NULL;
}

void ip6_fib_destroy(struct ip6_fib *fib)
{
	if (!fib)
		return;
	if (fib->tbl24)
		munmap(fib->tbl24, IP6_FIB_TBL24_BYTES);
	if (fib->groups)
		munmap(fib->groups, groups_bytes(fib->n_groups));
	ip6_rules_free(fib);
	free(fib->depth24);
	free(fib->depth_groups);
	free(fib->n_long);
	free(fib->level);
	free(fib->free_groups);
	free(fib->pending_groups);
	free(fib);
}

void ip6_fib_stats(const struct ip6_fib *fib, struct ip6_fib_stats *s)
{
	*s = (struct ip6_fib_stats){
		.n_routes = fib->n_routes,
		.n_groups_used = fib->n_groups - fib->n_free - fib->n_pending,
		.n_groups_pending = fib->n_pending,
		.n_groups = fib->n_groups,
		.tbl24_pages = fib->tbl24_pages,
		.groups_pages = fib->groups_pages,
	};
	for (unsigned l = 1; l < IP6_FIB_LEVELS; l++)
		s->n_groups_by_level[l] = fib->n_by_level[l];
	/* A group costs its entries, their depths, its n_long and level. */
	uint64_t per_group = IP6_FIB_GROUP_BYTES + IP6_FIB_GROUP_ENTRIES + sizeof(uint16_t) + 1;
	uint64_t bytes = IP6_FIB_TBL24_BYTES + IP6_FIB_TBL24_ENTRIES +
			 (uint64_t)(fib->n_groups - fib->n_free) * per_group;
	for (uint32_t l = 0; l <= 128; l++) {
		const struct ip6_rule_table *rt = &fib->rules[l];
		s->n_routes_by_len[l] = rt->n;
		if (rt->slots)
			bytes += (uint64_t)(rt->mask + 1) * sizeof(struct ip6_rule_slot);
	}
	s->mem_bytes = bytes;
}
