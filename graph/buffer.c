/* Buffer pools: one per NUMA node, in one reserved range; per-thread caches
 * moving buffers in batches of BUFFER_CACHE_BATCH.
 *
 * Why one range: index -> pointer stays base + index * stride for every pool,
 * so the hot path never looks up which pool a buffer came from. Each pool's
 * slice starts at a multiple of index_span buffers, chosen so that the slice
 * starts on a 2 MB boundary and can be backed by hugepages on its own.
 */
#include <errno.h>
#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "graph/buffer.h"

#define HUGE_2M (2u << 20)

struct buffer_pool {
	pthread_spinlock_t lock;
	uint32_t n_free;
	uint32_t n_total;
	uint32_t first_index;
	int numa_node;
	bool hugepages;
	uint32_t *free; /* stack of free indices */
	void *mem;
	size_t mem_size;
};

struct buffer_cache_pool {
	uint32_t n;
	uint32_t bi[BUFFER_CACHE_MAX + BUFFER_CACHE_BATCH];
};

struct buffer_cache {
	int numa_node;
	int index;
	/* pools[] entry of the thread's own NUMA node (buffer_alloc with
	 * numa_node < 0), found at the first such allocation: NULL before. */
	struct buffer_cache_pool *local;
	struct buffer_cache_pool pools[BUFFER_MAX_POOLS];
};

struct buffer_main buffer_main;
static struct buffer_pool pools[BUFFER_MAX_POOLS];
static int pool_of_numa[BUFFER_MAX_POOLS];
static void *reserved;
static size_t reserved_size;
static pthread_mutex_t caches_lock = PTHREAD_MUTEX_INITIALIZER;
static struct buffer_cache *caches[BUFFER_MAX_CACHES];
/* initial-exec: buffer.c is linked into the executable (the static
 * libraries are position-independent, which would otherwise make every
 * access a __tls_get_addr call, and the fast paths save registers for it).
 * A plugin dlopen()ed later reaches it through buffer_alloc and friends. */
static __thread struct buffer_cache *thread_cache __attribute__((tls_model("initial-exec")));
/* cpu -> NUMA node, read once at init: libnuma's own lookup caches without a
 * lock, so threads asking at the same time would race inside it. */
#define MAX_CPUS 1024
static int8_t numa_of_cpu[MAX_CPUS];

void buffer_config_default(struct buffer_config *cfg)
{
	cfg->buffers_per_numa = 16384;
	cfg->data_size = BUFFER_DATA_SIZE_DEFAULT;
	cfg->page_size = 0;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* NUMA nodes that have memory, in order; at least node 0. */
static uint32_t numa_nodes_with_memory(int *nodes, uint32_t max)
{
	uint32_t n = 0;
	if (numa_available() < 0) {
		nodes[0] = 0;
		return 1;
	}
	for (int node = 0; node <= numa_max_node() && n < max; node++) {
		long long free_bytes;
		if (numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned)node) &&
		    numa_node_size64(node, &free_bytes) > 0)
			nodes[n++] = node;
	}
	if (n == 0)
		nodes[n++] = 0;
	return n;
}

/* Back one pool's slice: hugepages when allowed and available, else 4K pages
 * bound to the node. */
static int pool_map(struct buffer_pool *p, void *at, size_t size, uint64_t page_size)
{
	void *m = MAP_FAILED;
	if (page_size != 4096)
		m = mmap(at, ROUND_UP(size, HUGE_2M), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_HUGETLB | MAP_POPULATE, -1, 0);
	if (m != MAP_FAILED) {
		p->hugepages = true;
		p->mem_size = ROUND_UP(size, HUGE_2M);
	} else {
		m = mmap(at, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (m == MAP_FAILED)
			return -errno;
		p->hugepages = false;
		p->mem_size = size;
	}
	if (numa_available() >= 0)
		numa_tonode_memory(m, p->mem_size, p->numa_node);
	p->mem = m;
	return 0;
}

static int pool_init(struct buffer_pool *p, uint32_t pool_index, int numa_node, uint32_t n,
		     uint64_t page_size)
{
	struct buffer_main *bm = &buffer_main;
	p->numa_node = numa_node;
	p->n_total = n;
	p->first_index = pool_index * bm->index_span;
	int rv = pool_map(p, bm->base + (uint64_t)p->first_index * bm->stride, (size_t)n * bm->stride,
			  page_size);
	if (rv)
		return rv;
	p->free = malloc(sizeof(uint32_t) * n);
	if (!p->free)
		return -ENOMEM;
	pthread_spin_init(&p->lock, PTHREAD_PROCESS_PRIVATE);
	/* Lowest indices on top of the stack: allocation order is predictable in tests. */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t bi = p->first_index + n - 1 - i;
		buffer_reset(buffer_get(bi), (uint8_t)pool_index);
		p->free[i] = bi;
	}
	p->n_free = n;
	return 0;
}

