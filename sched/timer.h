/* The timer service: a hierarchical timing wheel for deadlines within its
 * horizon, skiplists for the rest (and for deadlines that need finer than a
 * tick), one service per datapath thread, expiries delivered in batches on
 * the owning thread to a callback or, as buffers, to a node.
 *
 * Time is in nanoseconds on the service's clock (timer_clock_ns() unless a
 * test gives its own). Rounding, written once because the tests' reference
 * applies the same rule:
 *   - a timer with deadline D (ns) gets the expiry tick E = ceil(D / tick);
 *     it fires at the first run whose time `now` has floor(now / tick) >= E.
 *     Hence now >= E * tick >= D: never early; and E * tick < D + tick: a
 *     service that runs at least once a tick fires it at most one tick late.
 *   - a TIMER_PRECISE timer fires at the first run with now >= D.
 *   - a deadline at or before the last run fires at the next run.
 *
 * When a callback runs, a one-shot timer is already gone (its handle is
 * stale: arm a new one) and a periodic timer is already armed for its next
 * period (cancel or re-arm it freely). A periodic timer keeps its phase
 * (next deadline = previous deadline + period); after a stall of several
 * periods it fires once and resumes at the first period boundary after
 * the run's time (missed periods are coalesced, not caught up).
 *
 * A node target receives, in frames of ordinary buffers, one buffer per
 * expiry: the buffer's opaque area holds the struct timer_event (read it
 * with timer_buffer_event), its length is 0, and the node owns the buffer
 * (free it, or reuse it). Nodes that take timer events take nothing else.
 *
 * Thread-safety: a service belongs to one thread (its owner). Every
 * function here is for the owner only, except the timer_producer_* family,
 * which other threads use through a producer attached once per thread, and
 * timer_stats, which any thread may call (relaxed, tear-free reads).
 */
#ifndef SLUICE_SCHED_TIMER_H
#define SLUICE_SCHED_TIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/buffer.h"

struct conf_section;
struct graph;
struct graph_thread;
struct timer_service;
struct timer_producer;

/* gen << 32 | shard << 24 | index, the generation 24 bits (bits 56-63 are
 * 0); 0 is never a valid handle. A handle whose generation no longer
 * matches its timer is refused everywhere: a timer's generation moves on
 * each time it is freed (cancel, or a one-shot's expiry; re-arm keeps it).
 * A timer whose generation would wrap (after 2^24 - 1 uses) is retired,
 * never handed out again, while fewer than max_timers / 64 are retired;
 * past that bound it starts again at 1, and then a handle kept across
 * those 2^24 - 1 uses of its timer could name a later one. So a caller
 * recognises a stale expiry by comparing the event's handle with the one
 * it keeps (docs/timers.md has the figures). */
typedef uint64_t timer_handle_t;

#define TIMER_TICK_NS_DEFAULT 10000u
#define TIMER_MAX_LEVELS 6       /* of 64 slots each: 6 bits of ticks per level */
#define TIMER_LEVELS_DEFAULT 6   /* 2^36 ticks: 7.9 days at 10 us */
#define TIMER_MAX_TIMERS (1u << 24)
#define TIMER_MAX_TARGETS 255 /* 8 bits in a timer, one value marks periodic ones */
#define TIMER_MAX_PRODUCERS 16
#define TIMER_LATE_BUCKETS 8

/* timer_spec.flags */
#define TIMER_PERIODIC (1u << 0) /* re-arm every interval_ns after each expiry */
#define TIMER_PRECISE (1u << 1)  /* fire at the deadline itself, not its tick */

/* What arrives for each expiry: 16 bytes, in a callback's array or a node
 * buffer's opaque area. The cookie is 32 bits (VPP's tw_timer has a u32
 * user handle); the handle tells a stale expiry from a live one. */
struct timer_event {
	uint32_t cookie;
	uint32_t reserved; /* 0 */
	timer_handle_t handle;
};
_Static_assert(sizeof(struct timer_event) == 16, "timer event is 16 bytes");

struct timer_spec {
	uint64_t deadline_ns; /* absolute; 0: now + interval_ns */
	uint64_t interval_ns; /* relative deadline when deadline_ns is 0; the period when periodic */
	uint32_t cookie;      /* handed back in the event */
	uint16_t target;      /* from timer_target_callback or timer_target_node */
	uint16_t flags;       /* TIMER_PERIODIC, TIMER_PRECISE */
};

/* Callback target: n expiries of timers armed with this target, in one
 * batch, on the owning thread. */
typedef void(timer_fn_t)(struct timer_service *ts, const struct timer_event *ev, uint32_t n, void *arg);

