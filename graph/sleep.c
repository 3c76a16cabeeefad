/* Blocking an idle datapath thread, and waking it.
 *
 * A thread whose inputs all declared node_reg.can_sleep, none of which
 * asked to be polled again (graph_thread_stay_awake), and whose next timer
 * is not due within a microsecond, blocks in epoll_wait on:
 *   - the rx fds placed on it (graph_rx_watch: af-packet sockets, whose
 *     readiness the kernel signals per frame on a TPACKET_V2 ring);
 *   - its wake eventfd, written by graph_thread_kick: producers of its
 *     handoff rings and the distributor, the barrier, stop;
 *   - its timerfd, armed for the earliest time given to
 *     graph_thread_wake_within (the timer wheel's next expiry, a paced pg
 *     stream's next packet, a process node's resume time);
 * and at most GRAPH_SLEEP_MAX_NS, a bound that only matters if a wakeup
 * were missing somewhere (counted as cause "timeout").
 *
 * The handshake that loses no wakeup, in the order of Dekker's algorithm:
 *   consumer: sleep_state = ANNOUNCED; fence; look at every source once
 *             more (one whole loop); block only if that found nothing;
 *   producer: publish (ring head); fence; if sleep_state == ANNOUNCED,
 *             CAS it to KICKED and write the eventfd (only the winner).
 * Both fences are sequentially consistent, so either the consumer's last
 * look sees the published lines, or the producer sees the announcement and
 * kicks. While the consumer is awake a producer pays one fence and one
 * load per burst, no system call. The eventfd is level-triggered and read
 * on waking, so a kick that lands between the last look and epoll_wait
 * makes epoll_wait return at once.
 */
#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "graph/graph_private.h"

enum { GRAPH_SLEEP_KICKED = 2 };

/* epoll data: which fd fired. rx fds carry GRAPH_WAKE_RX itself. */
#define EP_KICK ((uint64_t)GRAPH_WAKE_HANDOFF)
#define EP_TIMER ((uint64_t)GRAPH_WAKE_TIMER)
/* Another thread's rx fds (graph_thread_wake_ahead): EP_AHEAD + its index. */
#define EP_AHEAD ((uint64_t)GRAPH_WAKE_N)

/* GRAPH_WAKE_AHEAD_NS in cpu ticks: stored by graph_thread_wake_ahead
 * before the first such wakeup, read whole (relaxed atomics). */
static uint64_t ahead_ticks;

/* The epoll in *slot (fd + 1; 0: none yet), made on first use. */
static int epoll_lazy(int *slot)
{
	if (!*slot) {
		int fd = epoll_create1(EPOLL_CLOEXEC);
		if (fd < 0)
			return -errno;
		*slot = fd + 1;
	}
	return *slot - 1;
}

static int thread_epfd(struct graph *g, uint32_t index)
{
	return epoll_lazy(&g->epfd[index]);
}

/* The epoll of thread index's rx fds alone, made on first use. */
static int thread_rx_epfd(struct graph *g, uint32_t index)
{
	return epoll_lazy(&g->rx_epfd[index]);
}

/* Add or remove fd on ep; adding what is there or removing what is not is
 * no error. */
static int watch_set(int ep, int fd, uint32_t events, uint64_t tag, bool on)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };
	if (epoll_ctl(ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, &ev) < 0) {
		if ((on && errno == EEXIST) || (!on && errno == ENOENT))
			return 0;
		return -errno;
	}
	return 0;
}

int graph_rx_watch(struct graph *g, uint32_t thread_index, int fd, bool on)
{
	if (thread_index >= GRAPH_MAX_THREADS || fd < 0)
		return -EINVAL;
	int ep = thread_epfd(g, thread_index);
	int rx_ep = thread_rx_epfd(g, thread_index);
	if (ep < 0 || rx_ep < 0)
		return ep < 0 ? ep : rx_ep;
	/* The rx epoll first: a thread woken ahead never misses an fd its
	 * own thread watches. Edge-triggered there, so that the threads woken
	 * ahead are woken once per frame, not for as long as it waits. */
	int rc = watch_set(rx_ep, fd, EPOLLIN | EPOLLET, 0, on);
	if (rc)
		return rc;
	rc = watch_set(ep, fd, EPOLLIN, GRAPH_WAKE_RX, on);
	if (rc && on)
		(void)watch_set(rx_ep, fd, 0, 0, false);
	return rc;
}

/* Both threads pinned to one core: `to` woken ahead would take that core
 * from `from` while `from` reads the frame (measured: a worker sharing
 * main-core, 2 workers on cores 0-1, the ping's RTT went from 536 to 729
 * us), so it waits for the handoff's kick as before. */
static bool same_core(struct graph *g, uint32_t from, uint32_t to)
{
	const struct graph_thread *f = g->threads[from], *t = g->threads[to];
	if (!f || !t)
		return false;
	int cf = __atomic_load_n(&f->cpu, __ATOMIC_RELAXED), ct = __atomic_load_n(&t->cpu, __ATOMIC_RELAXED);
	return cf >= 0 && cf == ct;
}

