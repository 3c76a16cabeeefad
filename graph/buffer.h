/* Packet buffers and their per-NUMA pools.
 *
 * A buffer is a 64-byte metadata header, then headroom, then data. All pools
 * live in one reserved virtual range so that index -> pointer is a single
 * multiply-add (base + index * stride) whatever the pool. Each thread keeps
 * a cache per pool and moves buffers to and from the pool in bulk, so the
 * pool's lock is taken once per batch, never per packet.
 */
#ifndef SLUICE_GRAPH_BUFFER_H
#define SLUICE_GRAPH_BUFFER_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/util.h"

#define BUFFER_INVALID UINT32_MAX
/* Fixed at build time, as VPP does: the data start is then a constant offset
 * from the header and costs nodes no load and no add per packet. */
#define BUFFER_HEADROOM 128
#define BUFFER_DATA_SIZE_DEFAULT 2048
#define BUFFER_MAX_POOLS 8
#define BUFFER_CACHE_MAX 512      /* buffers a thread may hold per pool */
#define BUFFER_CACHE_BATCH 256    /* refill and spill granularity */
#define BUFFER_MAX_CACHES 64      /* threads that may register a cache */

/* buffer.flags: every bit is handed out here, and only here.
 *   bit  0     BUFFER_F_TRACED
 *   bit  1     BUFFER_F_NEXT_PRESENT
 *   bit  2     BUFFER_F_FLOW_HASH
 *   bit  3     BUFFER_F_L4_CSUM_PENDING
 *   bit  4     BUFFER_F_DIST_ORDERED
 *   bit  5     BUFFER_F_DTRACE
 *   bit  6     free
 *   bit  7     BUFFER_F_L2_GROUP
 *   bits 8-27  free
 *   bits 28-31 BUFFER_SCHED_CLASS: the scheduling class sched-ingress gave
 *              the packet (0: none), read by the distributor and sched-egress
 */
#define BUFFER_F_TRACED (1u << 0)      /* trace_handle is valid */
#define BUFFER_F_NEXT_PRESENT (1u << 1) /* next_buffer chains more data */
#define BUFFER_F_FLOW_HASH (1u << 2)   /* flow_hash is set (NIC RSS or software) */
#define BUFFER_F_L4_CSUM_PENDING (1u << 3)
#define BUFFER_F_DIST_ORDERED (1u << 4) /* on a distributor worker: hand back for reordering (flow_tag) */
#define BUFFER_F_DTRACE (1u << 5)     /* in the dispatch trace: without BUFFER_F_TRACED,
				       * trace_handle holds its trace id (graph/dispatch_trace.c) */
#define BUFFER_F_L2_GROUP (1u << 7)    /* came in a broadcast or multicast frame (ethernet-input, L3) */
#define BUFFER_SCHED_CLASS_SHIFT 28
#define BUFFER_SCHED_CLASS_MASK (0xfu << BUFFER_SCHED_CLASS_SHIFT)

/* The hot header: everything a node reads per packet sits in this line. */
struct buffer {
	alignas(64) int16_t current_data; /* offset of packet start from data[] (may be < 0 into headroom) */
	uint16_t current_length;         /* bytes from current_data in this buffer */
	uint32_t flags;
	uint32_t next_buffer;            /* chain, valid with BUFFER_F_NEXT_PRESENT */
	uint32_t total_length_not_including_first;
	uint32_t rx_if;                  /* interface index the packet arrived on */
	uint32_t tx_if;                  /* interface index chosen for output */
	uint32_t flow_hash;
	uint32_t trace_handle;
	uint16_t error;                  /* global error index, set before error-drop */
	uint8_t pool_index;
	uint8_t l2_len;
	uint16_t l3_offset;              /* relative to data[] */
	uint16_t flow_tag;               /* 15-bit tag for the distributor; on a worker, with
					  * BUFFER_F_DIST_ORDERED: the handoff tag (sequence number) */
	uint64_t timestamp_ns;           /* rx time or release time (sched) */
	uint8_t opaque[16];              /* scratch for the node that owns the packet now */
};
_Static_assert(sizeof(struct buffer) == 64, "buffer header must be one cache line");

struct buffer_config {
	uint32_t buffers_per_numa; /* default 16384 */
	uint32_t data_size;        /* default 2048 */
	uint64_t page_size;        /* 0: try 2M hugepages, fall back to 4K; 4096: never hugepages */
};

/* Per-pool accounting, as `show buffers` prints it. */
struct buffer_pool_stats {
	uint32_t numa_node;
	uint32_t n_total;
	uint32_t n_free_pool;            /* in the pool's shared free list */
	uint32_t n_cached;               /* sum over thread caches */
	uint32_t n_in_use;               /* n_total - n_free_pool - n_cached */
	uint32_t n_caches;
	uint32_t cached[BUFFER_MAX_CACHES]; /* per registered cache, by cache index */
	bool hugepages;
};

