/* Hierarchical QoS for one egress interface: port -> subscriber -> class
 * -> queue, as DPDK's rte_sched (port, pipe, traffic class, queue) and
 * Linux HTB (rate, ceil) arrange it.
 *
 * Port. One token bucket (rate, burst): the interface's `sched shaper`.
 * Rate 0: the port is not limited, subscribers only by their own buckets.
 *
 * Subscriber. Selected per packet by one match (destination or source
 * IPv4/IPv6 prefix, VLAN id of the frame, rx interface; longest prefix
 * wins, and the kinds are tried in that order: dst, src, vlan, rx
 * interface); packets matching none go to subscriber 0, "default", which
 * has no guaranteed rate (it only borrows). A subscriber has a rate (its
 * guarantee), a ceil (HTB's: the most it may reach by borrowing the
 * port's unused rate; ceil = rate: no borrowing), one burst for both
 * buckets, and a weight. Its state, as HTB's class mode:
 *   green   both buckets hold the head packet's cost: sends at its rate;
 *   yellow  only the ceil bucket does: sends what green subscribers leave;
 *   asleep  neither does: on the wheel until the ceil bucket will.
 * The port serves green subscribers first, deficit round robin by weight,
 * then yellow ones, the same way. A subscriber is in at most one of the
 * two lists and at most once on the wheel (yellow ones wait there for
 * their green time), so serving a packet touches O(1) state whatever the
 * number of subscribers.
 *
 * Class and queue. The packet's class (sched_buffer_class, sched/class.h)
 * has a priority 0..7; each subscriber has a queue per priority and
 * serves them in strict priority. A queue holds at most queue_limit
 * packets (more are tail-dropped at enqueue); the port at most max_held,
 * and when it is full the fattest subscriber's oldest packet of its lowest
 * priority makes room for the arrival (RFC 8290 section 4.1's drop from
 * the fattest queue; the fattest a hint, hqos.c's push_out). With CoDel
 * on, a queue runs RFC 8289's control law at dequeue: its drops wait in a
 * small stash the caller drains (hqos_take_drops); with ecn, an ECT
 * packet (RFC 3168) is marked CE instead of dropped.
 *
 * Bytes. Every level counts the frame (Ethernet header to the end of the
 * payload, chain included) plus the port's overhead (bytes the wire adds
 * per frame: preamble and inter-frame gap 20, FCS 4, a VLAN tag a later
 * stage adds 4), the subscriber's buckets plus its own overhead (an
 * encapsulation added downstream of the port). Rates in bit/s; the
 * arithmetic is exact in integers, as the egress shaper's (egress.h).
 *
 * Held packets are linked through opaque[0..3] of their buffer and carry
 * their enqueue time in timestamp_ns (CoDel's sojourn time).
 *
 * Thread-safety: one owner thread runs enqueue, dequeue and next_ns; the
 * control thread changes the configuration with the owner parked at the
 * barrier. The counters may be read from any thread (relaxed).
 */
#ifndef SLUICE_SCHED_HQOS_H
#define SLUICE_SCHED_HQOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/egress.h"
#include "sched/impair.h"

#define HQOS_SUBS_MAX 65536u     /* per port, the default one included */
#define HQOS_NAME_SIZE 32
#define HQOS_WEIGHT_MAX 1000
#define HQOS_OVERHEAD_MAX 256
#define HQOS_QUEUE_LIMIT_MAX 65536u
#define HQOS_DROP_STASH 256      /* CoDel drops a dequeue may leave for take_drops */
#define HQOS_DEFAULT_ID 0        /* "default": packets no match selects */
#define HQOS_IMPAIR_MAX 64       /* impaired subscribers per port (~150 KB + its pool: impair.h) */
#define HQOS_DROP_IMPAIR_LIMIT 16 /* opaque[4] of a packet an impairer released into a full queue */

enum hqos_match_kind {
	HQOS_MATCH_NONE = 0,
	HQOS_MATCH_DST4,
	HQOS_MATCH_SRC4,
	HQOS_MATCH_DST6,
	HQOS_MATCH_SRC6,
	HQOS_MATCH_VLAN,  /* value: the frame's outer VLAN id */
	HQOS_MATCH_RX_IF, /* value: buffer rx_if */
	HQOS_N_MATCH,
};

struct hqos_match {
	uint8_t kind; /* enum hqos_match_kind */
	uint8_t plen; /* prefix length for the address kinds */
	uint8_t addr[16]; /* network byte order; IPv4 in the first 4 */
	uint32_t value;   /* VLAN id or interface index */
};