int graph_thread_wake_ahead(struct graph *g, uint32_t from, uint32_t to, bool on)
{
	if (from >= GRAPH_MAX_THREADS || to >= GRAPH_MAX_THREADS || from == to)
		return -EINVAL;
	if (on && same_core(g, from, to))
		return 0;
	int ep = thread_epfd(g, to);
	int rx_ep = thread_rx_epfd(g, from);
	if (ep < 0 || rx_ep < 0)
		return ep < 0 ? ep : rx_ep;
	if (!__atomic_load_n(&ahead_ticks, __ATOMIC_RELAXED))
		__atomic_store_n(&ahead_ticks, (uint64_t)(cpu_ticks_per_second() * (double)GRAPH_WAKE_AHEAD_NS / 1e9),
				 __ATOMIC_RELAXED);
	return watch_set(ep, rx_ep, EPOLLIN | EPOLLET, EP_AHEAD + from, on);
}

static int watch_own(int ep, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

int graph_thread_sleep_init(struct graph *g, struct graph_thread *t, char *err, size_t errlen)
{
	t->wake_fd = t->timer_fd = -1;
	int ep = thread_epfd(g, t->index);
	if (ep >= 0) {
		t->epfd = ep;
		t->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		t->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	}
	if (ep < 0 || t->wake_fd < 0 || t->timer_fd < 0 || watch_own(ep, t->wake_fd, EP_KICK) ||
	    watch_own(ep, t->timer_fd, EP_TIMER)) {
		snprintf(err, errlen, "graph: thread %u: cannot make its epoll, eventfd or timerfd: %s", t->index,
			 strerror(errno));
		graph_thread_sleep_release(t);
		return -EMFILE;
	}
	return 0;
}

void graph_thread_sleep_release(struct graph_thread *t)
{
	/* Closing removes them from the epoll set, which the graph keeps. */
	if (t->wake_fd >= 0)
		close(t->wake_fd);
	if (t->timer_fd >= 0)
		close(t->timer_fd);
	t->wake_fd = t->timer_fd = -1;
}

void graph_epoll_close_all(struct graph *g)
{
	for (uint32_t i = 0; i < GRAPH_MAX_THREADS; i++) {
		if (g->epfd[i]) {
			close(g->epfd[i] - 1);
			g->epfd[i] = 0;
		}
		if (g->rx_epfd[i]) {
			close(g->rx_epfd[i] - 1);
			g->rx_epfd[i] = 0;
		}
	}
}

void graph_thread_kick(struct graph_thread *t, enum graph_wake_cause cause)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (likely(atomic_load_explicit(&t->sleep_state, memory_order_relaxed) != GRAPH_SLEEP_ANNOUNCED))
		return;
	atomic_fetch_or(&t->kick_causes, 1u << cause);
	unsigned expect = GRAPH_SLEEP_ANNOUNCED;
	if (atomic_compare_exchange_strong(&t->sleep_state, &expect, GRAPH_SLEEP_KICKED)) {
		uint64_t one = 1;
		if (write(t->wake_fd, &one, sizeof(one)) < 0) {
			/* EAGAIN only: the counter is full, so it is readable. */
		}
	}
}

void graph_kick_index(struct graph *g, uint32_t thread_index, enum graph_wake_cause cause)
{
	if (thread_index < atomic_load_explicit(&g->n_threads_published, memory_order_acquire))
		graph_thread_kick(g->threads[thread_index], cause);
}

void graph_kick_all(struct graph *g, enum graph_wake_cause cause)
{
	uint32_t n = atomic_load(&g->n_threads_published);
	for (uint32_t i = 0; i < n; i++)
		if (g->threads[i])
			graph_thread_kick(g->threads[i], cause);
}

void graph_poke_processes(struct graph_thread *t)
{
	if (!t)
		return; /* a control thread: the barrier it holds pokes on release */
	struct graph *g = t->graph;
	if (!atomic_load_explicit(&g->process_poke, memory_order_relaxed))
		atomic_store_explicit(&g->process_poke, 1, memory_order_relaxed);
	if (t->index != 0)
		graph_thread_kick(g->threads[0], GRAPH_WAKE_PROCESS);
}

void graph_thread_stay_awake(struct graph_thread *t)
{
	t->stay_awake = true;
}

void graph_thread_no_block(struct graph_thread *t)
{
	t->no_block = true;
}

static void timer_arm(struct graph_thread *t, uint64_t ns)
{
	struct itimerspec its = { .it_value = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) } };
	(void)timerfd_settime(t->timer_fd, 0, &its, NULL);
}

static void drain(int fd)
{
	uint64_t v;
	(void)!read(fd, &v, sizeof(v));
}

/* A frame for thread `from`, which hands to this one: its handoff comes
 * within microseconds if it is for this thread; poll for it until `from`
 * has been through two loops more (the second began after the frame was
 * there, so it read it and the distributor handed it to its worker: the
 * chosen worker's own input keeps polling from then on, the others need
 * not), at most GRAPH_WAKE_AHEAD_NS. */
