/* The book of Linux routes (lcp_nl_route.h): a pool of records, a chained
 * hash by (dst, plen), and per nexthop object id a doubly linked list of
 * the routes through it. Indices, not pointers; 0 ends a chain, a
 * record's index + 1 names it. Barrier held, so nothing here costs in
 * proportion to the book: the pool grows by chunks that never move (no
 * realloc copying 500,000 records), and the buckets double by an
 * incremental rehash, REHASH_STEP old buckets per note or forget. */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "nodes/fib_defer.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/lcp/lcp_nl.h"
#include "nodes/lcp/lcp_nl_map_private.h"
#include "nodes/lcp/lcp_nl_route.h"

struct rec {
	struct lcp_nl_route r;
	uint32_t hnext;        /* hash chain (or the free list) */
	uint32_t nprev, nnext; /* the routes of r.nhid */
	bool used;
};

/* nhid -> the first route through it: open addressing, linear probing,
 * deletion by backward shift. Live nexthop objects are at most the map's
 * NH_MAX (1,024), so a fixed table of 4x that stays sparse. */
#define NH_SLOTS 4096u
struct nh_head {
	uint32_t id, first;
};

#define CHUNK_SHIFT 12 /* records per chunk: 4,096 */
#define CHUNK (1u << CHUNK_SHIFT)
#define REHASH_STEP 16u

static struct {
	struct rec **chunk;
	uint32_t n_chunk, chunk_cap;
	uint32_t hw, free; /* hw: records ever used; free: list head */
	uint32_t *bucket;
	uint32_t mask; /* buckets - 1 */
	uint32_t n;
	uint32_t *old; /* buckets being moved out (from moved on), or NULL */
	uint32_t old_mask, moved;
	uint64_t rehashed;
	struct nh_head nh[NH_SLOTS];
} book;

/* MurmurHash3's 32-bit finaliser: the buckets are the low bits, and a
 * multiplication alone leaves those to the key's low bits (in network
 * order, the prefix's first octets: few values, long chains). */
static uint32_t key_hash(uint32_t dst, uint8_t plen)
{
	uint32_t k = dst ^ ((uint32_t)plen * 0x9e3779b1u);
	k ^= k >> 16;
	k *= 0x85ebca6bu;
	k ^= k >> 13;
	k *= 0xc2b2ae35u;
	k ^= k >> 16;
	return k;
}

static struct rec *at(uint32_t ref)
{
	return &book.chunk[(ref - 1) >> CHUNK_SHIFT][(ref - 1) & (CHUNK - 1)];
}

static uint32_t *chain_find(uint32_t *link, uint32_t dst, uint8_t plen)
{
	while (*link && (at(*link)->r.dst != dst || at(*link)->r.plen != plen))
		link = &at(*link)->hnext;
	return link;
}

/* The link that names dst/plen (its ref), or the end of its chain in the
 * live buckets (0). */
static uint32_t *find(uint32_t dst, uint8_t plen)
{
	if (!book.bucket)
		return NULL;
	uint32_t h = key_hash(dst, plen);
	uint32_t *link = chain_find(&book.bucket[h & book.mask], dst, plen);
	if (*link || !book.old || (h & book.old_mask) < book.moved)
		return link;
	uint32_t *o = chain_find(&book.old[h & book.old_mask], dst, plen);
	return *o ? o : link;
}

/* ---- nhid -> list ---- */

static uint32_t nh_slot(uint32_t id)
{
	uint32_t i = (id * 0x9e3779b1u) & (NH_SLOTS - 1);
	while (book.nh[i].id && book.nh[i].id != id)
		i = (i + 1) & (NH_SLOTS - 1);
	return i;
}

static void nh_del_slot(uint32_t i)
{
	/* Backward shift: move up what probed past i, so no lookup stops early. */
	for (uint32_t j = (i + 1) & (NH_SLOTS - 1); book.nh[j].id; j = (j + 1) & (NH_SLOTS - 1)) {
		uint32_t home = (book.nh[j].id * 0x9e3779b1u) & (NH_SLOTS - 1);
		if (((j - home) & (NH_SLOTS - 1)) >= ((j - i) & (NH_SLOTS - 1))) {
			book.nh[i] = book.nh[j];
			i = j;
		}
	}
	book.nh[i] = (struct nh_head){ 0 };
}

