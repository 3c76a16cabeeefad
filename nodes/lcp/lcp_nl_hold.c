/* The listener's barrier holds (lcp_nl.h, "holds"): a budget in messages
 * and in the thread's own CPU time, the work that can be done outside a
 * hold moved out of it, and the thread raised to SCHED_FIFO while it holds.
 *
 * Where a hold's time went before this file (bench/lcp, 50,000 routes, a
 * loaded 2-vCPU box; docs/lcp.md "Holds"): the wall time was mostly the
 * listener preempted while it held the barrier (its own CPU a third to a
 * fifth of the wall); within its CPU, the FIB's page faults (prefaulted
 * since) and free() handing a store's old bucket array back (munmap: a TLB
 * shootdown to every CPU, the parked datapath's included). Hence:
 *   - before a hold: the FIB pages its routes will write are faulted in
 *     (lcp_nl_route_prefault; the message decoded once more there), and
 *     the IPv4 FIB itself made when the batch is the one to need it;
 *   - in it: at most lcp_nl_hold_entries messages and lcp_nl_hold_cpu_ns
 *     of the thread's CPU (CLOCK_THREAD_CPUTIME_ID, a system call: read
 *     only when 25 us of wall time passed since the last read, so the
 *     budget is overrun by at most that and one message); the thread at
 *     SCHED_FIFO 1, so the box's other tasks do not preempt it while the
 *     datapath waits (root only: refused quietly and counted);
 *   - after it: the frees the hold's updates made (nodes/fib_defer.h).
 * A hold's wall and CPU time go into histograms (p99 in `show lcp`), its
 * minor faults and involuntary context switches (getrusage, outside the
 * hold) into counters: the figures that say where the time went. */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/util.h"
#include "graph/graph.h"
#include "nodes/fib_defer.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/lcp/lcp.h"
#include "nodes/lcp/lcp_nl.h"
#include "nodes/lcp/lcp_nl_route.h"

#define CPU_READ_EVERY_NS 25000ull /* wall time between reads of the CPU clock */
#define HOLDS_OVER_LOGGED 16       /* holds past twice the budget logged, the first ones */

uint32_t lcp_nl_hold_entries = LCP_NL_HOLD_ENTRIES;
uint64_t lcp_nl_hold_cpu_ns = LCP_NL_HOLD_CPU_NS;
bool lcp_nl_hold_raise = true;

const uint32_t lcp_nl_hold_hist_us[LCP_NL_HOLD_HIST_N] = { 50, 100, 200, 300, 500, 750, 1000, 2000, 5000, 10000,
							   100000, UINT32_MAX };

static _Thread_local int raise_refused; /* EPERM once: not asked again */

static uint64_t unix_time_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void max_store(_Atomic uint64_t *m, uint64_t v)
{
	if (v > *m)
		*m = v;
}

static void hist_add(_Atomic uint64_t *hist, uint64_t ns)
{
	uint32_t i = 0;
	while (i + 1 < LCP_NL_HOLD_HIST_N && ns >= (uint64_t)lcp_nl_hold_hist_us[i] * 1000)
		i++;
	hist[i]++;
}

/* SCHED_FIFO at the lowest real-time priority: above every normal task
 * (the box's builds, the other listeners), below any real-time one. */
static bool raise_prio(void)
{
	if (!lcp_nl_hold_raise || raise_refused) {
		lcp_nl_stats.holds_unraised++;
		return false;
	}
	struct sched_param sp = { .sched_priority = 1 };
	int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (rc) {
		raise_refused = 1;
		lcp_nl_stats.holds_unraised++;
		base_log("lcp-nl", "holds stay at normal priority: SCHED_FIFO refused (%s); counted in show lcp",
			 strerror(rc));
		return false;
	}
	lcp_nl_stats.holds_raised++;
	return true;
}

static void lower_prio(void)
{
	struct sched_param sp = { .sched_priority = 0 };
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
}

static void usage_now(uint64_t *faults, uint64_t *preempts)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	*faults = (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt;
	*preempts = (uint64_t)ru.ru_nivcsw;
}