/* A clock in nanoseconds; monotonic. */
typedef uint64_t(timer_clock_fn_t)(void *arg);

/* The default clock: the cycle counter scaled to ns (a few ns to read). */
uint64_t timer_clock_ns(void *unused);

/* How producer threads reach a service (see bench/timers for the figures
 * behind the default). */
enum timer_xmode {
	TIMER_XMODE_RING = 0, /* requests on an SPSC ring that the owner drains each run */
	TIMER_XMODE_SHARD,    /* the producer's own wheel under a lock the owner takes each run */
};

struct timer_config {
	uint64_t tick_ns;         /* default 10 us */
	uint32_t max_timers;      /* armed at once on the owner, default 262144 (5 MB) */
	uint32_t levels;          /* wheel levels of 64 slots, 1..6, default 6 */
	uint32_t max_skiplist;    /* timers beyond the horizon or precise, default 16384 */
	uint32_t max_periodic;    /* periodic timers, default 4096 */
	uint32_t max_producers;   /* threads that may attach, default 2 */
	uint32_t producer_timers; /* armed at once per producer, default 65536 */
	uint32_t ring_size;       /* requests per producer ring (power of two), default 4096 */
	uint32_t xmode;           /* enum timer_xmode for producers, default ring */
	/* Not the timer service's own: the packet schedules that the same
	 * `sched` section configures (sched/egress.h, nodes/sched/sched_io.h). */
	uint32_t max_held;        /* packets sched-egress holds per interface, default 4096 */
	uint32_t class_depth;     /* packets per class queue in front of the workers, default 1024 */
};

void timer_config_default(struct timer_config *cfg);

/* The `sched { ... }` startup.conf section (struct timer_config). */
extern const struct conf_section timer_conf_section;

/* A service with its pools preallocated (no allocation happens per timer
 * afterwards). clock NULL: timer_clock_ns. NULL with the reason in err. */
struct timer_service *timer_service_create(const struct timer_config *cfg, timer_clock_fn_t *clock,
					   void *clock_arg, char *err, size_t errlen);

/* Free a service and everything it holds (armed timers are dropped;
 * buffers it kept for node events go back to their pool). */
void timer_service_destroy(struct timer_service *ts);

/* Let the service deliver node events on thread `thread_index` of g.
 * Returns 0 or a negative errno. */
int timer_service_bind(struct timer_service *ts, struct graph *g, uint32_t thread_index);

/* Register a callback target; returns its id (>= 0) or -ENOSPC. */
int timer_target_callback(struct timer_service *ts, timer_fn_t *fn, void *arg);

/* Register a node of the bound graph as a target; returns its id or a
 * negative errno (-EINVAL when the service is not bound). */
int timer_target_node(struct timer_service *ts, uint32_t node_index);

/* Arm a timer; *h receives its handle. Returns 0, -EINVAL (bad target,
 * zero period) or -ENOSPC (pool, skiplist or periodic table full). O(1)
 * for wheel timers, O(log n) for skiplist ones. Owner only. */
int timer_arm(struct timer_service *ts, const struct timer_spec *spec, timer_handle_t *h);

/* ns as ticks of the service's wheel, rounded up: convert an interval
 * once, then arm it with timer_arm_ticks as often as needed. */
uint64_t timer_ticks(const struct timer_service *ts, uint64_t ns);

/* Arm a one-shot timer `ticks` ticks after the service's last run (the
 * loop's time: VPP's relative start), with no clock read and no ns-to-tick
 * conversion. Exactly timer_arm with deadline_ns = last run's time +
 * ticks * tick_ns (the rounding above applies): it never fires before
 * that, and at most a tick after it when the service runs every tick; a
 * loop that has not run the service for a while arms that much earlier.
 * Returns as timer_arm (-EINVAL: bad target). Owner only. */
int timer_arm_ticks(struct timer_service *ts, uint64_t ticks, uint32_t cookie, uint16_t target, timer_handle_t *h);
#define TIMER_HAS_ARM_TICKS 1 /* for bench/timers built against older revisions (BEFORE=) */

/* Cancel an armed timer. Returns 0, or -ENOENT when the handle is stale,
 * the timer has fired (one-shot) or was cancelled. Owner only. */
int timer_cancel(struct timer_service *ts, timer_handle_t h);

/* Move an armed timer to a new deadline (deadline_ns, or now +
 * interval_ns when 0); a periodic timer also takes interval_ns as its new
 * period when it is not 0. Target, cookie and flags stay. The handle stays
 * valid. Returns 0, -ENOENT as timer_cancel, -ENOSPC. Owner only. */
