/* The IPv4 FIB: longest-prefix match from a destination address to a 25-bit
 * result, plus the small adjacency table those results usually index.
 *
 * All addresses in this API are in HOST byte order (10.1.0.0 is 0x0a010000);
 * the nodes convert once with ntohl/be32toh.
 *
 * Structure: DIR-24-8. A table of 2^24 32-bit entries indexed by the top 24
 * bits of the address, and groups of 256 entries ("tbl8") for the /25../32
 * routes under one /24. A lookup is one load, two when a tbl8 group is
 * involved. Every entry carries the depth of the route it holds, so an add
 * rewrites only the entries whose current depth is <= the new prefix's and a
 * delete only those holding the deleted route's depth; a per-length hash of
 * the routes finds the covering route a delete falls back to. A tbl8 group
 * whose entries become uniform again is folded back into its tbl24 entry.
 *
 * Results: a route maps to a result < IP4_FIB_RESULT_LIMIT. Where no route
 * matches, a lookup returns IP4_FIB_MISS, which is 0 and also the index of
 * the permanent drop adjacency: nodes that use results as adjacency indices
 * drop unrouted packets without a branch.
 *
 * Thread-safety: lookups (ip4_fib_lookup*, ip4_adj_get) may run on any number
 * of datapath threads at once with no lock, concurrently with ONE updater.
 * An updater writes every table entry with one aligned 32-bit store, so a
 * reader sees the old or the new result, never a torn one, and a new tbl8
 * group is filled before the release store that links it; ip4_fib_lookup
 * reads it by dependency (see IP4_FIB_LOAD24_ORDER). Every other call
 * is a control call: one thread at a time (the main thread, under the graph
 * barrier in sluice).
 *
 * Grace period: a tbl8 group freed by an update may still be read by a lookup
 * that loaded the old tbl24 entry just before. Freed groups therefore wait on
 * a pending list and are reused only after ip4_fib_quiesce(), which the caller
 * makes when every datapath thread has finished every lookup it started before
 * the previous update. Under the graph barrier the workers are parked at a
 * loop boundary, so the rule is: call ip4_fib_quiesce() at the start of each
 * barrier-held update (groups freed in barrier N are reused from barrier N+1).
 */
#ifndef SLUICE_NODES_IP4_FIB_H
#define SLUICE_NODES_IP4_FIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodes/fib_lb.h"

#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

/* ---- adjacencies ---- */

enum ip4_adj_kind {
	IP4_ADJ_DROP = 0, /* discard (index 0 is the permanent drop adjacency) */
	IP4_ADJ_LOCAL,    /* for the router itself (ip4-local) */
	IP4_ADJ_GLEAN,    /* connected subnet on if_index: resolve the packet's own
	                   * destination with ARP */
	IP4_ADJ_REWRITE,  /* via next_hop on if_index; rewrite[] once resolved */
	IP4_ADJ_LB,       /* load balance (ECMP): if_index names an ip4_lb, next_hop
	                   * holds its bucket mask; ip4-lookup picks a bucket */
	IP4_ADJ_BLACKHOLE, /* discard, counted apart from "no route" */
	IP4_ADJ_UNREACH,  /* ICMP destination unreachable, host (code 1) */
	IP4_ADJ_PROHIBIT, /* ICMP communication administratively prohibited (13) */
	IP4_ADJ_N_KIND,
};

#define IP4_ADJ_INDEX_DROP 0u
#define IP4_ADJ_REWRITE_MAX 16 /* an Ethernet header (14) and room for a tag */

/* One adjacency: what the nodes after ip4-lookup need, in half a line.
 * kind, if_index and next_hop are fixed at ip4_adj_add; rewrite_len and
 * rewrite[] belong to the nodes (ARP fills them) and are written under the
 * barrier. */
struct ip4_adj {
	uint8_t kind;        /* enum ip4_adj_kind */
	uint8_t rewrite_len; /* 0: not resolved yet */
	uint16_t mtu;        /* 0: the interface's; the nodes' to use */
	uint32_t if_index;   /* output interface (GLEAN, REWRITE); rx/tx_if space */
	uint32_t next_hop;   /* host order (REWRITE); 0 otherwise */
	uint32_t n_refs;     /* references taken by ip4_adj_add */
	uint8_t rewrite[IP4_ADJ_REWRITE_MAX];
};
_Static_assert(sizeof(struct ip4_adj) == 32, "two adjacencies per cache line");