struct hqos_sub_config {
	char name[HQOS_NAME_SIZE];
	uint64_t rate_bps;    /* guarantee; 0 only for default (borrows only) */
	uint64_t ceil_bps;    /* >= rate; 0: = rate */
	uint64_t burst_bytes; /* both buckets' depth */
	uint32_t weight;      /* 1..HQOS_WEIGHT_MAX: share of the port among peers */
	uint32_t overhead;    /* bytes per frame this level adds to the port's */
	struct hqos_match match; /* vlan, rx-if: addr and plen zero; prefixes: value zero */
};

struct hqos_port_config {
	uint32_t overhead;    /* bytes per frame at every level, 0..HQOS_OVERHEAD_MAX */
	uint32_t queue_limit; /* packets per queue, 1..HQOS_QUEUE_LIMIT_MAX */
	uint32_t max_held;    /* packets in all queues, 1..SCHED_HELD_MAX */
	bool codel, ecn;
	uint64_t codel_target_ns, codel_interval_ns;
};

struct hqos_counters {
	uint64_t enqueued, departed_packets, departed_bytes; /* bytes: frame bytes, no overhead */
	uint64_t dropped_limit;  /* queue full or max-held at enqueue */
	uint64_t dropped_codel, marked;
};

struct hqos_sub_stats {
	struct hqos_sub_config cfg;
	uint32_t id;
	const char *state; /* idle, green, yellow, asleep */
	uint64_t backlog_packets, backlog_bytes;
	int64_t tokens_bytes, ctokens_bytes;
	struct hqos_counters c;
	bool has_impair; /* an impairer was set (impair: its settings and counters) */
	struct sched_impair_stats impair;
};

struct hqos_port_stats {
	struct hqos_port_config cfg;
	uint64_t rate_bps, burst_bytes;
	int64_t tokens_bytes;
	uint32_t subscribers; /* default included */
	uint64_t held;
	struct hqos_counters c; /* the sum over subscribers, removed ones included */
};

struct hqos;

/* Defaults: overhead 0, queue-limit 64, max-held 65536, CoDel off (target
 * 5 ms, interval 100 ms: RFC 8289 section 4.3 and 4.4). */
void hqos_port_config_default(struct hqos_port_config *cfg);

/* A port with only the default subscriber (rate 0, ceil unlimited, weight
 * 1) and no port limit. NULL with the reason in err. */
struct hqos *hqos_create(const struct hqos_port_config *cfg, char *err, size_t errlen);

/* Free the port and every buffer it holds (stash included). */
void hqos_destroy(struct hqos *h);

/* New port settings; queues over a smaller limit keep their packets.
 * Returns 0 or -EINVAL (reason in err). */
int hqos_set_port(struct hqos *h, const struct hqos_port_config *cfg, char *err, size_t errlen);

/* The port bucket (the interface's shaper): rate 0 removes the limit.
 * Returns 0 or -EINVAL. */
int hqos_set_rate(struct hqos *h, uint64_t rate_bps, uint64_t burst_bytes, uint64_t now_ns);

/* Add a subscriber, or change the one of that name in place (its packets
 * stay queued; its buckets start full). Returns its id or -EINVAL,
 * -EEXIST (another subscriber has that match), -ENOSPC, -ENOMEM; reason in
 * err. "default" takes no match. */
int hqos_sub_set(struct hqos *h, const struct hqos_sub_config *cfg, uint64_t now_ns, char *err, size_t errlen);

/* Remove a subscriber; the rest keep their state. Its queued packets go
 * back to the pool, their number in *freed (counted as dropped_limit in
 * the port's counters). Returns 0, -ENOENT or -EINVAL (default). */
int hqos_sub_remove(struct hqos *h, const char *name, uint64_t *freed);

/* The id of the subscriber called name, or -ENOENT. */
int hqos_sub_find(const struct hqos *h, const char *name);

/* The next subscriber id in use after id (-1 to start), or -1. */
int hqos_sub_next(const struct hqos *h, int id);

/* The subscriber a packet selects (the match tables), default when none. */
uint32_t hqos_classify(const struct hqos *h, const struct buffer *b);

/* Take n packets at now; prio maps a class id to its priority. Packets
 * over a queue's limit, or at max-held those of the fattest subscriber
 * (an arrival or an older packet it pushed out), go to dropped[] (the
 * return is their number, at most n). */
uint32_t hqos_enqueue(struct hqos *h, const uint32_t *bi, uint32_t n, const uint8_t prio[SCHED_MAX_CLASSES],
		      uint64_t now_ns, uint32_t *dropped);

/* hqos_enqueue with each packet's subscriber given (ids[i], as
 * hqos_sub_set or hqos_sub_find returned it; one not in use: default)
 * instead of looked up: for a caller that has classified already. */