int timer_rearm(struct timer_service *ts, timer_handle_t h, uint64_t deadline_ns, uint64_t interval_ns);

/* Run the service at its clock's time: take producers' requests, expire
 * due timers and deliver them in batches. Returns the expiries delivered.
 * Owner only. */
uint32_t timer_service_run(struct timer_service *ts);

/* The same at a given time (simulated clocks in tests). */
uint32_t timer_advance(struct timer_service *ts, uint64_t now_ns);

/* The service's clock now. */
uint64_t timer_now(const struct timer_service *ts);

/* Ticks from the last run to the earliest non-empty wheel slot (a lower
 * bound on the next expiry), UINT64_MAX when the wheel is empty. Found
 * through the per-level bitmaps, without scanning slots. Owner only. */
uint64_t timer_next_ticks(const struct timer_service *ts);

/* The event a node target received in buffer b. */
static inline const struct timer_event *timer_buffer_event(const struct buffer *b)
{
	return (const struct timer_event *)b->opaque;
}

/* ---- producers: other threads arming on this service ---- */

/* Attach the calling thread as a producer (control thread, before it
 * arms). NULL with the reason in err (-ENOSPC past TIMER_MAX_PRODUCERS). */
struct timer_producer *timer_producer_attach(struct timer_service *ts, char *err, size_t errlen);

/* Arm from the producer's thread. Ring mode: the request reaches the
 * owner at its next run (the timer cannot fire earlier than that, nor
 * earlier than its deadline); shard mode: armed at once. Returns 0,
 * -ENOSPC (the producer's timers or ring are full) or -EINVAL. */
int timer_producer_arm(struct timer_producer *p, const struct timer_spec *spec, timer_handle_t *h);

/* Arm n timers; returns how many were armed (the first ones; the caller
 * keeps the rest and retries later). One publication per burst. */
uint32_t timer_producer_arm_burst(struct timer_producer *p, const struct timer_spec *spec, uint32_t n,
				  timer_handle_t *h);

/* Cancel a timer this producer armed. Shard mode: 0 or -ENOENT at once.
 * Ring mode: 0 when the request is queued (the owner cancels it unless it
 * has fired; exactly one of the two happens), -ENOSPC when the ring is
 * full. */
int timer_producer_cancel(struct timer_producer *p, timer_handle_t h);

/* ---- statistics and the graph ---- */

struct timer_stats {
	uint64_t armed_level[TIMER_MAX_LEVELS];
	uint64_t armed_far;     /* beyond the horizon (skiplist) */
	uint64_t armed_precise; /* sub-tick (skiplist) */
	uint64_t armed_pending; /* due at the next run */
	uint64_t armed_total;
	uint64_t periodic;
	uint64_t expiries;
	uint64_t arms, cancels, rearms;
	uint64_t producer_requests;
	uint64_t producer_refused; /* ring requests the owner could not arm (their handles are dead) */
	uint64_t deferred;     /* expiries held back for want of buffers */
	uint64_t late[TIMER_LATE_BUCKETS]; /* run time - fire time: < tick/4, /2, 1, 2, 4, 8, 16, more */
	uint64_t memory_bytes; /* everything the service holds: the sum of mem below */
	/* Where memory_bytes goes (the bench prints it per armed timer). */
	struct timer_memory {
		uint64_t timers;    /* the timer pool's entries: max_timers (+ producers') x entry size */
		uint64_t heads;     /* list heads in the pool (levels x 64 slots + 3) and the wheel structs */
		uint64_t skiplist;  /* the skiplist node pool: max_skiplist + 2 nodes, preallocated */
		uint64_t periodic;  /* the periodic table: max_periodic entries, preallocated */
		uint64_t service;   /* the service struct (targets, event batch, spare buffers) */
		uint64_t producers; /* producer lanes: rings, return rings (shard wheels are above) */
		uint32_t entry_bytes; /* sizeof one pool entry (the per-timer record) */
	} mem;
	uint32_t levels;
	uint64_t tick_ns;
};

/* Counters of a service; any thread. */
void timer_stats(const struct timer_service *ts, struct timer_stats *st);

/* One service per datapath thread of g, run from the graph's loop hook and
 * reachable through graph_thread_user. Call after the workers started.
 * Returns 0 or a negative errno with the reason in err. */
int timer_services_install(struct graph *g, const struct timer_config *cfg, char *err, size_t errlen);

/* Remove the hook and destroy every service installed, those of workers
 * already stopped included (workers stopped or parked). */
void timer_services_uninstall(struct graph *g);

/* The service of datapath thread t (NULL when none is installed). */
struct timer_service *timer_service_of(const struct graph_thread *t);

#endif
