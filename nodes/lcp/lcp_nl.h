/* linux-cp's netlink listener: what Linux learns in the namespace(s)
 * holding the TAPs (addresses, routes, neighbours, nexthop objects, link
 * state; from FRR, BIRD, `ip`, anything) mirrored into sluice. rtnetlink(7),
 * through libmnl (libnl 3.7 has no type for nexthop objects, which FRR 8.4
 * installs by default; libmnl is the minimal, well-kept netlink library
 * that iproute2's authors maintain and nftables uses). docs/lcp.md.
 *
 * Two halves:
 *   lcp_netlink.c  one control thread per namespace ("sluice-nl"): setns,
 *                  subscribe, dump, batch, resync. Never a datapath thread.
 *   lcp_nl_map.c   one message -> sluice's tables (lcp_nl_apply), under
 *                  the barrier; counts what it could not map, per reason.
 * Tests feed lcp_nl_apply messages built with libmnl, no thread, no socket.
 */
#ifndef SLUICE_NODES_LCP_NL_H
#define SLUICE_NODES_LCP_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nlmsghdr;

/* Why a message (or part of one) was not applied. */
enum lcp_nl_ignore {
	LCP_NL_IGN_NOT_TAP,     /* about an interface that is no TAP of ours */
	LCP_NL_IGN_FAMILY,      /* a family sluice does not route (not IPv4 nor IPv6) */
	LCP_NL_IGN_TABLE,       /* a route of another table than main / route-table */
	LCP_NL_IGN_KERNEL,      /* proto kernel connected/local: the address made it */
	LCP_NL_IGN_ROUTE_TYPE,  /* throw, local, broadcast, multicast...; unicast without gateway or interface */
	LCP_NL_IGN_NO_NEXTHOP,  /* RTA_NH_ID of a nexthop object not (yet) known */
	LCP_NL_IGN_REFUSED,     /* sluice refused it (table full, prefix is an address's) */
	LCP_NL_IGN_MALFORMED,   /* too short, bad attributes, prefix length out of range */
	LCP_NL_IGN_OTHER,       /* a message type the listener does not map */
	LCP_NL_IGN_N,
};

/* What an applied message was (a dump's messages too: each shows the state
 * again), for `show lcp json` ("applied_by_kind") and the stats segment. */
enum lcp_nl_kind {
	LCP_NL_K_ROUTE_ADD,  /* IPv4 RTM_NEWROUTE installed (or confirmed) */
	LCP_NL_K_ROUTE_DEL,  /* IPv4 RTM_DELROUTE */
	LCP_NL_K_ROUTE6_ADD, /* IPv6 */
	LCP_NL_K_ROUTE6_DEL,
	LCP_NL_K_ADDR,       /* RTM_NEWADDR/DELADDR, both families */
	LCP_NL_K_NEIGH,      /* RTM_NEWNEIGH/DELNEIGH, both families */
	LCP_NL_K_LINK,       /* RTM_NEWLINK/DELLINK of a TAP */
	LCP_NL_K_NEXTHOP,    /* RTM_NEWNEXTHOP/DELNEXTHOP */
	LCP_NL_K_N,
};

/* A hold's budget (lcp_nl_hold.c): messages, and the thread's own CPU
 * time; linux-cp { netlink-hold-entries N  netlink-hold-cpu DURATION
 * netlink-hold-priority on|off }. */
#define LCP_NL_HOLD_ENTRIES 1024
#define LCP_NL_HOLD_CPU_NS 500000ull
#define LCP_NL_HOLD_HIST_N 12

/* The holds histograms' upper bounds, us (the last: the rest). */
extern const uint32_t lcp_nl_hold_hist_us[LCP_NL_HOLD_HIST_N];

/* Written by the listener threads, read by the CLI's: every counter is
 * atomic (C11 _Atomic: `++` and `+=` are atomic read-modify-writes, a plain
 * read an atomic load), so readers never race with the writers. */