void lcp_nl_hold_begin(struct lcp_nl_hold *h)
{
	*h = (struct lcp_nl_hold){ .g = dev_graph() };
	fib_defer_begin();
	uint64_t s0 = time_now_ns();
	if (h->g)
		graph_barrier_sync(h->g);
	h->raised = raise_prio();
	usage_now(&h->faults0, &h->preempts0); /* in the hold: its own faults and preemptions, ~1 us */
	h->t0 = h->tc = time_now_ns();
	h->c0 = thread_cpu_ns();
	lcp_nl_stats.sync_ns += h->t0 - s0;
}

bool lcp_nl_hold_spent(struct lcp_nl_hold *h)
{
	if (++h->n >= lcp_nl_hold_entries)
		return true;
	uint64_t now = time_now_ns();
	if (now - h->tc < CPU_READ_EVERY_NS)
		return false; /* the CPU clock moved no more than the wall one */
	h->tc = now;
	return thread_cpu_ns() - h->c0 >= lcp_nl_hold_cpu_ns;
}

void lcp_nl_hold_end(struct lcp_nl_hold *h)
{
	uint64_t faults, preempts;
	usage_now(&faults, &preempts);
	uint64_t c1 = thread_cpu_ns(), t1 = time_now_ns();
	if (h->g)
		graph_barrier_release(h->g);
	if (h->raised)
		lower_prio(); /* after the release: lowered, the thread may be preempted at once */
	uint64_t f0 = time_now_ns();
	lcp_nl_stats.frees_deferred += fib_defer_end();
	uint64_t wall = t1 - h->t0, cpu = c1 - h->c0;
	lcp_nl_stats.free_ns += time_now_ns() - f0;
	lcp_nl_stats.batches++;
	lcp_nl_stats.hold_ns += wall;
	lcp_nl_stats.hold_cpu_ns += cpu;
	lcp_nl_stats.hold_faults += faults - h->faults0;
	lcp_nl_stats.holds_preempted += preempts != h->preempts0;
	max_store(&lcp_nl_stats.max_batch, h->n);
	max_store(&lcp_nl_stats.hold_max_ns, wall);
	max_store(&lcp_nl_stats.hold_cpu_max_ns, cpu);
	max_store(&lcp_nl_stats.hold_faults_max, faults - h->faults0);
	hist_add(lcp_nl_stats.hold_hist, wall);
	hist_add(lcp_nl_stats.hold_cpu_hist, cpu);
	if (cpu >= 2 * lcp_nl_hold_cpu_ns && lcp_nl_stats.holds_over++ < HOLDS_OVER_LOGGED)
		base_log("lcp-nl", "hold over budget: %u messages, %llu us CPU, %llu us wall, %llu faults, %s; "
			 "the slowest message %llu us (type %u, family %u, /%u)", h->n,
			 (unsigned long long)(cpu / 1000), (unsigned long long)(wall / 1000),
			 (unsigned long long)(faults - h->faults0), preempts != h->preempts0 ? "preempted" : "not preempted",
			 (unsigned long long)(h->slow_ns / 1000), h->slow_type, h->slow_family, h->slow_plen);
	else if (cpu >= 2 * lcp_nl_hold_cpu_ns)
		lcp_nl_stats.holds_over++;
}

uint64_t lcp_nl_hold_p99_us(const _Atomic uint64_t *hist)
{
	uint64_t n = 0, seen = 0;
	for (uint32_t i = 0; i < LCP_NL_HOLD_HIST_N; i++)
		n += hist[i];
	for (uint32_t i = 0; i < LCP_NL_HOLD_HIST_N; i++) {
		seen += hist[i];
		if (n && seen * 100 >= n * 99)
			return lcp_nl_hold_hist_us[i];
	}
	return 0;
}

/* Before a hold: the FIB pages the next hold's routes write, faulted in
 * with the datapath running (a THP fault may compact memory first). Each
 * message once (*done: how far), at most a hold's worth ahead. */
