/* The IPv6 FIB: longest-prefix match from a 128-bit destination address to
 * a 25-bit result.
 *
 * Addresses are struct in6_addr (network byte order, as in the packet).
 *
 * Structure: a multibit trie with a 24-bit first stride and thirteen 8-bit
 * strides (24 + 8 x 13 = 128), the layout of DPDK's rte_fib6 "trie". A table
 * of 2^24 32-bit entries indexed by the address's first 24 bits, then groups
 * of 256 entries, each indexed by the next byte. An entry is a result (a
 * leaf) or, with IP6_FIB_E_EXT, the offset of the group for the next byte
 * (its index times 256: the entry for byte b is at offset e | b). A lookup
 * is one load per stride down to the first leaf: one for a miss or a route
 * of /24 or shorter, four for a /48 (24, 32, 40, 48); a stride below tbl24
 * costs five instructions (the byte, an or, the load, a test and branch).
 *
 * Updates follow the IPv4 FIB (ip4_fib.h): every entry has a depth, the
 * length of the route it holds, kept in a control-side array the lookups
 * never read; an add rewrites only the entries of its range whose depth is
 * <= its own, a delete only those of its own depth (with the longest
 * covering route that remains, found in a per-length hash of the routes).
 * An entry that leads to a group carries the depth of the route the group's
 * inherited entries hold, so a short route's update descends only into the
 * groups it changes. A group with no route longer than its parent slot and
 * no group under it is uniform again and folds back into its parent slot,
 * upwards as far as that goes. See docs/architecture.md (the IPv6 FIB) for
 * why this layout and what it costs at 1M routes.
 *
 * Results: a route maps to a result < IP6_FIB_RESULT_LIMIT; where none
 * matches a lookup returns IP6_FIB_MISS (0). These are the IPv4 FIB's
 * conventions (IP4_FIB_MISS is its drop adjacency), so the same adjacency or
 * load-balance indices serve both families.
 *
 * Thread-safety, as the IPv4 FIB: lookups may run on any number of threads
 * with no lock, concurrently with ONE updater. Every entry changes with one
 * aligned 32-bit store; a new group is filled before the release store that
 * links it. Groups freed by an update wait on a pending list until
 * ip6_fib_quiesce(), which the caller makes when every datapath thread has
 * finished every lookup it started before the previous update (under the
 * graph barrier: call it at the start of each barrier-held update). Every
 * other call is a control call, one thread at a time.
 */
#ifndef SLUICE_NODES_IP6_FIB_H
#define SLUICE_NODES_IP6_FIB_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#define IP6_FIB_MISS 0u                 /* no route (the drop index, as IPv4's) */
#define IP6_FIB_RESULT_LIMIT (1u << 25) /* results are < this, as IPv4's */

/* Where the tables (tbl24, 64 MB, and the groups, 1 KB each) live. */
enum ip6_fib_mem {
	/* tbl24 on 2 MB hugepages when some are free, else THP-advised pages;
	 * the groups THP-advised, reserved but touched only as used. */
	IP6_FIB_MEM_AUTO = 0,
	/* Both on 2 MB hugepages, populated at create; create fails when the
	 * pages are not there. As DPDK's rte_fib6/rte_lpm6 with hugepages. */
	IP6_FIB_MEM_HUGETLB,
	/* Both on 4 KB pages, no THP, populated at create. As DPDK's tables
	 * under EAL --no-huge. */
	IP6_FIB_MEM_4K,
};

struct ip6_fib_config {
	enum ip6_fib_mem mem; /* default IP6_FIB_MEM_AUTO */
	uint32_t max_routes;  /* default 0: bounded only by the groups */
	uint32_t n_groups;    /* 256-entry groups (1 KB of table and 256 B of
	                       * depths each); default 65536, at most 2^23 */
};

struct ip6_fib;

/* The entries' layout, public so that the lookups inline. A leaf entry IS
 * its result (bit 31 clear, value < IP6_FIB_RESULT_LIMIT). */
#define IP6_FIB_E_EXT (1u << 31) /* bits 8..30: a group's index; 0..7 zero */
#define IP6_FIB_GROUPS_MAX (1u << 23)

/* The group an EXT entry leads to, and the EXT entry leading to group g. */
static inline uint32_t ip6_fib_e_group(uint32_t e)
{
	return (e & ~IP6_FIB_E_EXT) >> 8;
}

static inline uint32_t ip6_fib_e_ext(uint32_t g)
{
	return IP6_FIB_E_EXT | g << 8;
}

/* The first member of every struct ip6_fib: the lookups reach the tables
 * with no call. Fixed for the FIB's life. */
