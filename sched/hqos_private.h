/* The hierarchy's internals (hqos.h), shared by its datapath (hqos.c)
 * and its configuration and match tables (hqos_conf.c).
 */
#ifndef SLUICE_SCHED_HQOS_PRIVATE_H
#define SLUICE_SCHED_HQOS_PRIVATE_H

#include "sched/hqos.h"

#define UNITS_PER_BYTE 8000000000ll /* credit units: 1/8e9 byte, so 1 ns at r bit/s adds r */
#define CATCH_UP_MAX (INT64_MAX / 4)
#define NIL UINT32_MAX
#define CEIL_NONE UINT64_MAX /* default's ceil: only the port limits it */
#define QUANTUM_UNIT 2048    /* DRR bytes per weight unit: a full frame fits one visit */
#define CODEL_MAXPACKET 1514 /* RFC 8289 section 5.1: a queue of one MTU never drops */
#define WHEEL_SHIFT 12       /* 4.096 us slots */
#define WHEEL_SLOTS 16384u   /* 67 ms: a 1 Mbit/s subscriber's 1514-byte frame is 12 ms */
#define WHEEL_MASK (WHEEL_SLOTS - 1)
#define WHEEL_WORDS (WHEEL_SLOTS / 64)
#define MATCH_MIN_SLOTS 64

enum { ST_IDLE = 0, ST_GREEN, ST_YELLOW, ST_ASLEEP };

#define SUB_IMPAIRED 2 /* hq_sub.in_use: its arrivals go through its impairer first */
/* The two service lists: green subscribers (under their rate), and all
 * that may send by borrowing (green and yellow), in one order that a
 * change between green and yellow keeps: served only when no subscriber
 * is green. */
enum { L_GREEN = 0, L_BORROW = 1 };

/* A FIFO linked through the buffers' opaque[0..7]: the next packet's
 * index and its length, so the head's length is known without touching
 * the head buffer (decisions read head_len only). */
struct hq_queue {
	uint32_t head, tail, n, bytes, head_len;
};

struct hq_codel { /* RFC 8289 section 5.1's per-queue state */
	uint64_t first_above, drop_next;
	uint32_t count, lastcount;
};

struct hq_list {
	uint32_t head, tail, n;
};

struct hq_sub {
	/* what every packet touches, first: one cache line and a half */
	uint8_t mask;     /* bit p: q[p] not empty */
	uint8_t state;    /* ST_*: green in both lists, yellow in L_BORROW */
	uint8_t in_use;
	uint8_t dropping; /* bit p: CoDel of q[p] in its dropping state */
	int32_t deficit[2];    /* DRR's, per list */
	uint32_t quantum;
	uint32_t overhead; /* port's + own */
	uint64_t rate, ceil; /* ceil == rate: one bucket; CEIL_NONE: no ceil */
	int64_t tokens, ctokens, cap;
	uint64_t last_ns;
	uint32_t lk[2][2];     /* [L_GREEN or L_BORROW][prev, next] list links */
	uint32_t wprev, wnext; /* wheel slot links */
	uint32_t wslot;        /* NIL: not on the wheel */
	uint64_t wake_ns;
	struct hq_queue q[SCHED_N_PRIO];
	struct hqos_counters c;
	struct hq_codel codel[SCHED_N_PRIO];
};

/* Open addressing, linear probing, backward-shift deletion: a match key
 * and the subscriber it selects. */
struct hq_match_slot {
	uint32_t sub; /* NIL: empty */
	uint8_t kind, plen;
	uint8_t addr[16];
	uint32_t value;
};

/* The IPv4 prefixes again (dst and src), for the per-packet match: one
 * 8-byte slot each, the whole key in one word, so a probe is a multiply,
 * one load and one compare (the general table's 28-byte slots and 16-byte
 * keys cost ~100 instructions a probe). Bits 0..31 the prefix (host
 * order, host bits zero), 32..37 its length, 38 set for src, 40..63 the
 * subscriber; HQ_V4_EMPTY: no entry (its key bits are no valid key).
 * Open addressing, linear probing, at most half full. */
#define HQ_V4_EMPTY UINT64_MAX
#define HQ_V4_KEY_MASK 0xffffffffffull
#define HQ_V4_SRC (1ull << 38)