static void prefault(const uint8_t *p, size_t len, size_t off, size_t *done)
{
	if (off < *done)
		off = *done;
	for (uint32_t n = 0; off < len && n < lcp_nl_hold_entries; n++) {
		const struct nlmsghdr *nlh = (const void *)(p + off);
		lcp_nl_route_prefault(nlh);
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	*done = off;
}

/* The hold's slowest message, for the log of a hold over budget. */
static void hold_note(struct lcp_nl_hold *h, const struct nlmsghdr *nlh, uint64_t ns)
{
	if (ns <= h->slow_ns)
		return;
	h->slow_ns = ns;
	h->slow_type = nlh->nlmsg_type;
	h->slow_family = nlh->nlmsg_len >= NLMSG_HDRLEN + 2 ? *((const uint8_t *)nlh + NLMSG_HDRLEN) : 0;
	h->slow_plen = nlh->nlmsg_len >= NLMSG_HDRLEN + 2 && (nlh->nlmsg_type == RTM_NEWROUTE || nlh->nlmsg_type == RTM_DELROUTE)
			       ? *((const uint8_t *)nlh + NLMSG_HDRLEN + 1)
			       : 0;
}

/* Whether the batch holds an IPv4 address or route: its first hold may
 * create the IPv4 FIB. */
static bool has_ip4(const uint8_t *p, size_t len)
{
	for (size_t off = 0; off < len;) {
		const struct nlmsghdr *nlh = (const void *)(p + off);
		bool kind = nlh->nlmsg_type == RTM_NEWADDR || nlh->nlmsg_type == RTM_NEWROUTE;
		if (kind && nlh->nlmsg_len > NLMSG_HDRLEN && *((const uint8_t *)nlh + NLMSG_HDRLEN) == AF_INET)
			return true;
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	return false;
}

/* The IPv4 FIB made before the hold that would make it (64 MB of tbl24
 * mapped and the groups listed: 11 to 17 ms, bench/lcp's longest hold),
 * then only published in the hold. NULL when there is one, or no need. */
static struct ip4_fib *fib_before_hold(const uint8_t *p, size_t len)
{
	if (__atomic_load_n(&ip4_fib_main, __ATOMIC_ACQUIRE) || !has_ip4(p, len))
		return NULL;
	struct ip4_fib_config c;
	char err[128];
	ip4_fib_config_default(&c); /* as ip4_main_init */
	return ip4_fib_create(&c, err, sizeof(err)); /* NULL: ip4_main_init tries in the hold, and says why */
}

bool lcp_nl_apply_batch(const struct lcp_nl_ctx *ctx, const uint8_t *p, size_t len)
{
	bool redump = false;
	size_t prefaulted = 0;
	struct ip4_fib *spare = fib_before_hold(p, len);
	for (size_t off = 0; off < len;) {
		uint64_t routes = lcp_nl_stats.routes, f0 = time_now_ns();
		prefault(p, len, off, &prefaulted);
		lcp_nl_stats.prefault_ns += time_now_ns() - f0;
		struct lcp_nl_hold h;
		lcp_nl_hold_begin(&h);
		if (spare && !ip4_fib_main) { /* another thread may have made it meanwhile */
			__atomic_store_n(&ip4_fib_main, spare, __ATOMIC_RELEASE);
			spare = NULL;
		}
		do {
			const struct nlmsghdr *nlh = (const void *)(p + off);
			uint64_t m0 = time_now_ns();
			lcp_nl_apply(ctx, nlh);
			hold_note(&h, nlh, time_now_ns() - m0);
			off += NLMSG_ALIGN(nlh->nlmsg_len);
		} while (!lcp_nl_hold_spent(&h) && off < len); /* counted first: n is every message applied */
		redump |= lcp_nl_redump_wanted; /* shared by the listeners: read under the barrier */
		lcp_nl_redump_wanted = false;
		lcp_nl_hold_end(&h);
		if (lcp_nl_stats.routes != routes) /* for bench/lcp: when the FIB last changed, without polling */
			lcp_nl_stats.routes_changed_unix_ns = unix_time_ns();
	}
	ip4_fib_destroy(spare); /* never published */
	return redump;
}