struct ip6_fib_tables {
	const uint32_t *tbl24;  /* 1 << 24 entries */
	const uint32_t *groups; /* n_groups << 8 entries */
	/* The address of groups less IP6_FIB_E_EXT entries (an integer: it
	 * points at no object): adding 4 (e | b) to it, for an EXT entry e and
	 * a byte b, gives the address of entry b of e's group, with no mask. */
	uintptr_t groups_ext;
};

/* The defaults, or what ip6_fib_config_set_default last set. */
void ip6_fib_config_default(struct ip6_fib_config *c);

/* From now on ip6_fib_config_default gives c: the main FIB (made by the
 * first IPv6 address or route, ip6_route.h) is sized by startup.conf's
 * `ip6 { fib-groups N }` or a bench this way. 0, or -EINVAL with err. */
int ip6_fib_config_set_default(const struct ip6_fib_config *c, char *err, size_t err_len);

/* Create an empty FIB. NULL with a reason in err on a bad config or no
 * memory (or too few free hugepages for IP6_FIB_MEM_HUGETLB). */
struct ip6_fib *ip6_fib_create(const struct ip6_fib_config *c, char *err, size_t err_len);

/* Free everything; the caller ensures no lookup runs. NULL is a no-op. */
void ip6_fib_destroy(struct ip6_fib *fib);

/* Add or replace prefix/len -> result (bits beyond len ignored). Returns 0;
 * -EINVAL (len > 128, result >= IP6_FIB_RESULT_LIMIT), -ENOSPC (max_routes
 * reached, or too few free groups: see ip6_fib_quiesce), -ENOMEM. On error
 * the FIB is unchanged. Control call. */
int ip6_fib_add(struct ip6_fib *fib, const ip6_addr_a2 *prefix, uint8_t len, uint32_t result);

/* Delete prefix/len; its addresses fall back to the longest covering route
 * that remains (or IP6_FIB_MISS). 0, -EINVAL or -ENOENT. Control call. */
int ip6_fib_del(struct ip6_fib *fib, const ip6_addr_a2 *prefix, uint8_t len);

/* Exact match: 0 and *result (if not NULL) when prefix/len is a route,
 * -ENOENT when not, -EINVAL for len > 128. */
int ip6_fib_get(const struct ip6_fib *fib, const ip6_addr_a2 *prefix, uint8_t len,
		uint32_t *result);

/* Every datapath thread has finished the lookups it began before the last
 * update: groups freed since the previous call become reusable. */
void ip6_fib_quiesce(struct ip6_fib *fib);

/* Remove every route (groups go to the pending list, as for deletes). */
void ip6_fib_flush(struct ip6_fib *fib);

struct ip6_route {
	struct in6_addr prefix; /* masked */
	uint8_t len;
	uint32_t result;
};

/* Every route in ascending (prefix, len) order; a non-zero return from fn
 * stops the walk and is returned. -ENOMEM if the sort buffer fails. The FIB
 * must not change during the walk. Control call. */
int ip6_fib_walk(const struct ip6_fib *fib, int (*fn)(const struct ip6_route *r, void *ctx),
		 void *ctx);

/* How a table was mapped (THP is advice: smaps says what the kernel gave). */
enum ip6_fib_pages {
	IP6_FIB_PAGES_4K,
	IP6_FIB_PAGES_THP,
	IP6_FIB_PAGES_HUGETLB,
};

/* "4 KB", "THP-advised" or "2 MB hugetlb". */
const char *ip6_fib_pages_name(enum ip6_fib_pages p);

struct ip6_fib_stats {
	uint32_t n_routes;
	uint32_t n_routes_by_len[129];
	uint32_t n_groups_used;    /* linked in the trie */
	uint32_t n_groups_pending; /* freed, waiting for ip6_fib_quiesce */
	uint32_t n_groups;         /* configured */
	uint32_t n_groups_by_level[14]; /* [1..13]: groups for bits 24+8(l-1)..24+8l */
	enum ip6_fib_pages tbl24_pages, groups_pages;
	uint64_t mem_bytes; /* tbl24 and its depths, groups used or pending with
	                     * their depths, the route store */
};

void ip6_fib_stats(const struct ip6_fib *fib, struct ip6_fib_stats *s);

static inline const struct ip6_fib_tables *ip6_fib_tables(const struct ip6_fib *fib)
{
	return (const struct ip6_fib_tables *)(const void *)fib;
}

/* ---- lookups: any thread, no lock ---- */

/* The first 24 bits: one 32-bit load and a byte swap (three instructions
 * where three byte loads, shifts and ors took six). */