/* ---- the FIB ---- */

#define IP4_FIB_MISS 0u                   /* no route: == IP4_ADJ_INDEX_DROP */
#define IP4_FIB_RESULT_LIMIT (1u << 25)   /* results are < this */

/* Where the tables (tbl24, 64 MB, and the tbl8 groups) live. (The macro
 * lets bench programs built against older revisions, BEFORE=REV, tell.) */
#define IP4_FIB_HAS_MEM_MODE 1
enum ip4_fib_mem {
	/* tbl24 on 2 MB hugepages when some are free, else THP-advised pages;
	 * the groups THP-advised, reserved but touched only as used. */
	IP4_FIB_MEM_AUTO = 0,
	/* Both on 2 MB hugepages, populated at create; create fails when the
	 * pages are not there. As DPDK's rte_lpm/rte_fib with hugepages. */
	IP4_FIB_MEM_HUGETLB,
	/* Both on 4 KB pages: no MAP_HUGETLB, MADV_NOHUGEPAGE (no THP), then
	 * populated at create. As DPDK's tables under EAL --no-huge. */
	IP4_FIB_MEM_4K,
};

struct ip4_fib_config {
	enum ip4_fib_mem mem; /* default IP4_FIB_MEM_AUTO */
	uint32_t max_routes; /* default 0: bounded only by memory */
	uint32_t n_tbl8;     /* tbl8 groups (1 KB each, reserved not touched);
	                      * default 65536; at most 2^24 */
	uint32_t max_adj;    /* adjacencies; default 4096; at most
	                      * IP4_FIB_RESULT_LIMIT */
	uint32_t max_lb;     /* load-balance objects (256 bytes each, reserved
	                      * not touched); default 65536 */
};

struct ip4_fib;

/* The entries' layout, public only so that the lookups below inline (and
 * ip4-lookup can tell runs of one result from the entries alone: two tbl24
 * entries without EXT give the same result when they agree outside the
 * depth bits). */
#define IP4_FIB_E_EXT (1u << 31)           /* value is a tbl8 group index */
#define IP4_FIB_E_DEPTH_SHIFT 25           /* 6 bits: 0..32 */
#define IP4_FIB_E_DEPTH_MASK (0x3fu << IP4_FIB_E_DEPTH_SHIFT)
#define IP4_FIB_E_VALUE_MASK (IP4_FIB_RESULT_LIMIT - 1)

/* The first member of every struct ip4_fib, so the lookups reach the tables
 * with no call. The pointers are fixed for the FIB's life. */
struct ip4_fib_tables {
	const uint32_t *tbl24;   /* 1 << 24 entries */
	const uint32_t *tbl8;    /* n_tbl8 << 8 entries */
	const struct ip4_adj *adj;
	const struct ip4_lb *lb;
};

void ip4_fib_config_default(struct ip4_fib_config *c);

/* Create an empty FIB (and its adjacency table, holding only the drop
 * adjacency at index 0). Returns NULL with a reason in err on bad config or
 * no memory (or no free hugepages for IP4_FIB_MEM_HUGETLB). The tables' pages
 * follow c->mem; ip4_fib_stats says how each table was mapped. */
struct ip4_fib *ip4_fib_create(const struct ip4_fib_config *c, char *err, size_t err_len);

/* Free everything. The caller ensures no lookup runs. NULL is a no-op. */
void ip4_fib_destroy(struct ip4_fib *fib);

/* Add or replace prefix/len -> result (bits of prefix beyond len are
 * ignored). Returns 0; -EINVAL (len > 32, result >= IP4_FIB_RESULT_LIMIT),
 * -ENOSPC (max_routes reached or no tbl8 group free, see ip4_fib_quiesce),
 * -ENOMEM. On error the FIB is unchanged. Control call. */
int ip4_fib_add(struct ip4_fib *fib, uint32_t prefix, uint8_t len, uint32_t result);