struct buffer_main {
	uint8_t *base;      /* start of the reserved range: buffer index 0 */
	uint32_t stride;    /* bytes from one header to the next */
	uint32_t data_size;
	uint32_t n_pools;
	uint32_t index_span; /* indices reserved per pool */
};
extern struct buffer_main buffer_main;

/* Create one pool per NUMA node that has memory. Logs one line saying whether
 * hugepages back the pools. Returns 0 or a negative errno (reason in errbuf). */
int buffer_main_init(const struct buffer_config *cfg, char *errbuf, size_t errlen);

/* Release every pool. Buffers still in use are reported by the caller first. */
void buffer_main_free(void);

/* Default configuration values. */
void buffer_config_default(struct buffer_config *cfg);

static inline struct buffer *buffer_get(uint32_t bi)
{
	return (struct buffer *)(buffer_main.base + (uint64_t)bi * buffer_main.stride);
}

static inline uint32_t buffer_index(const struct buffer *b)
{
	return (uint32_t)(((const uint8_t *)b - buffer_main.base) / buffer_main.stride);
}

/* Start of the data area (after headroom). */
static inline uint8_t *buffer_data_area(struct buffer *b)
{
	return (uint8_t *)b + sizeof(struct buffer) + BUFFER_HEADROOM;
}

/* First byte of the packet. */
static inline uint8_t *buffer_data(struct buffer *b)
{
	return buffer_data_area(b) + b->current_data;
}

/* Move the packet start by delta bytes (positive: strip a header). */
static inline void buffer_advance(struct buffer *b, int delta)
{
	b->current_data = (int16_t)(b->current_data + delta);
	b->current_length = (uint16_t)(b->current_length - delta);
}

/* Buffers in the chain starting at bi (1 for a lone buffer): what holders
 * count, since a chain's buffers leave the pool together. */
static inline uint32_t buffer_chain_length(uint32_t bi)
{
	uint32_t n = 1;
	for (struct buffer *b = buffer_get(bi); b->flags & BUFFER_F_NEXT_PRESENT; b = buffer_get(b->next_buffer))
		n++;
	return n;
}

/* The state of a buffer in a pool, a cache or fresh from buffer_alloc:
 * current_data 0, current_length 0, flags 0, next_buffer BUFFER_INVALID,
 * total_length_not_including_first 0, trace_handle 0, error 0, l2_len 0 and
 * pool_index its pool's. The other fields (rx_if, tx_if, flow_hash,
 * l3_offset, flow_tag, timestamp_ns, opaque) hold whatever the last user
 * left: the node that needs one writes it first (flow_hash counts only with
 * BUFFER_F_FLOW_HASH, trace_handle only with BUFFER_F_TRACED).
 *
 * Two stores do it, which is why the fields sit where they do: the first 16
 * bytes from a constant, and the 8 bytes from trace_handle to l2_len with
 * the pool index in place. Buffers are reset when freed (the header is in
 * cache then, its flags just read), so buffer_alloc only copies indices. */
_Static_assert(offsetof(struct buffer, current_length) == 2 && offsetof(struct buffer, flags) == 4 &&
		       offsetof(struct buffer, next_buffer) == 8 &&
		       offsetof(struct buffer, total_length_not_including_first) == 12,
	       "buffer_reset's first store covers these fields");
_Static_assert(offsetof(struct buffer, error) == offsetof(struct buffer, trace_handle) + 4 &&
		       offsetof(struct buffer, pool_index) == offsetof(struct buffer, trace_handle) + 6 &&
		       offsetof(struct buffer, l2_len) == offsetof(struct buffer, trace_handle) + 7,
	       "buffer_reset's second store covers these fields");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "buffer_reset's constants are little-endian");

typedef uint64_t buffer_u64x2 __attribute__((vector_size(16)));

static inline void buffer_reset(struct buffer *b, uint8_t pool_index)
{
	/* next_buffer (bytes 8..11) is BUFFER_INVALID, the rest 0. */
	*(buffer_u64x2 *)b = (buffer_u64x2){ 0, BUFFER_INVALID };
	uint64_t w = (uint64_t)pool_index << 48;
	memcpy((uint8_t *)b + offsetof(struct buffer, trace_handle), &w, sizeof(w));
}

/* Register the calling thread's buffer cache. Threads that never register
 * still allocate and free, straight from the pool under its lock. Returns the
 * cache index or a negative errno. */
int buffer_thread_register(void);

/* Flush the calling thread's cache back to the pools and unregister it. */
void buffer_thread_unregister(void);