static inline uint32_t ip6_fib_index24(const ip6_addr_a2 *a)
{
	uint32_t w;
	memcpy(&w, a->s6_addr, sizeof(w));
	return ntohl(w) >> 8;
}

/* One stride below entry e (EXT) for the address's byte b: the next entry.
 * Acquire: a group's entries were written before the store linking it. */
static inline uint32_t ip6_fib_step(uintptr_t groups_ext, uint32_t e, uint8_t b)
{
	return __atomic_load_n((const uint32_t *)(groups_ext + ((uintptr_t)(e | b) << 2)),
			       __ATOMIC_ACQUIRE);
}

/* The rest of a lookup whose tbl24 entry is e, gx its tables' groups_ext
 * (read by the caller before its acquire loads, which would otherwise make
 * the compiler read it again after each). The first three strides (to /48,
 * where half of the public table's prefixes end) unrolled, five
 * instructions each, then a loop. */
static inline uint32_t ip6_fib_finish(uintptr_t gx, uint32_t e, const ip6_addr_a2 *a)
{
	if (!(e & IP6_FIB_E_EXT))
		return e;
	e = ip6_fib_step(gx, e, a->s6_addr[3]);
	if (!(e & IP6_FIB_E_EXT))
		return e;
	e = ip6_fib_step(gx, e, a->s6_addr[4]);
	if (!(e & IP6_FIB_E_EXT))
		return e;
	e = ip6_fib_step(gx, e, a->s6_addr[5]);
	/* At most 13 steps in all: no entry of the last stride is EXT. */
	for (unsigned i = 6; __builtin_expect(e & IP6_FIB_E_EXT, 0); i++)
		e = ip6_fib_step(gx, e, a->s6_addr[i]);
	return e;
}

/* a's tbl24 entry, the first load of its lookup; ip6_fib_finish does the
 * rest (a node holding tbl24 and groups_ext in locals across its frame). */
static inline uint32_t ip6_fib_first(const uint32_t *tbl24, const ip6_addr_a2 *a)
{
	return __atomic_load_n(&tbl24[ip6_fib_index24(a)], __ATOMIC_ACQUIRE);
}

/* Longest-prefix match of one address: the route's result or IP6_FIB_MISS. */
static inline uint32_t ip6_fib_lookup(const struct ip6_fib *fib, const ip6_addr_a2 *a)
{
	const struct ip6_fib_tables *t = ip6_fib_tables(fib);
	const uintptr_t gx = t->groups_ext;
	return ip6_fib_finish(gx, ip6_fib_first(t->tbl24, a), a);
}

/* Hint the first entry of a's lookup into cache. */
static inline void ip6_fib_prefetch(const struct ip6_fib *fib, const ip6_addr_a2 *a)
{
	__builtin_prefetch(&ip6_fib_tables(fib)->tbl24[ip6_fib_index24(a)]);
}

/* Four lookups (a node's x4 loop; addresses by pointer, straight from the
 * headers): the four tbl24 loads, the misses that matter most, issued
 * together; then each walk to its leaf on its own, the four chains of
 * group loads independent of each other for the core to overlap. (Stride
 * by stride across the four, the walk of bench/ip6's path at ~1M routes
 * took 50 instructions a lookup, for as many Mpps.) */
static inline void ip6_fib_lookup_x4(const struct ip6_fib *fib, const ip6_addr_a2 *a0,
				     const ip6_addr_a2 *a1, const ip6_addr_a2 *a2,
				     const ip6_addr_a2 *a3, uint32_t out[4])
{
	const struct ip6_fib_tables *t = ip6_fib_tables(fib);
	const uint32_t *tbl24 = t->tbl24;
	const uintptr_t gx = t->groups_ext;
	uint32_t e0 = ip6_fib_first(tbl24, a0);
	uint32_t e1 = ip6_fib_first(tbl24, a1);
	uint32_t e2 = ip6_fib_first(tbl24, a2);
	uint32_t e3 = ip6_fib_first(tbl24, a3);
	out[0] = ip6_fib_finish(gx, e0, a0);
	out[1] = ip6_fib_finish(gx, e1, a1);
	out[2] = ip6_fib_finish(gx, e2, a2);
	out[3] = ip6_fib_finish(gx, e3, a3);
}

/* n lookups of a packed array (DPDK's layout, uint8_t[n][16]), in chunks of
 * 32: every address's next entry prefetched, then loaded, stride by stride
 * across the chunk. */
void ip6_fib_lookup_bulk(const struct ip6_fib *fib, const ip6_addr_a2 *addrs, uint32_t *out,
			 uint32_t n);

#endif
