/* Rx modes per queue and the wakeups behind them.
 *
 * A queue's mode is what it asks of the thread that polls it when it is
 * empty (nodes/device-input.c):
 *   polling    poll again at once: the thread spins, the lowest latency at
 *              the price of a whole core;
 *   interrupt  nothing: when every source of the thread says so, the thread
 *              blocks in epoll_wait (graph/sleep.c) on the queues' fds;
 *   adaptive   polling while frames came within DEV_RX_ADAPTIVE_NS, then
 *              interrupt; the first frame after a quiet spell wakes the
 *              thread (through the fd) and makes the queue poll again.
 * Why 200 us for adaptive: blocking and being woken costs the thread
 * a few microseconds of system calls and the frame that wakes it about
 * 10-50 us of wakeup latency on a loaded virtual machine; a queue whose
 * frames come closer than 200 us apart (above 5 kpps) stays polled, so a
 * stream pays that latency once, not per frame, while an idle queue
 * spins at most 200 us after its last frame.
 *
 * What wakes a blocked thread for a queue is the driver's rx_fd: an fd
 * (af-packet: its socket, readable per frame on a TPACKET_V2 ring; ixgbe,
 * i40e: the queue's MSI-X vector as a vfio eventfd, armed by
 * device_ops.rx_arm in the thread's last look) watched on the epoll of the
 * thread the queue is placed on; DEV_RX_FD_SELF (null: nothing comes that
 * a poll does not make; pcap: the next recorded frame's time through
 * graph_thread_wake_within); or none (a NIC without MSI-X vectors), and
 * then a thread with such a queue in interrupt or adaptive mode falls back
 * to the old back-off (sleeps of growing length up to cpu { idle-max })
 * rather than blocking.
 */
#include <errno.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/graph.h"

enum dev_rx_mode dev_rx_mode_default = DEV_RX_MODE_ADAPTIVE;

/* The graph whose epolls hold the fds watched now (it may be detached
 * since). */
static struct graph *watch_graph;

static const char *const mode_names[DEV_RX_MODE_N] = { "default", "polling", "interrupt", "adaptive" };

const char *dev_rx_mode_name(enum dev_rx_mode m)
{
	return (unsigned)m < DEV_RX_MODE_N ? mode_names[m] : "?";
}

int dev_rx_mode_parse(const char *s)
{
	for (int m = DEV_RX_MODE_POLLING; m < DEV_RX_MODE_N; m++)
		if (strcmp(s, mode_names[m]) == 0)
			return m;
	return -1;
}

enum dev_rx_mode dev_rx_mode(const struct device *dev, uint16_t queue)
{
	enum dev_rx_mode m = (enum dev_rx_mode)dev->rxq[queue].rx_mode;
	return m == DEV_RX_MODE_DEFAULT ? dev_rx_mode_default : m;
}

/* The poll lists carry each queue's effective mode: rebuild them through a
 * placement that changes nothing. */
static int modes_republish(void)
{
	struct device *d;
	DEV_FOREACH(d)
	if (d->n_rx_queues)
		return dev_set_rx_placement(d, 0, d->rxq[0].thread_index);
	return 0;
}

void dev_rx_mode_set_default(enum dev_rx_mode m)
{
	if (m <= DEV_RX_MODE_DEFAULT || m >= DEV_RX_MODE_N)
		return;
	dev_rx_mode_default = m;
	(void)modes_republish();
}

int dev_set_rx_mode(struct device *dev, int queue, enum dev_rx_mode mode)
{
	if (queue >= (int)dev->n_rx_queues || queue < -1 || (unsigned)mode >= DEV_RX_MODE_N)
		return -EINVAL;
	uint16_t first = queue < 0 ? 0 : (uint16_t)queue;
	uint16_t end = queue < 0 ? dev->n_rx_queues : (uint16_t)(queue + 1);
	for (uint16_t q = first; q < end; q++)
		dev->rxq[q].rx_mode = (uint8_t)mode;
	return modes_republish();
}

static void unwatch_queue(struct dev_queue *rq)
{
	if (rq->watch_fd1 && watch_graph)
		(void)graph_rx_watch(watch_graph, rq->watch_thread, rq->watch_fd1 - 1, false);
	rq->watch_fd1 = 0;
}

void dev_rx_unwatch(struct device *dev)
{
	for (uint16_t q = 0; q < dev->n_rx_queues; q++)
		unwatch_queue(&dev->rxq[q]);
}

static void sync_queue(struct graph *g, struct device *d, uint16_t q)
{
	struct dev_queue *rq = &d->rxq[q];
	int fd = DEV_RX_FD_SELF; /* a down interface is not polled: nothing to wait for */
	if (d->admin_up)
		fd = d->ops->rx_fd ? d->ops->rx_fd(d, q) : DEV_RX_FD_NONE;
	rq->rx_wait = fd >= 0 ? DEV_RX_WAIT_FD : fd == DEV_RX_FD_SELF ? DEV_RX_WAIT_SELF : DEV_RX_WAIT_POLL;
	if (rq->watch_fd1 && (g != watch_graph || rq->watch_fd1 - 1 != fd || rq->watch_thread != rq->thread_index))
		unwatch_queue(rq);
	if (!g || fd < 0 || rq->watch_fd1)
		return;
	if (graph_rx_watch(g, rq->thread_index, fd, true) == 0) {
		rq->watch_fd1 = fd + 1;
		rq->watch_thread = rq->thread_index;
	} else {
		rq->rx_wait = DEV_RX_WAIT_POLL; /* cannot be woken: back off instead */
	}
}

void dev_rx_wake_sync(void)
{
	struct graph *g = dev_graph();
	struct device *d;
	DEV_FOREACH(d)
	for (uint16_t q = 0; q < d->n_rx_queues; q++)
		sync_queue(g, d, q);
	watch_graph = g;
}