/* Delete prefix/len; addresses it covered fall back to the longest covering
 * route that remains (or to IP4_FIB_MISS). Returns 0, -EINVAL or -ENOENT.
 * Control call. */
int ip4_fib_del(struct ip4_fib *fib, uint32_t prefix, uint8_t len);

/* Fault in, outside the barrier, the table pages an add of prefix/len
 * (host order) may write first (tbl24's, and the groups' next 2 MB), so
 * the add under the barrier pays no page fault. Any control thread, any
 * time, beside lookups and updates; a no-op once they are in. */
void ip4_fib_prefault(struct ip4_fib *fib, uint32_t prefix_h, uint8_t len);

/* Exact match: 0 and *result when prefix/len is a route, else -ENOENT. */
int ip4_fib_get(const struct ip4_fib *fib, uint32_t prefix, uint8_t len, uint32_t *result);

/* Every datapath thread has finished the lookups it began before the last
 * update: tbl8 groups freed since the previous call become reusable. */
void ip4_fib_quiesce(struct ip4_fib *fib);

/* Remove every route (groups go to the pending list, as for deletes). */
void ip4_fib_flush(struct ip4_fib *fib);

struct ip4_route {
	uint32_t prefix; /* host order, masked */
	uint8_t len;
	uint32_t result;
};

/* Visit every route in ascending (prefix, len) order; a non-zero return from
 * fn stops the walk and is returned. -ENOMEM if the sort buffer fails. The
 * FIB must not change during the walk. Control call. */
int ip4_fib_walk(const struct ip4_fib *fib, int (*fn)(const struct ip4_route *r, void *ctx),
		 void *ctx);

/* The routes of one prefix length, unordered, into out (at most max);
 * returns how many there are (max 0: just count). For walks that must not
 * hold the barrier for the whole table: one length per hold (show ip fib).
 * Control call. */
uint32_t ip4_fib_routes_of_len(const struct ip4_fib *fib, uint8_t len, struct ip4_route *out, uint32_t max);

/* How a table was mapped. THP is advice: the kernel may still give 4 KB
 * pages (AnonHugePages in /proc/self/smaps says what it gave). */
enum ip4_fib_pages {
	IP4_FIB_PAGES_4K,      /* 4 KB pages, THP refused (MADV_NOHUGEPAGE) */
	IP4_FIB_PAGES_THP,     /* 4 KB pages with MADV_HUGEPAGE */
	IP4_FIB_PAGES_HUGETLB, /* 2 MB hugetlbfs pages (MAP_HUGETLB) */
};

/* "4 KB", "THP-advised" or "2 MB hugetlb". */
const char *ip4_fib_pages_name(enum ip4_fib_pages p);

struct ip4_fib_stats {
	uint32_t n_routes;
	uint32_t n_routes_by_len[33];
	uint32_t n_tbl8_used;    /* linked in the table */
	uint32_t n_tbl8_pending; /* freed, waiting for ip4_fib_quiesce */
	uint32_t n_tbl8;         /* configured */
	uint32_t n_adj;          /* live adjacencies, drop included */
	bool tbl24_hugepages;    /* tbl24_pages == IP4_FIB_PAGES_HUGETLB */
	enum ip4_fib_pages tbl24_pages, tbl8_pages; /* how each was mapped */
	uint64_t mem_bytes;      /* tbl24 + tbl8 groups used or pending + route
	                          * store + adjacency table */
};

void ip4_fib_stats(const struct ip4_fib *fib, struct ip4_fib_stats *s);

static inline const struct ip4_fib_tables *ip4_fib_tables(const struct ip4_fib *fib)
{
	return (const struct ip4_fib_tables *)(const void *)fib;
}

/* ---- lookups: any thread, no lock ---- */

/* The tbl8 step of a lookup whose tbl24 entry e is a group (EXT). */
static inline uint32_t ip4_fib_tbl8(const struct ip4_fib_tables *t, uint32_t e, uint32_t addr)
{
	return __atomic_load_n(&t->tbl8[((e & IP4_FIB_E_VALUE_MASK) << 8) | (addr & 0xff)], __ATOMIC_RELAXED);
}