struct lcp_nl_stats {
	_Atomic uint64_t messages;            /* handed to lcp_nl_apply */
	_Atomic uint64_t applied;             /* changed (or confirmed) sluice's tables */
	_Atomic uint64_t applied_kind[LCP_NL_K_N]; /* the applied ones by kind */
	_Atomic uint64_t ignored[LCP_NL_IGN_N];
	_Atomic uint64_t multipath;           /* multipath / group routes applied (ECMP) */
	_Atomic uint64_t batches;             /* barrier holds: of batches, and of sweep steps */
	_Atomic uint64_t max_batch;           /* most messages in one */
	_Atomic uint64_t resyncs;             /* re-dumps after ENOBUFS, NLM_F_DUMP_INTR or `lcp resync` */
	_Atomic uint64_t resyncs_redone;      /* of which lost messages again and were done again */
	_Atomic uint64_t swept;               /* routes and addresses a resync found gone */
	_Atomic uint64_t enobufs;             /* socket overruns */
	_Atomic uint64_t drained;             /* notifications discarded before a re-dump (older than it) */
	_Atomic uint64_t held_max;            /* most notifications held back during one re-dump */
	_Atomic uint64_t nh_routes;           /* routes changed through the nhid index (a nexthop object changed) */
	_Atomic uint64_t routes;              /* Linux routes installed (the listeners' book) */
	_Atomic uint64_t routes6;             /* Linux's IPv6 routes sluice holds (lcp_nl_route6.c) */
	_Atomic uint64_t hold_ns;             /* barrier holds of batches and sweeps, wall clock, summed */
	_Atomic uint64_t hold_max_ns;         /* longest barrier hold of a batch, wall clock */
	_Atomic uint64_t hold_cpu_max_ns;     /* longest one's own CPU time (wall minus preemption) */
	_Atomic uint64_t routes_changed_unix_ns; /* CLOCK_REALTIME when the book's count last changed */
	/* Where the holds' time went (lcp_nl_hold.c): */
	_Atomic uint64_t hold_cpu_ns;         /* the holds' own CPU time, summed */
	_Atomic uint64_t hold_hist[LCP_NL_HOLD_HIST_N];     /* holds by wall time (lcp_nl_hold_hist_us) */
	_Atomic uint64_t hold_cpu_hist[LCP_NL_HOLD_HIST_N]; /* holds by their own CPU time */
	_Atomic uint64_t hold_faults;         /* page faults taken within holds (getrusage), summed */
	_Atomic uint64_t hold_faults_max;     /* most in one hold */
	_Atomic uint64_t holds_preempted;     /* holds in which the thread was preempted (involuntary switch) */
	_Atomic uint64_t holds_raised;        /* holds run at SCHED_FIFO */
	_Atomic uint64_t holds_unraised;      /* holds at normal priority (refused: not root; or turned off) */
	_Atomic uint64_t frees_deferred;      /* frees the holds' updates made, done after the release */
	_Atomic uint64_t free_ns;             /* time those took, after the releases */
	_Atomic uint64_t prefault_ns;         /* time prefaulting the FIB's pages before the holds */
	_Atomic uint64_t sync_ns;             /* time from asking for the barrier to every worker parked */
	_Atomic uint64_t holds_over;          /* holds past twice the CPU budget (the first 16 logged) */
};

extern struct lcp_nl_stats lcp_nl_stats;

/* The reason's name, for `show lcp` and the log. */
const char *lcp_nl_ignore_name(enum lcp_nl_ignore why);

/* The kind's name ("route-add", "neighbour"...), for `show lcp json` and
 * the stats segment's labels. */
const char *lcp_nl_kind_name(enum lcp_nl_kind k);

/* ---- the mapping (lcp_nl_map.c); barrier held ---- */

/* A generation's top byte names its listener (LCP_NL_GEN_OWNER): a sweep
 * touches only what its own listener marked. */
#define LCP_NL_GEN_OWNER 0xff000000u

/* Which namespace's messages these are ("": sluice's own) and the mark
 * of the current dump generation, for the sweep. */
struct lcp_nl_ctx {
	const char *netns;
	uint32_t gen;
};

/* Apply one rtnetlink message. Returns true when applied, false when
 * ignored (and counted under its reason, logged once per reason). */
bool lcp_nl_apply(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh);

