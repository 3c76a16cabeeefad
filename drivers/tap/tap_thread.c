/* The tap driver's control thread, "sluice-tap": the only thread that
 * reads or writes a TAP's fd.
 *
 * Each turn it writes out what the datapath left in every tx ring (one
 * write() per frame; a TAP takes whole frames), then waits in poll(2) for
 * any TAP to become readable, at most TAP_POLL_MS, and reads each readable
 * one into its rx ring until the fd is empty or TAP_READ_BUDGET frames
 * were read. The datapath cannot wake the thread (that would be a system
 * call), so a punted frame waits at most TAP_POLL_MS before it reaches
 * Linux: a millisecond is nothing to BGP or OSPF timers, and the idle
 * thread costs a thousand short wake-ups a second.
 * A full rx ring (the datapath not taking frames) does not stop the
 * reads: the frame is read and counted as dropped, so that Linux's own
 * queue never backs up behind us and the count says where the loss was.
 *
 * A TAP deleted from Linux under sluice (`ip link del`) detaches from its
 * fd, which from then on polls as an error (POLLERR) at once: the device
 * is marked gone (logged once, shown by `show lcp`, its link down) and
 * left out of the poll set, so the thread does not spin on it; what the
 * datapath still sends it is drained and counted as write errors.
 *
 * The device list is guarded by a mutex the thread holds for a whole
 * turn, poll included: tap_thread_remove takes it, so after it returns the
 * thread can no longer be inside that device (a wait of one turn). A mutex
 * is not fair: the thread unlocks and locks again at once, and a waiter
 * woken on the other CPU can lose that race turn after turn (shutdown took
 * 1.5 s to over 5 s on a loaded box), so a waiter says so first (tt.waiting)
 * and the thread stands aside until it is done. Adding
 * and removing devices (starting and joining the thread) is serialised by
 * a second mutex the thread never takes.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "drivers/tap/tap_private.h"
#include "graph/graph.h"

#define TAP_POLL_MS 1
#define TAP_READ_BUDGET 256 /* frames read from one fd per turn */

static struct {
	pthread_mutex_t lock;
	pthread_t thread;
	bool running;
	_Atomic bool stop;
	_Atomic uint32_t waiting; /* other threads waiting for lock */
	uint32_t n;
	struct tap_dev *devs[DEV_MAX];
} tt = { .lock = PTHREAD_MUTEX_INITIALIZER };
static pthread_mutex_t life = PTHREAD_MUTEX_INITIALIZER;

/* tt.lock for a thread other than sluice-tap: announced, so it gets it. */
static void devs_lock(void)
{
	atomic_fetch_add(&tt.waiting, 1);
	pthread_mutex_lock(&tt.lock);
	atomic_fetch_sub(&tt.waiting, 1);
}

static void drain_tx(struct tap_dev *td)
{
	for (uint16_t q = 0; q < td->dev.n_tx_queues; q++) {
		struct tap_ring *r = &td->tx[q];
		uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
		uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
		for (; tail != head; tail++) {
			uint32_t *len;
			const uint8_t *p = tap_slot(r, tail, &len);
			if (*len && write(td->fd, p, *len) == (ssize_t)*len)
				stat_add(&td->st.to_linux, 1);
			else
				stat_add(&td->st.write_errors, 1);
		}
		atomic_store_explicit(&r->tail, tail, memory_order_release);
	}
}

/* After publishing frames: wake the thread polling the rx queue if it
 * announced sleep (graph/sleep.c; a fence and a load otherwise). The
 * placement is read without the barrier: a thread that moved the queue
 * meanwhile polls it at its next loop anyway, woken by the move. */
static void wake_consumer(struct tap_dev *td)
{
	struct graph *g = dev_graph();
	/* Both written atomically by the control side (device.c): this thread
	 * is outside the barrier. */
	if (!g || !__atomic_load_n(&td->dev.admin_up, __ATOMIC_RELAXED))
		return;
	graph_kick_index(g, __atomic_load_n(&td->dev.rxq[0].thread_index, __ATOMIC_RELAXED), GRAPH_WAKE_HANDOFF);
}