/* ip4_fib_lookup's tbl24 load. An acquire load there is free on x86 but is
 * a compiler barrier: a loop of single lookups then reloads the table
 * pointer (and its caller's array pointer) on every address (bench/ip4,
 * callgrind, single pass: 4 loads per lookup where 2 do). An acquire fence
 * on the EXT branch is a barrier too (the loop holds it). So the load is
 * relaxed and what follows it is ordered by dependency, as RCU's
 * rcu_dereference orders it: the tbl8 index and the adjacency index are the
 * loaded value itself, and every CPU the project builds for (x86's load
 * order, Arm's address dependencies) keeps a load after the load its address
 * came from; rte_lpm's lookups rely on the same with plain loads. x4 and
 * bulk load the same way (acquire there cost the x4 loop 0.5 instructions a
 * lookup, callgrind: 8.75 -> 8.25); entry24 keeps acquire, its callers
 * resolve the entry later. TSan checks C11 order, not dependencies: it gets
 * the acquire load. */
#if defined(__SANITIZE_THREAD__)
#define IP4_FIB_LOAD24_ORDER __ATOMIC_ACQUIRE
#else
#define IP4_FIB_LOAD24_ORDER __ATOMIC_RELAXED
#endif

/* Longest-prefix match of one address (host order): the route's result, or
 * IP4_FIB_MISS. */
static inline uint32_t ip4_fib_lookup(const struct ip4_fib *fib, uint32_t addr)
{
	const struct ip4_fib_tables *t = ip4_fib_tables(fib);
	uint32_t e = __atomic_load_n(&t->tbl24[addr >> 8], IP4_FIB_LOAD24_ORDER);
	if (__builtin_expect(e & IP4_FIB_E_EXT, 0))
		e = ip4_fib_tbl8(t, e, addr);
	return e & IP4_FIB_E_VALUE_MASK;
}

/* The tbl24 entry of addr (host order), as ip4_fib_lookup reads it. */
static inline uint32_t ip4_fib_entry24(const struct ip4_fib *fib, uint32_t addr)
{
	return __atomic_load_n(&ip4_fib_tables(fib)->tbl24[addr >> 8], __ATOMIC_ACQUIRE);
}

/* The result of addr (host order) from its tbl24 entry e: e's own value,
 * or the tbl8 entry e leads to (ip4_fib_lookup in two steps). */
static inline uint32_t ip4_fib_entry_result(const struct ip4_fib *fib, uint32_t e, uint32_t addr)
{
	if (__builtin_expect(e & IP4_FIB_E_EXT, 0))
		e = ip4_fib_tbl8(ip4_fib_tables(fib), e, addr);
	return e & IP4_FIB_E_VALUE_MASK;
}

/* Hint the tbl24 entry of addr into cache, e.g. for packets i+4..i+7 while
 * looking up i..i+3. */
static inline void ip4_fib_prefetch(const struct ip4_fib *fib, uint32_t addr)
{
	__builtin_prefetch(&ip4_fib_tables(fib)->tbl24[addr >> 8]);
}

/* The x4 body: four tbl24 loads issued together (the misses overlap), one
 * branch for the four on whether any is a tbl8 group (IP4_FIB_E_EXT: 0.06%
 * of uniformly random addresses at a quarter of bench/ip4's mix), the four
 * in locals: stores through out[] could otherwise alias the table pointer
 * and reload it per address (ip4-lookup, bench/ip4, callgrind: 26.7 -> 22.4
 * instructions per packet from this alone). The tbl24 loads are ordered as
 * ip4_fib_lookup's are (IP4_FIB_LOAD24_ORDER). */
