/* The book of Linux routes (lcp_nl_route.h): a pool of records, a chained
 * hash by (dst, plen), and per nexthop object id a doubly linked list of
 * the routes through it. Indices, not pointers, so the pool may grow by
 * realloc; 0 ends a chain, a record's index + 1 names it. Barrier held. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/lcp/lcp_nl.h"
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

static struct {
	struct rec *pool;
	uint32_t cap, hw, free; /* hw: records ever used; free: list head */
	uint32_t *bucket;
	uint32_t mask; /* buckets - 1 */
	uint32_t n;
	struct nh_head nh[NH_SLOTS];
} book;

static uint32_t key_hash(uint32_t dst, uint8_t plen)
{
	uint32_t k = (dst ^ ((uint32_t)plen << 24)) * 0x9e3779b1u;
	return k ^ (k >> 15);
}

static struct rec *at(uint32_t ref)
{
	return &book.pool[ref - 1];
}

/* The link that names dst/plen (its ref, or 0 at the chain's end). */
static uint32_t *find(uint32_t dst, uint8_t plen)
{
	if (!book.bucket)
		return NULL;
	uint32_t *link = &book.bucket[key_hash(dst, plen) & book.mask];
	while (*link && (at(*link)->r.dst != dst || at(*link)->r.plen != plen))
		link = &at(*link)->hnext;
	return link;
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

/* Keep the chains short: double the buckets at one record per bucket. */
static int grow_buckets(void)
{
	if (book.bucket && book.n < book.mask + 1)
		return 0;
	uint32_t nb = book.bucket ? 2 * (book.mask + 1) : 1024;
	uint32_t *b = calloc(nb, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (uint32_t ref = 1; ref <= book.hw; ref++) {
		struct rec *e = at(ref);
		if (!e->used)
			continue;
		uint32_t h = key_hash(e->r.dst, e->r.plen) & (nb - 1);
		e->hnext = b[h];
		b[h] = ref;
	}
	free(book.bucket);
	book.bucket = b;
	book.mask = nb - 1;
	return 0;
}

static uint32_t rec_alloc(void)
{
	if (book.free) {
		uint32_t ref = book.free;
		book.free = at(ref)->hnext;
		return ref;
	}
	if (book.hw == book.cap) {
		uint32_t cap = book.cap ? 2 * book.cap : 1024;
		struct rec *p = realloc(book.pool, cap * sizeof(*p));
		if (!p)
			return 0;
		book.pool = p;
		book.cap = cap;
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
	*find(r->dst, r->plen) = ref; /* again: the chain's end may have moved with the pool */
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

bool lcp_nl_sweep_step(uint32_t gen, uint32_t *cursor, uint64_t deadline_ns)
{
	uint32_t n = 0;
	if (ip4_fib_main)
		ip4_fib_quiesce(ip4_fib_main);
	bool done = lcp_nl_route_sweep_step(gen, LCP_NL_GEN_OWNER, cursor, deadline_ns, &n);
	if (done)
		n += lcp_nl_sweep_addrs(gen);
	lcp_nl_stats.swept += n;
	return done;
}

uint32_t lcp_nl_sweep(uint32_t gen)
{
	uint32_t cursor = 0;
	uint64_t before = lcp_nl_stats.swept;
	lcp_nl_sweep_step(gen, &cursor, UINT64_MAX);
	return (uint32_t)(lcp_nl_stats.swept - before);
}

void lcp_nl_route_reset(void)
{
	free(book.pool);
	free(book.bucket);
	memset(&book, 0, sizeof(book));
	lcp_nl_stats.routes = 0;
}