struct hq_v4_table {
	uint64_t *slot;
	uint32_t mask, n;
};

struct hq_match_table {
	struct hq_match_slot *slot;
	uint32_t mask, n;
	uint32_t n_kind[HQOS_N_MATCH];
	uint64_t plens[HQOS_N_MATCH][3]; /* bit l: some prefix of length l */
	struct hq_v4_table v4; /* the DST4 and SRC4 entries of slot[], for the match */
};

struct hqos {
	struct hqos_port_config cfg;
	struct hq_sub *sub;
	struct hqos_sub_config *conf; /* by id, cold */
	uint32_t n_alloc, n_subs, free_head; /* free ids chained through lk[0][1] */
	uint64_t sub_gen; /* bumped when a subscriber is added or removed */
	uint32_t *names; /* name hash: ids, NIL empty */
	uint32_t names_mask;
	struct hq_match_table mt;
	struct hq_list list[2];
	/* the port bucket */
	uint64_t rate_bps, burst_bytes;
	int64_t tokens, cap;
	uint64_t last_ns;
	bool backlogged;
	uint64_t run_ns; /* the last dequeue's now */
	uint64_t held;
	uint32_t fat; /* the subscriber with the longest backlog met at max-held (a hint) */
	/* the wheel of wake times */
	uint64_t cur; /* absolute slot processed last */
	uint32_t whead[WHEEL_SLOTS];
	uint64_t wmin[WHEEL_SLOTS];
	uint64_t wbits[WHEEL_WORDS];
	uint64_t wsum[WHEEL_WORDS / 64];
	uint32_t n_wheel;
	/* CoDel's drops for the caller */
	uint32_t n_stash;
	uint32_t stash[HQOS_DROP_STASH];
	struct hqos_counters gone; /* of removed subscribers */
	/* impaired subscribers (hqos_impair.c): an impairer each, in front
	 * of their queues; kept when set off, so their counters stay */
	uint32_t n_imp;
	struct hq_imp {
		uint32_t sub;
		struct sched_impair *m;
	} imp[HQOS_IMPAIR_MAX];
	uint8_t prio[SCHED_MAX_CLASSES]; /* the last enqueue's, for what the impairers release */
	uint32_t idrop_head, idrop_tail, n_idrop; /* their drops, linked through opaque[0..3] */
};

static inline void hq_add(uint64_t *p, uint64_t n)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

static inline uint64_t hq_rd(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline uint32_t *hq_link(uint32_t bi)
{
	return (uint32_t *)buffer_get(bi)->opaque;
}

static inline uint64_t hq_frame_bytes(const struct buffer *b)
{
	uint64_t len = b->current_length;
	if (b->flags & BUFFER_F_NEXT_PRESENT)
		len += b->total_length_not_including_first;
	return len;
}

/* Place a subscriber by its state at now (hqos.c); take it off the
 * lists and the wheel before it goes (hqos_conf.c). */
void hqos_sub_place(struct hqos *h, uint32_t id, uint64_t now);
void hqos_sub_unlink(struct hqos *h, uint32_t id);
void hqos_wheel_init(struct hqos *h);

/* Subscriber impairment (hqos_impair.c): an arrival of an impaired
 * subscriber into its impairer; what the impairers release at now into
 * the queues (hqos.c's enqueue, the last enqueue's priorities); a
 * removed subscriber's impairer freed with its packets (their number
 * back). */
void hqos_impair_in(struct hqos *h, uint32_t id, uint32_t bi, uint64_t now_ns);
void hqos_impair_release(struct hqos *h, uint64_t now_ns);
uint64_t hqos_impair_remove(struct hqos *h, uint32_t id);
uint64_t hqos_impair_next_ns(const struct hqos *h);
/* One packet into subscriber id's queue (hqos.c): 1 held, 0 dropped, 2
 * taken with *victim pushed out. */
uint32_t hqos_enqueue_one(struct hqos *h, uint32_t bi, uint32_t id, uint64_t now_ns, uint32_t *victim);

/* hqos_classify of m <= HQ_CLASSIFY_MAX packets into ids[] (hqos_conf.c),
 * their subscribers' state prefetched. */
#define HQ_CLASSIFY_MAX 64
void hqos_classify_burst(const struct hqos *h, const uint32_t *bi, uint32_t m, uint32_t *ids);

#endif