static inline void ip4_fib_x4_(const struct ip4_fib_tables *t, const uint32_t *tbl24,
			       const uint32_t *addrs, uint32_t *out)
{
	uint32_t a0 = addrs[0], a1 = addrs[1], a2 = addrs[2], a3 = addrs[3];
	uint32_t e0 = __atomic_load_n(&tbl24[a0 >> 8], IP4_FIB_LOAD24_ORDER);
	uint32_t e1 = __atomic_load_n(&tbl24[a1 >> 8], IP4_FIB_LOAD24_ORDER);
	uint32_t e2 = __atomic_load_n(&tbl24[a2 >> 8], IP4_FIB_LOAD24_ORDER);
	uint32_t e3 = __atomic_load_n(&tbl24[a3 >> 8], IP4_FIB_LOAD24_ORDER);
	if (__builtin_expect((e0 | e1 | e2 | e3) & IP4_FIB_E_EXT, 0)) {
		if (e0 & IP4_FIB_E_EXT)
			e0 = ip4_fib_tbl8(t, e0, a0);
		if (e1 & IP4_FIB_E_EXT)
			e1 = ip4_fib_tbl8(t, e1, a1);
		if (e2 & IP4_FIB_E_EXT)
			e2 = ip4_fib_tbl8(t, e2, a2);
		if (e3 & IP4_FIB_E_EXT)
			e3 = ip4_fib_tbl8(t, e3, a3);
	}
	out[0] = e0 & IP4_FIB_E_VALUE_MASK;
	out[1] = e1 & IP4_FIB_E_VALUE_MASK;
	out[2] = e2 & IP4_FIB_E_VALUE_MASK;
	out[3] = e3 & IP4_FIB_E_VALUE_MASK;
}

/* Four lookups with their loads issued together (the misses overlap). */
static inline void ip4_fib_lookup_x4(const struct ip4_fib *fib, const uint32_t addrs[4],
				     uint32_t out[4])
{
	const struct ip4_fib_tables *t = ip4_fib_tables(fib);
	ip4_fib_x4_(t, t->tbl24, addrs, out);
}

/* The bulk's body for four addresses: ip4_fib_x4_ with the four in one SSE
 * register where the build has SSE4.1 (every x86 build of the project:
 * corei7 and up). One load for the addresses, one store for the results,
 * one movmskps for the EXT test (EXT is the sign bit): 1.25 loads and 0.25
 * stores a lookup where ip4_fib_x4_ has 2 and 1, so more of a chunk's
 * lookups fit the core's load, store and reorder buffers while their
 * misses are out (our reading; the ticks below are what was measured).
 * bench/ip4's addresses, the whole mix, a second table looked up between
 * passes (out of cache, as beside rte_lpm), ticks paired round by round
 * with the x4 loop's, three runs of 21-41 rounds: prefetch + this
 * 1.03-1.06, prefetch + ip4_fib_x4_ 1.08-1.10, the scalar loop as it was
 * 1.06-1.08, ip4_fib_x4_ without prefetch 1.14-1.16; a fourth run, the box
 * in another state, put prefetch + this and the old loop both at 0.93-0.96. */
#if defined(__SSE4_1__)
static inline void ip4_fib_bulk4_(const struct ip4_fib_tables *t, const uint32_t *tbl24,
				  const uint32_t *addrs, uint32_t *out)
{
	_Static_assert(IP4_FIB_E_EXT == 1u << 31, "movmskps reads EXT as the sign bit");
	__m128i i = _mm_srli_epi32(_mm_loadu_si128((const __m128i *)(const void *)addrs), 8);
	uint32_t i0 = (uint32_t)_mm_cvtsi128_si32(i), i1 = (uint32_t)_mm_extract_epi32(i, 1);
	uint32_t i2 = (uint32_t)_mm_extract_epi32(i, 2), i3 = (uint32_t)_mm_extract_epi32(i, 3);
	__m128i e = _mm_cvtsi32_si128((int)__atomic_load_n(&tbl24[i0], IP4_FIB_LOAD24_ORDER));
	e = _mm_insert_epi32(e, (int)__atomic_load_n(&tbl24[i1], IP4_FIB_LOAD24_ORDER), 1);
	e = _mm_insert_epi32(e, (int)__atomic_load_n(&tbl24[i2], IP4_FIB_LOAD24_ORDER), 2);
	e = _mm_insert_epi32(e, (int)__atomic_load_n(&tbl24[i3], IP4_FIB_LOAD24_ORDER), 3);
	if (__builtin_expect(_mm_movemask_ps(_mm_castsi128_ps(e)), 0)) {
		uint32_t x[4];
		_mm_storeu_si128((__m128i *)(void *)x, e);
		for (int k = 0; k < 4; k++)
			if (x[k] & IP4_FIB_E_EXT)
				x[k] = ip4_fib_tbl8(t, x[k], addrs[k]);
		e = _mm_loadu_si128((const __m128i *)(const void *)x);
	}
	_mm_storeu_si128((__m128i *)(void *)out, _mm_and_si128(e, _mm_set1_epi32(IP4_FIB_E_VALUE_MASK)));
}
#else
#define ip4_fib_bulk4_ ip4_fib_x4_
#endif