/* After a full dump of generation gen: remove the Linux routes and the
 * addresses Linux gave, of gen's listener, that the dump did not show
 * again. How many. */
uint32_t lcp_nl_sweep(uint32_t gen);

/* Where a sweep in steps is: zeroed to begin. IPv4's routes (the route
 * book's records), then IPv6's (the per-source store's buckets), then the
 * addresses. */
struct lcp_nl_sweep {
	uint32_t phase;
	uint32_t v4;              /* the book's next record - 1 */
	uint32_t v6, v6_mask;     /* the store's next bucket, of a store of v6_mask + 1 */
};

/* The same in steps: from *cur on, until the end or deadline_ns
 * (time_now_ns), whichever first; true when done (the addresses go with
 * the last step). Each step is one barrier hold, and gets on by some
 * routes whatever the deadline. */
bool lcp_nl_sweep_step(uint32_t gen, struct lcp_nl_sweep *cur, uint64_t deadline_ns);

/* Routes of this table map as well as main's (linux-cp { route-table N });
 * 0: main only. */
extern uint32_t lcp_nl_route_table;

/* Set by the mapping when a member of a nexthop group went: the kernel
 * changes the group without a message the mapping can rely on, so the
 * listener re-dumps after the batch. (A nexthop object replaced or deleted
 * changes the routes through it by the nhid index, no re-dump.) */
extern bool lcp_nl_redump_wanted;

/* Tests: the Linux ifindex of a non-tap device standing for a TAP. */
void lcp_nl_set_test_ifindex(uint32_t dev_index, uint32_t ifindex);

/* Forget nexthop objects and link states (a new namespace listener, tests). */
void lcp_nl_map_reset(void);

/* ---- holds (lcp_nl_hold.c) ---- */

extern uint32_t lcp_nl_hold_entries; /* messages per hold at most */
extern uint64_t lcp_nl_hold_cpu_ns;  /* the thread's CPU per hold, about (checked every 25 us of wall) */
extern bool lcp_nl_hold_raise;       /* SCHED_FIFO while holding (root; refused quietly otherwise) */

struct graph;
struct lcp_nl_hold {
	struct graph *g;
	uint64_t t0, c0, tc; /* wall, CPU at the start; wall of the last CPU read */
	uint64_t faults0, preempts0;
	uint32_t n;          /* messages applied */
	bool raised;
	uint64_t slow_ns;    /* its slowest message (the log of a hold over budget) */
	uint16_t slow_type;
	uint8_t slow_family, slow_plen;
};

/* Take the barrier (dev_graph(); none in tests without one), defer the
 * stores' frees, raise the thread's priority. */
void lcp_nl_hold_begin(struct lcp_nl_hold *h);

/* One more message applied: whether the hold's budget is spent. */
bool lcp_nl_hold_spent(struct lcp_nl_hold *h);

/* Lower the priority, release the barrier, do the deferred frees, count. */
void lcp_nl_hold_end(struct lcp_nl_hold *h);

/* The p99 of a hold histogram, as its bucket's upper bound in us (0: none). */
uint64_t lcp_nl_hold_p99_us(const _Atomic uint64_t *hist);

/* Apply the messages p[0..len) in holds within the budget; true when a
 * nexthop group lost a member on the way (lcp_nl_redump_wanted). */
bool lcp_nl_apply_batch(const struct lcp_nl_ctx *ctx, const uint8_t *p, size_t len);

/* ---- the listener threads (lcp_netlink.c) ---- */

/* The sockets' receive buffer (linux-cp { netlink-rx-buffer }), for
 * listeners started after it is set; default 64 MB. */
extern uint32_t lcp_nl_rx_buffer;

/* Make sure a listener runs for netns ("": sluice's). 0 or a negative errno. */
int lcp_nl_start(const char *netns);

/* Ask every listener for a full re-dump (mark and sweep). Returns how many
 * listeners were asked. */
uint32_t lcp_nl_resync(void);

/* Stop and join every listener (shutdown; the datapath loop has ended). */
void lcp_nl_stop_all(void);

/* The namespaces listened to, for `show lcp`. */
uint32_t lcp_nl_n_listeners(void);
const char *lcp_nl_listener_netns(uint32_t i);

#endif