/* Allocate up to n buffers from the pool of numa_node (-1: the calling
 * thread's node). Returns how many were allocated (fewer only when the pool
 * is exhausted), in the state buffer_reset describes. Thread-safe. */
uint32_t buffer_alloc(uint32_t *bi, uint32_t n, int numa_node);

/* Return n buffers (and their chains) to their pools, resetting each
 * (buffer_reset). Thread-safe. */
void buffer_free(const uint32_t *bi, uint32_t n);

/* buffer_free for n buffers the caller has already put in buffer_reset's
 * state (each with its own pool index), none of them chained: with one pool
 * and a registered cache only their indices are copied, the headers are not
 * touched (a NIC's tx queue resets a header while it has it in cache, at
 * descriptor time, and frees the batch later). Otherwise as buffer_free.
 * Thread-safe. */
void buffer_free_reset(const uint32_t *bi, uint32_t n);

/* Accounting for one pool; returns 0 or -ENOENT. */
int buffer_pool_stats(uint32_t pool_index, struct buffer_pool_stats *st);

/* Total buffers in use across all pools (allocated and not yet freed). */
uint64_t buffer_n_in_use(void);

/* Copy n bytes into a fresh buffer's data area; returns the index or
 * BUFFER_INVALID. A control-path helper (tests, generators), not for rx. */
uint32_t buffer_from_bytes(const void *bytes, uint32_t n, int numa_node);

/* The same for any n: the bytes beyond one buffer's data size go into a
 * chain, as a driver receiving a jumbo frame builds it. Control path. */
uint32_t buffer_chain_from_bytes(const void *bytes, uint32_t n, int numa_node);

/* Copy the packet starting at b (its whole chain) into dst, at most max
 * bytes; returns the bytes copied and sets *total to the packet's length. */
uint32_t buffer_chain_copy_out(const struct buffer *b, void *dst, uint32_t max, uint32_t *total);

/* ---- who holds the buffers in use (`show buffers`) ---- */

/* Every buffer outside the pools and the thread caches is held by someone: a
 * device ring, a frame pending at a node, a handoff ring, a backlog, a timer
 * event, a packet waiting for ARP or for its release time. Each subsystem
 * that keeps buffers past its own call registers a holder that says how many
 * it holds now, per place; whatever the holders do not account for is
 * "unattributed": a leak, or a subsystem that forgot to register. */
#define BUFFER_MAX_HOLDERS 32
#define BUFFER_HOLDER_NAME_SIZE 24
#define BUFFER_WHERE_SIZE 48

struct buffer_tally;

/* From a holder's report: n buffers held at `where` ("eth0 rx 0", "worker 1
 * backlog"; NULL or "": the holder as a whole). Call once per place; places
 * holding nothing may be left out. */
void buffer_tally_add(struct buffer_tally *t, const char *where, uint64_t n);

/* A holder's report of what ctx holds now. Runs on a control thread with the
 * datapath parked (see buffer_attribute), so it may read datapath state
 * plainly; it must not block, allocate buffers or free them. */
typedef void(buffer_holder_fn_t)(void *ctx, struct buffer_tally *t);

/* Register fn(ctx) as holder `name` (the subsystem: "device", "frames",
 * "distributor", "sched"). Control path, any thread. Returns 0, -EEXIST
 * (fn and ctx already registered) or -ENOSPC (BUFFER_MAX_HOLDERS). */
int buffer_holder_register(const char *name, buffer_holder_fn_t *fn, void *ctx);

/* Forget the holder registered with fn and ctx; nothing when there is none.
 * After it returns, fn(ctx) is not running and will not run again. */
void buffer_holder_unregister(buffer_holder_fn_t *fn, void *ctx);

struct buffer_holding {
	char holder[BUFFER_HOLDER_NAME_SIZE];
	char where[BUFFER_WHERE_SIZE];
	uint64_t n;
};

struct buffer_attribution {
	uint64_t n_total, n_free_pool, n_cached, n_in_use; /* over every pool */
	uint64_t n_attributed;    /* sum of the holdings */
	int64_t n_unattributed;   /* in use - attributed: > 0 a leak, < 0 a holder counting twice */
	uint32_t n_holdings;
	struct buffer_holding *holdings; /* in holder registration order; a holder
					  * that reported nothing has one line of 0 */
};

/* Ask every holder what it holds and set it against the pools. Exact only
 * while no buffer moves: call it with the datapath parked (graph barrier)
 * and no control thread allocating; while traffic runs the figures are a
 * mix of moments. Returns 0 or -ENOMEM; release with
 * buffer_attribution_free. */
int buffer_attribute(struct buffer_attribution *a);
void buffer_attribution_free(struct buffer_attribution *a);

#endif