static void drain_rx(struct tap_dev *td)
{
	static uint8_t scratch[65536]; /* frames with no room: read to drop (this thread only) */
	struct tap_ring *r = &td->rx;
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	for (uint32_t k = 0; k < TAP_READ_BUDGET; k++) {
		bool room = tap_ring_room(r) > 0;
		uint32_t *len;
		uint8_t *p = room ? tap_slot(r, head, &len) : scratch;
		/* One byte more than a slot holds: a read that fills it was cut. */
		ssize_t got = read(td->fd, p, room ? r->slot_size : sizeof(scratch));
		if (got <= 0)
			break;
		if (!room) {
			stat_add(&td->st.rx_ring_full, 1);
		} else if ((uint32_t)got >= r->slot_size) {
			stat_add(&td->st.rx_oversize, 1);
		} else {
			*len = (uint32_t)got;
			atomic_store_explicit(&r->head, ++head, memory_order_release);
			stat_add(&td->st.from_linux, 1);
		}
	}
	wake_consumer(td);
}

/* One turn over every device; returns how many there were. */
static uint32_t turn(void)
{
	struct pollfd pfd[DEV_MAX];
	struct tap_dev *live[DEV_MAX];
	uint32_t n = 0;
	pthread_mutex_lock(&tt.lock);
	for (uint32_t i = 0; i < tt.n; i++) {
		struct tap_dev *td = tt.devs[i];
		if (!atomic_load(&td->running))
			continue;
		drain_tx(td);
		if (atomic_load(&td->gone))
			continue;
		live[n] = td;
		pfd[n++] = (struct pollfd){ .fd = td->fd, .events = POLLIN };
	}
	int rc = poll(pfd, n, TAP_POLL_MS);
	for (uint32_t i = 0; rc > 0 && i < n; i++) {
		if (pfd[i].revents & POLLIN)
			drain_rx(live[i]);
		if (pfd[i].revents & (POLLERR | POLLHUP | POLLNVAL)) {
			atomic_store(&live[i]->gone, true);
			base_log("tap", "%s: deleted from Linux under sluice (`lcp delete` or `delete interface` "
				 "cleans up)", live[i]->host_if);
		}
	}
	uint32_t total = tt.n;
	pthread_mutex_unlock(&tt.lock);
	return total;
}

static void *tap_thread(void *arg)
{
	(void)arg;
	while (!atomic_load(&tt.stop)) {
		turn();
		/* Bounded: a waiter holds the lock for a list update only. */
		for (int i = 0; i < 10000 && atomic_load(&tt.waiting); i++)
			usleep(10);
	}
	return NULL;
}

/* dev_graph_detach_wait: a turn reads dev_graph() under tt.lock, so once
 * the lock has been ours the thread is past any turn that saw the old one. */
static void tap_graph_detach_wait(void)
{
	devs_lock();
	pthread_mutex_unlock(&tt.lock);
}

int tap_thread_add(struct tap_dev *td, char *err, size_t errlen)
{
	dev_graph_detach_wait = tap_graph_detach_wait;
	pthread_mutex_lock(&life);
	devs_lock();
	int rc = 0;
	if (!tt.running) {
		atomic_store(&tt.stop, false);
		rc = -pthread_create(&tt.thread, NULL, tap_thread, NULL);
		if (rc == 0) {
			pthread_setname_np(tt.thread, "sluice-tap");
			tt.running = true;
		} else {
			snprintf(err, errlen, "tap: control thread: %s", strerror(-rc));
		}
	}
	if (rc == 0)
		tt.devs[tt.n++] = td;
	pthread_mutex_unlock(&tt.lock);
	pthread_mutex_unlock(&life);
	return rc;
}

void tap_thread_remove(struct tap_dev *td)
{
	pthread_mutex_lock(&life);
	devs_lock();
	for (uint32_t i = 0; i < tt.n; i++)
		if (tt.devs[i] == td)
			tt.devs[i] = tt.devs[--tt.n];
	bool last = tt.n == 0 && tt.running;
	if (last) {
		atomic_store(&tt.stop, true);
		tt.running = false;
	}
	pthread_mutex_unlock(&tt.lock);
	if (last)
		pthread_join(tt.thread, NULL);
	pthread_mutex_unlock(&life);
}