static int buffer_reserve(const struct buffer_config *cfg, uint32_t n_pools)
{
	struct buffer_main *bm = &buffer_main;
	uint64_t stride = sizeof(struct buffer) + BUFFER_HEADROOM + cfg->data_size;
	bm->stride = (uint32_t)ROUND_UP(stride, CACHE_LINE_SIZE);
	bm->data_size = cfg->data_size;
	/* Smallest count whose slice is a whole number of 2 MB pages. */
	uint64_t k = HUGE_2M / gcd64(bm->stride, HUGE_2M);
	bm->index_span = (uint32_t)ROUND_UP((uint64_t)cfg->buffers_per_numa, k);
	reserved_size = (size_t)bm->index_span * bm->stride * n_pools + HUGE_2M;
	reserved = mmap(NULL, reserved_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (reserved == MAP_FAILED)
		return -errno;
	bm->base = (uint8_t *)ROUND_UP((uintptr_t)reserved, HUGE_2M);
	return 0;
}

int buffer_main_init(const struct buffer_config *cfg, char *errbuf, size_t errlen)
{
	int nodes[BUFFER_MAX_POOLS];
	if (cfg->buffers_per_numa == 0 || cfg->data_size < 64 || cfg->data_size > 65535 - BUFFER_HEADROOM) {
		snprintf(errbuf, errlen, "buffers: invalid size (buffers-per-numa %u, data-size %u)",
			 cfg->buffers_per_numa, cfg->data_size);
		return -EINVAL;
	}
	uint32_t n_pools = numa_nodes_with_memory(nodes, BUFFER_MAX_POOLS);
	for (int cpu = 0; cpu < MAX_CPUS; cpu++) {
		int node = numa_available() >= 0 && cpu < numa_num_configured_cpus() ? numa_node_of_cpu(cpu) : 0;
		numa_of_cpu[cpu] = (int8_t)(node < 0 ? 0 : node);
	}
	int rv = buffer_reserve(cfg, n_pools);
	if (rv) {
		snprintf(errbuf, errlen, "buffers: cannot reserve address space: %s", strerror(-rv));
		return rv;
	}
	for (uint32_t i = 0; i < BUFFER_MAX_POOLS; i++)
		pool_of_numa[i] = 0;
	for (uint32_t i = 0; i < n_pools; i++) {
		rv = pool_init(&pools[i], i, nodes[i], cfg->buffers_per_numa, cfg->page_size);
		if (rv) {
			snprintf(errbuf, errlen, "buffers: cannot map pool for numa node %d: %s", nodes[i],
				 strerror(-rv));
			buffer_main.n_pools = i;
			buffer_main_free();
			return rv;
		}
		if (nodes[i] < BUFFER_MAX_POOLS)
			pool_of_numa[nodes[i]] = (int)i;
		buffer_main.n_pools = i + 1;
	}
	base_log("buffers", "%u pool(s) of %u buffers, %u bytes data, %s", n_pools, cfg->buffers_per_numa,
		  cfg->data_size,
		  pools[0].hugepages ? "backed by 2 MB hugepages" : "backed by 4 KB pages (no hugepages available)");
	return 0;
}

void buffer_main_free(void)
{
	/* The caller's cache goes with the pools; a later init starts clean. */
	buffer_thread_unregister();
	for (uint32_t i = 0; i < buffer_main.n_pools; i++) {
		free(pools[i].free);
		pthread_spin_destroy(&pools[i].lock);
		memset(&pools[i], 0, sizeof(pools[i]));
	}
	if (reserved && reserved != MAP_FAILED)
		munmap(reserved, reserved_size);
	reserved = NULL;
	memset(&buffer_main, 0, sizeof(buffer_main));
}

int buffer_thread_register(void)
{
	if (thread_cache)
		return thread_cache->index;
	struct buffer_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	int cpu = sched_getcpu();
	c->numa_node = (cpu >= 0 && cpu < MAX_CPUS) ? numa_of_cpu[cpu] : 0;
	pthread_mutex_lock(&caches_lock);
	c->index = -1;
	for (int i = 0; i < BUFFER_MAX_CACHES; i++) {
		if (!caches[i]) {
			caches[i] = c;
			c->index = i;
			break;
		}
	}
	pthread_mutex_unlock(&caches_lock);
	if (c->index < 0) {
		free(c);
		return -ENOSPC;
	}
	thread_cache = c;
	return c->index;
}

/* The pool under its lock: out of line, the thread caches' fast paths save no
 * registers for it. */
__attribute__((noinline)) static void pool_put(struct buffer_pool *p, const uint32_t *bi, uint32_t n)
{
	pthread_spin_lock(&p->lock);
	memcpy(p->free + p->n_free, bi, n * sizeof(uint32_t));
	__atomic_store_n(&p->n_free, p->n_free + n, __ATOMIC_RELAXED);
	pthread_spin_unlock(&p->lock);
}

__attribute__((noinline)) static uint32_t pool_get(struct buffer_pool *p, uint32_t *bi, uint32_t n)
{
	pthread_spin_lock(&p->lock);
	uint32_t k = MIN(n, p->n_free);
	uint32_t nf = p->n_free - k;
	memcpy(bi, p->free + nf, k * sizeof(uint32_t));
	__atomic_store_n(&p->n_free, nf, __ATOMIC_RELAXED);
	pthread_spin_unlock(&p->lock);
	return k;
}

void buffer_thread_unregister(void)
{
	struct buffer_cache *c = thread_cache;
	if (!c)
		return;
	for (uint32_t i = 0; i < buffer_main.n_pools; i++) {
		pool_put(&pools[i], c->pools[i].bi, c->pools[i].n);
		c->pools[i].n = 0;
	}
	pthread_mutex_lock(&caches_lock);
	caches[c->index] = NULL;
	pthread_mutex_unlock(&caches_lock);
	thread_cache = NULL;
	free(c);
}

static uint32_t pool_for(int numa_node)
{
	if (numa_node < 0)
		numa_node = thread_cache ? thread_cache->numa_node : 0;
	if (numa_node >= BUFFER_MAX_POOLS)
		return 0;
	return (uint32_t)pool_of_numa[numa_node];
}

/* n indices from src to dst: a burst of 32 (the drivers' usual batch) as a
 * copy of constant size, inlined (eight 16-byte moves), anything else by
 * memcpy. */
static inline void copy_indices(uint32_t *dst, const uint32_t *src, uint32_t n)
{
	if (n == 32)
		memcpy(dst, src, 32 * sizeof(uint32_t));
	else
		memcpy(dst, src, n * sizeof(uint32_t));
}

/* buffer_alloc when the thread's cache holds fewer than n: refilled from
 * the pool under its lock first. Out of line, so that the common case
 * saves no registers. */
__attribute__((noinline)) static uint32_t alloc_refill(struct buffer_cache_pool *cp, uint32_t pi, uint32_t *bi,
							uint32_t n)
{
	if (n > BUFFER_CACHE_MAX)
		return pool_get(&pools[pi], bi, n);
	uint32_t want = MIN((uint32_t)BUFFER_CACHE_MAX, n + BUFFER_CACHE_BATCH) - cp->n;
	uint32_t got = pool_get(&pools[pi], cp->bi + cp->n, want);
	__atomic_store_n(&cp->n, cp->n + got, __ATOMIC_RELAXED);
	n = MIN(n, cp->n);
	uint32_t left = cp->n - n;
	memcpy(bi, cp->bi + left, n * sizeof(uint32_t));
	__atomic_store_n(&cp->n, left, __ATOMIC_RELAXED);
	return n;
}

/* Buffers in pools and caches are already reset (buffer_free does it), so
 * allocation is a copy of indices. */
uint32_t buffer_alloc(uint32_t *bi, uint32_t n, int numa_node)
{
	struct buffer_cache *c = thread_cache;
	struct buffer_cache_pool *cp;
	if (likely(c && numa_node < 0 && c->local)) {
		cp = c->local;
	} else {
		uint32_t pi = pool_for(numa_node);
		if (unlikely(!c))
			return pool_get(&pools[pi], bi, n);
		cp = &c->pools[pi];
		if (numa_node < 0)
			c->local = cp;
	}
	if (unlikely(cp->n < n))
		return alloc_refill(cp, (uint32_t)(cp - c->pools), bi, n);
	/* The count first, then the copy: the cache is this thread's alone
	 * (others read only its count), and nothing is live after the copy
	 * but n. */
	uint32_t left = cp->n - n;
	__atomic_store_n(&cp->n, left, __ATOMIC_RELAXED);
	copy_indices(bi, cp->bi + left, n);
	return n;
}

static void cache_put(struct buffer_cache *c, uint32_t pi, uint32_t bi)
{
	if (unlikely(!c)) {
		pool_put(&pools[pi], &bi, 1);
		return;
	}
	struct buffer_cache_pool *cp = &c->pools[pi];
	cp->bi[cp->n] = bi;
	uint32_t n = cp->n + 1;
	if (unlikely(n >= BUFFER_CACHE_MAX + BUFFER_CACHE_BATCH)) {
		n -= BUFFER_CACHE_BATCH;
		pool_put(&pools[pi], cp->bi + n, BUFFER_CACHE_BATCH);
	}
	__atomic_store_n(&cp->n, n, __ATOMIC_RELAXED);
}

static void free_chain(struct buffer_cache *c, uint32_t cur)
{
	for (;;) {
		struct buffer *b = buffer_get(cur);
		uint32_t next = (b->flags & BUFFER_F_NEXT_PRESENT) ? b->next_buffer : BUFFER_INVALID;
		uint8_t pi = b->pool_index;
		buffer_reset(b, pi);
		cache_put(c, pi, cur);
		if (next == BUFFER_INVALID)
			return;
		cur = next;
	}
}

/* The common case, one pool and a registered cache: four buffers a turn,
 * one test of their four chain flags, two stores each to reset them, one
 * 16-byte copy of their indices into the cache; room for four is checked
 * once a turn (the cache stays below its spill mark, as cache_put keeps
 * it). A turn with a chain frees its four one by one. Callgrind, bench/nic
 * ixgbe burst 32, instructions per packet: buffer_alloc 15.4 -> 2.2 (no
 * reset left in it), buffer_free 13.2 -> 10.8 with the resets it took on. */
static void free_one_pool(struct buffer_cache *c, const uint32_t *bi, uint32_t n)
{
	const uint32_t spill_at = BUFFER_CACHE_MAX + BUFFER_CACHE_BATCH;
	struct buffer_cache_pool *cp = &c->pools[0];
	uint8_t *base = buffer_main.base;
	uint64_t stride = buffer_main.stride;
	const uint32_t *end4 = bi + (n & ~3u), *end = bi + n;
	uint32_t k = cp->n;
	for (; bi < end4; bi += 4) {
		struct buffer *b0 = (struct buffer *)(base + bi[0] * stride);
		struct buffer *b1 = (struct buffer *)(base + bi[1] * stride);
		struct buffer *b2 = (struct buffer *)(base + bi[2] * stride);
		struct buffer *b3 = (struct buffer *)(base + bi[3] * stride);
		if (unlikely((b0->flags | b1->flags | b2->flags | b3->flags) & BUFFER_F_NEXT_PRESENT)) {
			__atomic_store_n(&cp->n, k, __ATOMIC_RELAXED);
			for (uint32_t j = 0; j < 4; j++)
				free_chain(c, bi[j]);
			k = cp->n;
			continue;
		}
		buffer_reset(b0, 0);
		buffer_reset(b1, 0);
		buffer_reset(b2, 0);
		buffer_reset(b3, 0);
		if (unlikely(k + 4 >= spill_at)) {
			k -= BUFFER_CACHE_BATCH;
			pool_put(&pools[0], cp->bi + k, BUFFER_CACHE_BATCH);
		}
		memcpy(cp->bi + k, bi, 4 * sizeof(uint32_t));
		k += 4;
	}
	__atomic_store_n(&cp->n, k, __ATOMIC_RELAXED);
	for (; bi < end; bi++)
		free_chain(c, *bi);
}

void buffer_free(const uint32_t *bi, uint32_t n)
{
	struct buffer_cache *c = thread_cache;
	if (likely(c && buffer_main.n_pools == 1)) {
		free_one_pool(c, bi, n);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		free_chain(c, bi[i]);
}

/* buffer_free_reset past the cache's spill mark: a batch to the pool
 * first. The cache stays below its spill mark, as cache_put keeps it: k is
 * at least spill mark - n >= BUFFER_CACHE_BATCH when it spills. Out of
 * line: the common case saves no registers. */
__attribute__((noinline)) static void free_reset_spill(struct buffer_cache_pool *cp, const uint32_t *bi, uint32_t n)
{
	uint32_t k = cp->n - BUFFER_CACHE_BATCH;
	pool_put(&pools[0], cp->bi + k, BUFFER_CACHE_BATCH);
	memcpy(cp->bi + k, bi, n * sizeof(uint32_t));
	__atomic_store_n(&cp->n, k + n, __ATOMIC_RELAXED);
}

void buffer_free_reset(const uint32_t *bi, uint32_t n)
{
	struct buffer_cache *c = thread_cache;
	if (unlikely(!c || buffer_main.n_pools != 1 || n > BUFFER_CACHE_BATCH)) {
		buffer_free(bi, n); /* resets them again: the same state */
		return;
	}
	struct buffer_cache_pool *cp = &c->pools[0];
	uint32_t k = cp->n;
	if (unlikely(k + n >= BUFFER_CACHE_MAX + BUFFER_CACHE_BATCH)) {
		free_reset_spill(cp, bi, n);
		return;
	}
	/* The count first (as buffer_alloc): the copy is then the tail. */
	__atomic_store_n(&cp->n, k + n, __ATOMIC_RELAXED);
	copy_indices(cp->bi + k, bi, n);
}

int buffer_pool_stats(uint32_t pool_index, struct buffer_pool_stats *st)
{
	if (pool_index >= buffer_main.n_pools)
		return -ENOENT;
	struct buffer_pool *p = &pools[pool_index];
	memset(st, 0, sizeof(*st));
	st->numa_node = (uint32_t)p->numa_node;
	st->n_total = p->n_total;
	st->hugepages = p->hugepages;
	st->n_free_pool = __atomic_load_n(&p->n_free, __ATOMIC_RELAXED);
	pthread_mutex_lock(&caches_lock);
	for (uint32_t i = 0; i < BUFFER_MAX_CACHES; i++) {
		if (!caches[i])
			continue;
		uint32_t k = __atomic_load_n(&caches[i]->pools[pool_index].n, __ATOMIC_RELAXED);
		st->cached[i] = k;
		st->n_cached += k;
		st->n_caches = i + 1;
	}
	pthread_mutex_unlock(&caches_lock);
	st->n_in_use = st->n_total - st->n_free_pool - st->n_cached;
	return 0;
}

uint64_t buffer_n_in_use(void)
{
	uint64_t n = 0;
	struct buffer_pool_stats st;
	for (uint32_t i = 0; i < buffer_main.n_pools; i++)
		if (buffer_pool_stats(i, &st) == 0)
			n += st.n_in_use;
	return n;
}

uint32_t buffer_from_bytes(const void *bytes, uint32_t n, int numa_node)
{
	uint32_t bi;
	if (n > buffer_main.data_size || buffer_alloc(&bi, 1, numa_node) != 1)
		return BUFFER_INVALID;
	struct buffer *b = buffer_get(bi);
	memcpy(buffer_data(b), bytes, n);
	b->current_length = (uint16_t)n;
	return bi;
}

uint32_t buffer_chain_from_bytes(const void *bytes, uint32_t n, int numa_node)
{
	uint32_t size = buffer_main.data_size;
	uint32_t first = n < size ? n : size;
	uint32_t bi = buffer_from_bytes(bytes, first, numa_node);
	if (bi == BUFFER_INVALID)
		return BUFFER_INVALID;
	struct buffer *head = buffer_get(bi), *tail = head;
	for (uint32_t off = first; off < n;) {
		uint32_t k = n - off < size ? n - off : size;
		uint32_t ni = buffer_from_bytes((const uint8_t *)bytes + off, k, numa_node);
		if (ni == BUFFER_INVALID) {
			buffer_free(&bi, 1);
			return BUFFER_INVALID;
		}
		tail->flags |= BUFFER_F_NEXT_PRESENT;
		tail->next_buffer = ni;
		head->total_length_not_including_first += k;
		tail = buffer_get(ni);
		off += k;
	}
	return bi;
}

uint32_t buffer_chain_copy_out(const struct buffer *b, void *dst, uint32_t max, uint32_t *total)
{
	uint32_t off = 0, len = 0;
	for (;;) {
		uint32_t k = b->current_length;
		len += k;
		if (k > max - off)
			k = max - off;
		memcpy((uint8_t *)dst + off, buffer_data((struct buffer *)b), k);
		off += k;
		if (!(b->flags & BUFFER_F_NEXT_PRESENT))
			break;
		b = buffer_get(b->next_buffer);
	}
	*total = len;
	return off;
}