uint32_t hqos_enqueue_ids(struct hqos *h, const uint32_t *bi, const uint32_t *ids, uint32_t n,
			  const uint8_t prio[SCHED_MAX_CLASSES], uint64_t now_ns, uint32_t *dropped);

/* Hand back, in departure order, up to max packets due at now. Returns
 * how many; call again when it returns max. CoDel's drops wait in the
 * stash (dequeue stops early when it is full). */
uint32_t hqos_dequeue(struct hqos *h, uint64_t now_ns, uint32_t *out, uint32_t max);

/* CoDel's drops since the last call (up to max). */
uint32_t hqos_take_drops(struct hqos *h, uint32_t *out, uint32_t max);

/* Earliest time dequeue will have something; UINT64_MAX when empty. */
uint64_t hqos_next_ns(const struct hqos *h);

/* Subscriber id's impairment (netem's words, sched/impair.h), applied to
 * its packets as they enter the hierarchy, before its queues (netem as the
 * child of an HTB class: held packets wait their departure time, then
 * queue and are shaped as any arrival). Packets it duplicates are counted
 * as arrivals when released. NULL or an inactive c: off (the impairer
 * and its counters stay; packets held still leave at their times). 0, or
 * -ENOENT (no such id), -ENOSPC (HQOS_IMPAIR_MAX impaired already),
 * -EINVAL, -ENOMEM, reason in err. Owner parked. */
int hqos_sub_set_impair(struct hqos *h, uint32_t id, const struct sched_impair_config *c, char *err,
			size_t errlen);

/* Subscriber id's impairer (sched_impair_stats), NULL if never set. */
const struct sched_impair *hqos_sub_impair(const struct hqos *h, uint32_t id);

/* The impairers' drops since the last call (up to max), each with its
 * reason in opaque[4]: sched_impair_drop_reason (loss, over max-held) or
 * HQOS_DROP_IMPAIR_LIMIT (released into a full queue, or pushed out of
 * the port's max-held by one). Unbounded: linked through the buffers. */
uint32_t hqos_take_impair_drops(struct hqos *h, uint32_t *out, uint32_t max);

/* Hand back up to max held packets whatever their time (tear-down). */
uint32_t hqos_flush(struct hqos *h, uint32_t *out, uint32_t max);

/* Packets held (queues, stash, impairers and their drops). */
uint64_t hqos_held(const struct hqos *h);

/* Buffers held, chains whole (`show buffers`); owner or barrier. */
uint64_t hqos_held_buffers(const struct hqos *h);

/* Configuration, state and counters; counters from any thread, the rest
 * owner or barrier. sub_stats returns -ENOENT for an id not in use. */
int hqos_sub_stats(const struct hqos *h, uint32_t id, struct hqos_sub_stats *st);
void hqos_port_stats(const struct hqos *h, struct hqos_port_stats *st);

/* For readers outside the owner thread (the stats segment) that hold what
 * keeps the subscriber array still (the command lock): the number of
 * subscribers (default included) and in *gen a generation that changes
 * whenever one is added or removed; a subscriber's name (NULL: id not in
 * use); its counters alone, relaxed (-ENOENT: id not in use). */
uint32_t hqos_sub_count(const struct hqos *h, uint64_t *gen);
const char *hqos_sub_name(const struct hqos *h, uint32_t id);
int hqos_sub_counters(const struct hqos *h, uint32_t id, struct hqos_counters *c);

/* For the same readers: how many subscribers have an impairer (at most
 * HQOS_IMPAIR_MAX), and the k-th (k below that) with its subscriber's id
 * in *id. The order changes only when an impairer is first set or its
 * subscriber removed (the generation of hqos_sub_count changes then). */
uint32_t hqos_impair_count(const struct hqos *h);
const struct sched_impair *hqos_impair_at(const struct hqos *h, uint32_t k, uint32_t *id);

/* Bytes the hierarchy holds: itself, its subscriber arrays as allocated,
 * the name hash, the match table and the subscribers' impairers (packets
 * are linked through their buffers, counted in the pools): `show memory`. */
size_t hqos_mem_bytes(const struct hqos *h);

/* Bytes of state per subscriber (docs/hqos.md's figure). */
size_t hqos_sub_state_bytes(void);

/* Parse "10.1.0.0/24" or "2001:db8::/48" into m (kind from dst, the
 * address family). Host bits must be zero. Returns 0 or -EINVAL. */
int hqos_match_prefix(struct hqos_match *m, bool dst, const char *text);

/* The match as text ("dst 10.1.0.0/24", "vlan 100", "rx-if 3"). */
void hqos_match_format(const struct hqos_match *m, char *buf, size_t len);

#endif