static void nh_link(uint32_t ref)
{
	struct rec *e = at(ref);
	uint32_t i = nh_slot(e->r.nhid);
	book.nh[i].id = e->r.nhid;
	e->nprev = 0;
	e->nnext = book.nh[i].first;
	if (e->nnext)
		at(e->nnext)->nprev = ref;
	book.nh[i].first = ref;
}

static void nh_unlink(uint32_t ref)
{
	struct rec *e = at(ref);
	if (e->nnext)
		at(e->nnext)->nprev = e->nprev;
	if (e->nprev) {
		at(e->nprev)->nnext = e->nnext;
		return;
	}
	uint32_t i = nh_slot(e->r.nhid);
	book.nh[i].first = e->nnext;
	if (!e->nnext)
		nh_del_slot(i);
}

/* ---- records ---- */

/* Move REHASH_STEP old buckets' chains over; free the old ones after. */
static void rehash_step(void)
{
	for (uint32_t end = book.moved + REHASH_STEP; book.old && book.moved < end; book.moved++) {
		if (book.moved > book.old_mask) {
			fib_free(book.old); /* after the hold (nodes/fib_defer.h) */
			book.old = NULL;
			break;
		}
		for (uint32_t ref = book.old[book.moved], nx; ref; ref = nx) {
			struct rec *e = at(ref);
			nx = e->hnext;
			uint32_t h = key_hash(e->r.dst, e->r.plen) & book.mask;
			e->hnext = book.bucket[h];
			book.bucket[h] = ref;
			book.rehashed++;
		}
		book.old[book.moved] = 0;
	}
}

/* Keep the chains short: at one record per bucket, twice the buckets
 * (calloc's fresh zero pages), filled by the steps that follow. */
static int grow_buckets(void)
{
	rehash_step();
	if (book.bucket && (book.n < book.mask + 1 || book.old))
		return 0;
	uint32_t nb = book.bucket ? 2 * (book.mask + 1) : 1024;
	uint32_t *b = calloc(nb, sizeof(*b));
	if (!b)
		return -ENOMEM;
	book.old = book.bucket;
	book.old_mask = book.mask;
	book.moved = 0;
	book.bucket = b;
	book.mask = nb - 1;
	return 0;
}

uint64_t lcp_nl_route_rehashed(void)
{
	return book.rehashed;
}

static uint32_t rec_alloc(void)
{
	if (book.free) {
		uint32_t ref = book.free;
		book.free = at(ref)->hnext;
		return ref;
	}
	if (book.hw == book.n_chunk * CHUNK) {
		if (book.n_chunk == book.chunk_cap) { /* pointers only: 8 bytes per 4,096 records */
			uint32_t cap = book.chunk_cap ? 2 * book.chunk_cap : 16;
			struct rec **c = realloc(book.chunk, cap * sizeof(*c));
			if (!c)
				return 0;
			book.chunk = c;
			book.chunk_cap = cap;
		}
		if (!(book.chunk[book.n_chunk] = malloc(CHUNK * sizeof(struct rec))))
			return 0;
		book.n_chunk++;
	}
	return ++book.hw;
}

int lcp_nl_route_note(const struct lcp_nl_route *r)
{
	if (grow_buckets())
		return -ENOMEM;
	uint32_t *link = find(r->dst, r->plen);
	uint32_t ref = *link;
	if (ref) {
		struct rec *e = at(ref);
		if (e->r.nhid != r->nhid && e->r.nhid)
			nh_unlink(ref);
		bool relink = r->nhid && e->r.nhid != r->nhid;
		e->r = *r;
		if (relink)
			nh_link(ref);
		return 0;
	}
	ref = rec_alloc();
	if (!ref)
		return -ENOMEM;
	struct rec *e = at(ref);
	*e = (struct rec){ .r = *r, .hnext = 0, .used = true };
	*link = ref;
	if (r->nhid)
		nh_link(ref);
	book.n++;
	lcp_nl_stats.routes = book.n;
	return 0;
}