/* ip4_fib_lookup_bulk's stride: the tbl24 lines of this many addresses are
 * prefetched before the first of them is looked up. */
#define IP4_FIB_BULK_CHUNK 32

/* n lookups, for batches that are not already pipelined by a node's own
 * loop: a whole chunk's tbl24 lines prefetched (four a turn; a prefetch
 * retires before its line comes, so the chunk's misses start together),
 * then the chunk looked up four at a time (ip4_fib_bulk4_); the last n % 32
 * the same, with a scalar tail of n % 4. Inline, as rte_lpm_lookup_bulk is.
 * A lookup is one random tbl24 line (64 MB): its ticks are the memory
 * system's (~22 a lookup for independent random loads on the 2-vCPU bench
 * box), and what the lookup adds on top bounds how many misses stay in
 * flight. callgrind (bench/ip4's loop, the caller's sum included,
 * -march=corei7): 12.8 instructions a lookup (the call alone 10.1), from
 * 20.0 (18.5) as a prefetch pass then scalar lookups, one branch, bounds
 * step and store each. Whole mix, one process beside rte_lpm, 9 interleaved
 * rounds (docs/benchmarks.md): 25.1 ticks, the scalar loop 26.4,
 * rte_lpm_lookup_bulk 30.6. */
static inline void ip4_fib_lookup_bulk(const struct ip4_fib *fib, const uint32_t *addrs,
				       uint32_t *out, uint32_t n)
{
	const struct ip4_fib_tables *t = ip4_fib_tables(fib);
	const uint32_t *tbl24 = t->tbl24;
	for (; n >= IP4_FIB_BULK_CHUNK; n -= IP4_FIB_BULK_CHUNK) {
		for (uint32_t i = 0; i < IP4_FIB_BULK_CHUNK; i += 4) {
			__builtin_prefetch(&tbl24[addrs[i] >> 8]);
			__builtin_prefetch(&tbl24[addrs[i + 1] >> 8]);
			__builtin_prefetch(&tbl24[addrs[i + 2] >> 8]);
			__builtin_prefetch(&tbl24[addrs[i + 3] >> 8]);
		}
		for (uint32_t i = 0; i < IP4_FIB_BULK_CHUNK; i += 4)
			ip4_fib_bulk4_(t, tbl24, addrs + i, out + i);
		addrs += IP4_FIB_BULK_CHUNK;
		out += IP4_FIB_BULK_CHUNK;
	}
	for (uint32_t i = 0; i < n; i++)
		__builtin_prefetch(&tbl24[addrs[i] >> 8]);
	for (; n >= 4; n -= 4, addrs += 4, out += 4)
		ip4_fib_bulk4_(t, tbl24, addrs, out);
	for (uint32_t i = 0; i < n; i++)
		out[i] = ip4_fib_lookup(fib, addrs[i]);
}

/* ---- the adjacency table (indices are stable; storage never moves) ---- */

/* Find the adjacency (kind, if_index, next_hop) or make it; either way take a
 * reference. DROP always returns IP4_ADJ_INDEX_DROP. Returns the index (>= 0)
 * or -ENOSPC / -EINVAL. Control call. */
int ip4_adj_add(struct ip4_fib *fib, enum ip4_adj_kind kind, uint32_t if_index,
		uint32_t next_hop);

/* Drop a reference; at zero the index is freed for reuse (the caller removed
 * the routes that used it). Returns 0, or -EINVAL for a free index. The drop
 * adjacency is never freed. Control call. */
int ip4_adj_release(struct ip4_fib *fib, uint32_t adj_index);