static void ahead_start(struct graph_thread *t, uint32_t from)
{
	struct graph_thread *f = from < GRAPH_MAX_THREADS ? t->graph->threads[from] : NULL;
	if (!f)
		return;
	t->ahead_of = from;
	t->ahead_loops = stat_read(&f->loops);
	t->ahead_until_ticks = cpu_ticks() + __atomic_load_n(&ahead_ticks, __ATOMIC_RELAXED);
}

/* Count what woke the thread, each cause once; returns whether the timer
 * fired. */
static bool count_causes(struct graph_thread *t, const struct epoll_event *ev, int n)
{
	if (n <= 0) {
		/* 0: the safety bound; -1 (EINTR): a signal, which is control. */
		stat_add(&t->wakeups[n == 0 ? GRAPH_WAKE_TIMEOUT : GRAPH_WAKE_CONTROL], 1);
		return false;
	}
	unsigned c = 0;
	bool timer = false;
	for (int i = 0; i < n; i++) {
		uint64_t tag = ev[i].data.u64;
		if (tag == EP_KICK) {
			drain(t->wake_fd);
			c |= atomic_exchange(&t->kick_causes, 0);
		} else if (tag == EP_TIMER) {
			drain(t->timer_fd);
			c |= 1u << GRAPH_WAKE_TIMER;
			timer = true;
		} else if (tag >= EP_AHEAD) {
			ahead_start(t, (uint32_t)(tag - EP_AHEAD));
			c |= 1u << GRAPH_WAKE_HANDOFF;
		} else {
			c |= 1u << GRAPH_WAKE_RX;
		}
	}
	for (unsigned k = 0; k < GRAPH_WAKE_N; k++)
		if (c & (1u << k))
			stat_add(&t->wakeups[k], 1);
	return timer;
}

/* Within the window after a wakeup ahead: not announced at all, so the
 * handoff it waits for costs its producer no kick (no write on the
 * producer's path to a thread that is polling anyway). */
static bool ahead_window(struct graph_thread *t)
{
	const struct graph_thread *f = t->graph->threads[t->ahead_of];
	if (cpu_ticks() < t->ahead_until_ticks && stat_read(&f->loops) < t->ahead_loops + 2)
		return true;
	t->ahead_until_ticks = 0;
	return false;
}

bool graph_thread_block(struct graph_thread *t, uint64_t cap_ns)
{
	if (unlikely(t->ahead_until_ticks) && ahead_window(t)) {
		t->gap_is_idle = UINT64_MAX;
		t->slept = false;
		return false;
	}
	atomic_store(&t->sleep_state, GRAPH_SLEEP_ANNOUNCED);
	atomic_thread_fence(memory_order_seq_cst);
	/* The last look, after the announcement (see the top of the file). */
	uint32_t n = graph_thread_loop_once(t);
	uint64_t cap = MIN(cap_ns, t->wake_within_ns);
	t->wake_within_ns = UINT64_MAX;
	bool veto = t->stay_awake || t->no_block;
	t->stay_awake = t->no_block = false;
	if (n || veto || cap < 1000) {
		atomic_store(&t->sleep_state, GRAPH_SLEEP_AWAKE);
		t->gap_is_idle = n ? 0 : UINT64_MAX;
		t->slept = false;
		return false;
	}
	/* Arming replaces an expiry left from an earlier sleep and clears its
	 * readiness (timerfd_settime), so a wakeup by anything else leaves the
	 * timer as it is: disarming it there would put a system call between
	 * the frame that woke the thread and its receive. A sleep that needs no
	 * timer disarms what is left before it blocks, off that path. */
	bool armed = cap < GRAPH_SLEEP_MAX_NS;
	if (armed || t->timer_armed)
		timer_arm(t, armed ? cap : 0);
	t->timer_armed = armed;
	struct epoll_event ev[8];
	stat_add(&t->sleeps, 1);
	int k = epoll_wait(t->epfd, ev, 8, (int)(GRAPH_SLEEP_MAX_NS / 1000000));
	/* Asleep is not stalled: the watchdog judges from the wakeup on. */
	__atomic_store_n(&t->last_loop_ticks, cpu_ticks(), __ATOMIC_RELAXED);
	atomic_store(&t->sleep_state, GRAPH_SLEEP_AWAKE);
	if (count_causes(t, ev, k))
		t->timer_armed = false; /* it fired: nothing left to disarm */
	t->gap_is_idle = UINT64_MAX;
	t->slept = true;
	return true;
}

bool graph_thread_sleeping(const struct graph_thread *t)
{
	return atomic_load_explicit(&t->sleep_state, memory_order_relaxed) != GRAPH_SLEEP_AWAKE;
}

const char *graph_wake_cause_name(enum graph_wake_cause c)
{
	static const char *const names[GRAPH_WAKE_N] = { "rx", "handoff", "control", "timer", "process", "timeout" };
	return (unsigned)c < GRAPH_WAKE_N ? names[c] : "?";
}