void lcp_nl_route_forget(uint32_t dst, uint8_t plen)
{
	uint32_t *link = find(dst, plen);
	uint32_t ref = link ? *link : 0;
	if (!ref)
		return;
	struct rec *e = at(ref);
	*link = e->hnext;
	if (e->r.nhid)
		nh_unlink(ref);
	e->used = false;
	e->hnext = book.free;
	book.free = ref;
	book.n--;
	lcp_nl_stats.routes = book.n;
	rehash_step();
}

uint32_t lcp_nl_route_each_nh(uint32_t nhid, void (*fn)(const struct lcp_nl_route *r, void *arg), void *arg)
{
	uint32_t n = 0;
	if (!nhid)
		return 0;
	uint32_t ref = book.nh[nh_slot(nhid)].first;
	while (ref) {
		uint32_t next = at(ref)->nnext; /* fn may forget ref */
		struct lcp_nl_route r = at(ref)->r;
		fn(&r, arg);
		n++;
		ref = next;
	}
	return n;
}

bool lcp_nl_route_sweep_step(uint32_t gen, uint32_t owner_mask, uint32_t *cursor, uint64_t deadline_ns,
			     uint32_t *swept)
{
	char err[64];
	uint32_t seen = 0;
	for (uint32_t ref = *cursor + 1; ref <= book.hw; ref++) {
		const struct rec *e = at(ref);
		/* The clock every 64 records, a few microseconds apart; each step
		 * gets on by 64 at least, whatever the deadline. */
		if ((++seen & 63) == 0 && time_now_ns() >= deadline_ns) {
			*cursor = ref - 1;
			return false;
		}
		if (!e->used || e->r.gen == gen || ((e->r.gen ^ gen) & owner_mask))
			continue;
		ip4_route_src_del(IP4_SRC_LINUX, e->r.dst, e->r.plen, err, sizeof(err));
		lcp_nl_route_forget(e->r.dst, e->r.plen);
		(*swept)++;
	}
	*cursor = book.hw;
	return true;
}

bool lcp_nl_sweep_step(uint32_t gen, struct lcp_nl_sweep *cur, uint64_t deadline_ns)
{
	uint32_t n = 0;
	bool done = false;
	if (ip4_fib_main)
		ip4_fib_quiesce(ip4_fib_main);
	if (cur->phase == 0 && lcp_nl_route_sweep_step(gen, LCP_NL_GEN_OWNER, &cur->v4, deadline_ns, &n))
		cur->phase = 1;
	else if (cur->phase == 1 && lcp_nl6_sweep_step(gen, &cur->v6, &cur->v6_mask, deadline_ns, &n))
		cur->phase = 2;
	else if (cur->phase == 2) { /* a step of its own: both route sweeps may have ended at the deadline */
		n += lcp_nl_sweep_addrs(gen);
		done = true;
	}
	lcp_nl_stats.swept += n;
	return done;
}

uint32_t lcp_nl_sweep(uint32_t gen)
{
	struct lcp_nl_sweep cur = { 0 };
	uint64_t before = lcp_nl_stats.swept;
	while (!lcp_nl_sweep_step(gen, &cur, UINT64_MAX))
		;
	return (uint32_t)(lcp_nl_stats.swept - before);
}

void lcp_nl_route_reset(void)
{
	for (uint32_t i = 0; i < book.n_chunk; i++)
		free(book.chunk[i]);
	free(book.chunk);
	free(book.old);
	free(book.bucket);
	memset(&book, 0, sizeof(book));
	lcp_nl_stats.routes = 0;
}

void lcp_nl_route_prefault(const struct nlmsghdr *nlh)
{
	/* Set once under the barrier (the first address or route) and kept:
	 * read as a published pointer. */
	struct ip4_fib *fib = __atomic_load_n(&ip4_fib_main, __ATOMIC_ACQUIRE);
	uint32_t dst_h;
	uint8_t plen;
	/* Only what the hold will install: a default route of another table
	 * (policy routing, a VRF) or of a kind sluice ignores would commit the
	 * whole tbl24 (64 MiB) for nothing. */
	if (fib && lcp_nl_route_would_map(nlh, &dst_h, &plen))
		ip4_fib_prefault(fib, dst_h, plen);
}