/* Set the rewrite bytes (len <= IP4_ADJ_REWRITE_MAX; 0 unresolves). Returns
 * 0 or -EINVAL. Control call (under the barrier: readers may copy it). */
int ip4_adj_set_rewrite(struct ip4_fib *fib, uint32_t adj_index, const uint8_t *rewrite,
			uint8_t len);

/* The adjacency at index (no check: indices come from the FIB). Any thread. */
static inline const struct ip4_adj *ip4_adj_get(const struct ip4_fib *fib, uint32_t adj_index)
{
	return &ip4_fib_tables(fib)->adj[adj_index];
}

/* Visit every live adjacency in index order; a non-zero return stops. */
int ip4_adj_walk(const struct ip4_fib *fib,
		 int (*fn)(uint32_t adj_index, const struct ip4_adj *a, void *ctx), void *ctx);

/* "drop", "local", "glean", "rewrite", "multipath", "blackhole",
 * "unreachable", "prohibit". */
const char *ip4_adj_kind_name(uint8_t kind);

/* ---- load balance: equal-cost (and weighted) multipath ----
 *
 * A route with several paths points at an IP4_ADJ_LB adjacency, which
 * names a table of 16, 32 or 64 buckets (a power of two, as VPP's
 * load_balance_t), each holding one path's adjacency. Each path gets a
 * share of the buckets in proportion to its weight: the table is the
 * smallest of those sizes that represents the weights exactly, else 64 with
 * the largest-remainder rounding (every path at least one bucket). A packet
 * takes bucket (flow hash & mask) (ip4_flow_hash in ip4.h), so one flow
 * stays on one path. An update keeps every bucket whose path stays and is
 * within its new share: removing a path moves only its own flows, and the
 * table never shrinks during the object's life (a flow's bucket stays its
 * bucket).
 *
 * Updates are control calls (barrier held); buckets are written with
 * aligned 32-bit stores, a growing table's new half before its mask, so a
 * lookup racing an update sees the old path or the new one. */
#define IP4_LB_MAX_PATHS FIB_LB_MAX_PATHS
#define IP4_LB_MIN_BUCKETS FIB_LB_MIN_BUCKETS
#define IP4_LB_MAX_BUCKETS FIB_LB_MAX_BUCKETS

struct ip4_lb {
	uint32_t buckets[IP4_LB_MAX_BUCKETS]; /* adjacency indices */
};

/* A path: a REWRITE or GLEAN adjacency and its weight (nodes/fib_lb.h's,
 * the buckets' code both families share). */
#define ip4_lb_path fib_lb_path

/* A load balance over n (2..IP4_LB_MAX_PATHS) paths; it takes over the
 * caller's reference on each path's adjacency (released with it). Returns
 * the LB adjacency's index or -EINVAL / -ENOSPC (the caller keeps its
 * references then). Control call. */
int ip4_lb_create(struct ip4_fib *fib, const struct ip4_lb_path *paths, uint32_t n);

/* Replace lb_adj's paths (same rules; references taken over, the old ones
 * released), keeping the buckets of paths that stay. 0 or -EINVAL. */
int ip4_lb_update(struct ip4_fib *fib, uint32_t lb_adj, const struct ip4_lb_path *paths, uint32_t n);

/* lb_adj's paths (at most max into out); how many, 0 when not an LB. */
uint32_t ip4_lb_paths(const struct ip4_fib *fib, uint32_t lb_adj, struct ip4_lb_path *out, uint32_t max);

/* The bucket table of LB adjacency a. Any thread. */
static inline const struct ip4_lb *ip4_lb_of(const struct ip4_fib *fib, const struct ip4_adj *a)
{
	return &ip4_fib_tables(fib)->lb[a->if_index];
}

/* The adjacency a flow of hash h takes through LB adjacency a. Any thread. */
static inline uint32_t ip4_lb_pick(const struct ip4_fib *fib, const struct ip4_adj *a, uint32_t h)
{
	uint32_t mask = __atomic_load_n(&a->next_hop, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&ip4_lb_of(fib, a)->buckets[h & mask], __ATOMIC_RELAXED);
}

#endif
