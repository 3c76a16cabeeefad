/* wake: how long a frame written into a veth waits before sluice receives
 * it, by rx mode, beside the kernel's own AF_PACKET socket on the same veth.
 *
 *   sender (AF_PACKET on TX) --veth--> RX: sluice's af-packet interface,
 *                                          or a plain AF_PACKET socket
 *
 * Each frame (ethertype 0x88b5, IEEE 802 local experimental) carries its
 * sequence number and the CLOCK_MONOTONIC time read just before its
 * sendto(). Frames are spaced --spacing us apart plus a random 0..spacing/2
 * (so that no timer of either side beats in step with them): far beyond
 * adaptive mode's 200 us window, so every frame finds a thread that has
 * gone idle. Phases, one after the other, each --frames frames:
 *   kernel     a plain AF_PACKET socket bound to RX, one thread blocked in
 *              recv(); the time is read when recv returns. The peer: the
 *              kernel's own wakeup of a thread for a frame on a packet socket.
 *   polling    sluice, the queue in rx-mode polling (rx-ring auto: the
 *              TPACKET_V3 block ring, the thread spins);
 *   polling-frame  rx-mode polling on the per-frame ring (rx-ring frame:
 *              TPACKET_V2; the thread spins), a second interface on the
 *              same veth, up in this phase only;
 *   adaptive   rx-mode adaptive (TPACKET_V2 ring; the thread blocks in
 *              epoll_wait 200 us after the last frame);
 *   interrupt  rx-mode interrupt (TPACKET_V2; blocks at once);
 *   backoff    the back-off sluice had before rx modes (`cpu { idle-mode
 *              sleep }`, which now means adaptive): a TPACKET_V3 ring (the
 *              queue started in polling mode and switched to interrupt, which
 *              keeps the ring) on a thread that cannot block, so it sleeps
 *              1, 2, 4 ... us up to idle-max (1000 us) between empty polls.
 *              It is re-created here by one extra input node that cannot
 *              sleep (bench-wake-nosleep, enabled in this phase only), the
 *              same path an ixgbe queue in interrupt mode takes today.
 * sluice's time is read by bench-wake-stamp, a node of this program only,
 * put on the arc af-packet-input -> ethernet-input (a node feature): one
 * clock read per frame it is given, which the engine's own datapath never
 * pays. So sluice's figure is the frame's way through the kernel into the
 * ring, the thread's wakeup, one loop of the graph up to the first node
 * after the input; the kernel's is the same frame's way to the socket
 * queue and the wakeup of the thread in recv.
 *
 * The graph runs on this program's main thread (graph_main_loop, as the
 * daemon's thread 0 runs it, every registered node included: its process
 * nodes wake it as they do the daemon's); the sender is a second thread.
 * Neither is pinned: on a box with other work the scheduler's delay in
 * running a woken thread is part of every figure, on both sides.
 *
 * Printed, one line per phase:
 *   wake: PHASE frames N got G median_us M p99_us P min_us A max_us B cpu_s C sleeps S
 * (cpu_s: CPU time of the thread that receives, over the phase; sleeps:
 * times sluice's thread blocked in epoll_wait). bench/wake/run.sh makes the
 * veth pair in a namespace of its own and runs this inside it.
 *
 * Usage: sluice-bench-wake --rx IF --tx IF [--frames N] [--spacing US]
 *                          [--phases kernel,polling,...] [--no-huge]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "drivers/device.h"
#include "graph/graph.h"

#define WAKE_ETHERTYPE 0x88b5
#define WAKE_MAGIC 0x736c7763u
#define WAKE_FRAME_LEN 64

struct wake_payload {
	uint32_t magic;
	uint32_t phase;
	uint32_t seq;
	uint32_t pad;
	uint64_t sent_ns;
} __attribute__((packed));

enum phase { PH_KERNEL, PH_POLLING, PH_POLLING_FRAME, PH_ADAPTIVE, PH_INTERRUPT, PH_BACKOFF, PH_N };
static const char *const phase_names[PH_N] = { "kernel",   "polling",   "polling-frame",
						"adaptive", "interrupt", "backoff" };

/* What the current phase received: latency per sequence number (-1: not
 * seen). Written by the receiving thread only, read after the phase. */
static struct {
	int64_t *lat_ns;
	uint32_t n;
	_Atomic uint32_t phase;
	_Atomic uint32_t got;
} rec;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One received frame at `now`: its latency, if it is this phase's. */
static void record(const uint8_t *p, uint32_t len, uint64_t now)
{
	if (len < ETH_HLEN + sizeof(struct wake_payload) || p[12] != (WAKE_ETHERTYPE >> 8) ||
	    p[13] != (WAKE_ETHERTYPE & 0xff))
		return;
	struct wake_payload w;
	memcpy(&w, p + ETH_HLEN, sizeof(w));
	if (w.magic != WAKE_MAGIC || w.phase != atomic_load_explicit(&rec.phase, memory_order_relaxed) ||
	    w.seq >= rec.n || rec.lat_ns[w.seq] >= 0)
		return;
	rec.lat_ns[w.seq] = (int64_t)(now - w.sent_ns);
	atomic_fetch_add_explicit(&rec.got, 1, memory_order_relaxed);
}

/* ---- bench-wake-stamp: af-packet-input -> here -> ethernet-input ---- */

static uint32_t stamp_fn(struct node_runtime *rt, struct frame *fr)
{
	uint64_t now = mono_ns(); /* one read per frame of packets */
	for (uint32_t i = 0; i < fr->n_vectors; i++) {
		struct buffer *b = buffer_get(fr->buffers[i]);
		record(buffer_data(b), b->current_length, now);
	}
	node_forward_frame(rt, 0, fr);
	return fr->n_vectors;
}

static const struct node_reg stamp_node = {
	.name = "bench-wake-stamp",
	.type = NODE_TYPE_INTERNAL,
	.fn = stamp_fn,
	.n_next = 1,
	.next_nodes = { "ethernet-input" },
};
NODE_REGISTER(stamp_node)

static const struct node_feature stamp_feature = {
	.node = "bench-wake-stamp", .from = "af-packet-input", .to = "ethernet-input",
};
NODE_FEATURE_REGISTER(stamp_feature)

/* ---- bench-wake-nosleep: an input that cannot say when it has work ---- */

static uint32_t nosleep_fn(struct node_runtime *rt, struct frame *fr)
{
	(void)rt;
	(void)fr;
	return 0;
}

static const struct node_reg nosleep_node = {
	.name = "bench-wake-nosleep",
	.type = NODE_TYPE_INPUT,
	.fn = nosleep_fn,
	.default_state = NODE_STATE_DISABLED,
	.can_sleep = false, /* the thread backs off instead of blocking */
};
NODE_REGISTER(nosleep_node)

/* ---- the sender ---- */

struct opts {
	const char *rx, *tx;
	uint32_t frames, spacing_us;
	bool no_huge;
	bool phase_on[PH_N];
};

struct sender {
	const struct opts *o;
	int fd;
	struct sockaddr_ll to;
	enum phase phase;
	struct graph *g;
	atomic_bool stop;
	double cpu_s; /* the kernel phase's receiving thread */
};

static int packet_socket(const char *ifname, uint16_t proto, struct sockaddr_ll *sll)
{
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(proto));
	if (fd < 0)
		return -1;
	*sll = (struct sockaddr_ll){ .sll_family = AF_PACKET, .sll_protocol = htons(proto),
				     .sll_ifindex = (int)if_nametoindex(ifname), .sll_halen = ETH_ALEN };
	memset(sll->sll_addr, 0xff, ETH_ALEN);
	if (!sll->sll_ifindex || bind(fd, (struct sockaddr *)sll, sizeof(*sll)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	uint8_t f[WAKE_FRAME_LEN] = { 0 };
	memset(f, 0xff, ETH_ALEN);
	f[6] = 0x02; /* a locally administered source */
	f[12] = WAKE_ETHERTYPE >> 8;
	f[13] = WAKE_ETHERTYPE & 0xff;
	unsigned seed = 12345u + (unsigned)s->phase;
	uint64_t next = mono_ns() + 20000000ull; /* 20 ms: the receiver is in place */
	for (uint32_t i = 0; i < s->o->frames; i++) {
		next += (uint64_t)s->o->spacing_us * 1000u +
			(uint64_t)(rand_r(&seed) % (s->o->spacing_us / 2 + 1)) * 1000u;
		sleep_until(next);
		struct wake_payload w = { .magic = WAKE_MAGIC, .phase = s->phase, .seq = i, .sent_ns = mono_ns() };
		memcpy(f + ETH_HLEN, &w, sizeof(w));
		if (sendto(s->fd, f, sizeof(f), 0, (struct sockaddr *)&s->to, sizeof(s->to)) < 0)
			perror("wake: sendto");
	}
	/* Until every frame is in, or 3 s: a receiver the scheduler kept off
	 * its CPU still has frames queued, which are late, not lost. */
	uint64_t until = mono_ns() + 3000000000ull;
	while (atomic_load_explicit(&rec.got, memory_order_relaxed) < s->o->frames && mono_ns() < until)
		sleep_until(mono_ns() + 1000000ull);
	atomic_store(&s->stop, true);
	if (s->g)
		graph_kick_index(s->g, 0, GRAPH_WAKE_CONTROL);
	return NULL;
}

static double thread_cpu_s(void);

/* ---- the kernel's socket ---- */

static void *kernel_main(void *arg)
{
	struct sender *s = arg;
	struct sockaddr_ll sll;
	int fd = packet_socket(s->o->rx, WAKE_ETHERTYPE, &sll);
	if (fd < 0) {
		perror("wake: kernel socket");
		return NULL;
	}
	struct timeval tv = { 0, 100000 }; /* to see the end of the phase */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	/* Room for as many frames as sluice's rings hold (4 MB), so that a
	 * thread kept off its CPU makes frames late, not lost, on both sides. */
	int rcv = 4 << 20;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	uint8_t buf[2048];
	double cpu0 = thread_cpu_s();
	while (!atomic_load(&s->stop)) {
		ssize_t r = recv(fd, buf, sizeof(buf), 0);
		uint64_t now = mono_ns();
		if (r > 0)
			record(buf, (uint32_t)r, now);
	}
	s->cpu_s = thread_cpu_s() - cpu0;
	close(fd);
	return NULL;
}

/* ---- phases ---- */

static double thread_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void report(enum phase ph, uint32_t n, double cpu_s, uint64_t sleeps)
{
	int64_t *v = malloc(n * sizeof(*v));
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (rec.lat_ns[i] >= 0)
			v[k++] = rec.lat_ns[i];
	qsort(v, k, sizeof(*v), cmp_i64);
	double med = k ? (k % 2 ? (double)v[k / 2] : ((double)v[k / 2 - 1] + (double)v[k / 2]) / 2) : -1;
	double p99 = k ? (double)v[(size_t)((k - 1) * 0.99 + 0.5)] : -1;
	printf("wake: %s frames %u got %u median_us %.1f p99_us %.1f min_us %.1f max_us %.1f cpu_s %.3f sleeps %llu\n",
	       phase_names[ph], n, k, med / 1e3, p99 / 1e3, k ? (double)v[0] / 1e3 : -1,
	       k ? (double)v[k - 1] / 1e3 : -1, cpu_s, (unsigned long long)sleeps);
	fflush(stdout);
	free(v);
}

static void phase_begin(enum phase ph, const struct opts *o)
{
	for (uint32_t i = 0; i < o->frames; i++)
		rec.lat_ns[i] = -1;
	atomic_store(&rec.got, 0);
	atomic_store(&rec.phase, (uint32_t)ph);
}

static int run_kernel(const struct opts *o, int txfd, const struct sockaddr_ll *to)
{
	struct sender s = { .o = o, .fd = txfd, .to = *to, .phase = PH_KERNEL };
	pthread_t st, kt;
	phase_begin(PH_KERNEL, o);
	if (pthread_create(&kt, NULL, kernel_main, &s))
		return -1;
	usleep(10000);
	if (pthread_create(&st, NULL, sender_main, &s))
		return -1;
	pthread_join(st, NULL);
	pthread_join(kt, NULL);
	report(PH_KERNEL, o->frames, s.cpu_s, 0);
	return 0;
}

static uint64_t thread0_sleeps(struct graph *g)
{
	struct graph_thread_info ti;
	return graph_thread_info(g, 0, &ti) ? 0 : ti.sleeps;
}

static int run_sluice(const struct opts *o, enum phase ph, struct graph *g, struct device *dev, int txfd,
		      const struct sockaddr_ll *to)
{
	static const enum dev_rx_mode start_mode[PH_N] = {
		[PH_POLLING] = DEV_RX_MODE_POLLING, [PH_POLLING_FRAME] = DEV_RX_MODE_POLLING,
		[PH_ADAPTIVE] = DEV_RX_MODE_ADAPTIVE,
		[PH_INTERRUPT] = DEV_RX_MODE_INTERRUPT, [PH_BACKOFF] = DEV_RX_MODE_POLLING,
	};
	int nosleep = graph_node_index(g, "bench-wake-nosleep");
	/* With rx-ring auto (every phase's interface but polling-frame's) the
	 * ring follows the mode the queue has when the interface starts. */
	if (dev_set_admin_up(dev, false) || dev_set_rx_mode(dev, -1, start_mode[ph]) || dev_set_admin_up(dev, true))
		return -1;
	if (ph == PH_BACKOFF && (dev_set_rx_mode(dev, -1, DEV_RX_MODE_INTERRUPT) ||
				 graph_node_set_state(g, 0, (uint32_t)nosleep, NODE_STATE_POLLING)))
		return -1;
	struct sender s = { .o = o, .fd = txfd, .to = *to, .phase = ph, .g = g };
	pthread_t st;
	phase_begin(ph, o);
	uint64_t sleeps0 = thread0_sleeps(g);
	double cpu0 = thread_cpu_s();
	if (pthread_create(&st, NULL, sender_main, &s))
		return -1;
	graph_main_loop(g, &s.stop);
	double cpu = thread_cpu_s() - cpu0;
	pthread_join(st, NULL);
	report(ph, o->frames, cpu, thread0_sleeps(g) - sleeps0);
	if (ph == PH_BACKOFF)
		graph_node_set_state(g, 0, (uint32_t)nosleep, NODE_STATE_DISABLED);
	return dev_set_admin_up(dev, false);
}

static void usage(void)
{
	fprintf(stderr, "usage: sluice-bench-wake --rx IF --tx IF [--frames N] [--spacing US] "
			"[--phases kernel,polling,polling-frame,adaptive,interrupt,backoff] [--no-huge]\n");
	exit(2);
}

static void parse_phases(struct opts *o, const char *v)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", v);
	memset(o->phase_on, 0, sizeof(o->phase_on));
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k = -1;
		for (int i = 0; i < PH_N; i++)
			if (!strcmp(tok, phase_names[i]))
				k = i;
		if (k < 0)
			usage();
		o->phase_on[k] = true;
	}
}

static void parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .frames = 1000, .spacing_us = 1000 };
	for (int i = 0; i < PH_N; i++)
		o->phase_on[i] = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--no-huge")) {
			o->no_huge = true;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		const char *v = argv[++i];
		if (!strcmp(a, "--rx"))
			o->rx = v;
		else if (!strcmp(a, "--tx"))
			o->tx = v;
		else if (!strcmp(a, "--frames"))
			o->frames = (uint32_t)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--spacing"))
			o->spacing_us = (uint32_t)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--phases"))
			parse_phases(o, v);
		else
			usage();
	}
	if (!o->rx || !o->tx || !o->frames || o->frames > 10000000 || o->spacing_us < 250)
		usage(); /* spacing below adaptive's 200 us window measures no wakeup */
}

int main(int argc, char **argv)
{
	struct opts o;
	char err[256];
	parse(argc, argv, &o);
	rec.n = o.frames;
	rec.lat_ns = malloc(o.frames * sizeof(*rec.lat_ns));
	struct sockaddr_ll to;
	int txfd = packet_socket(o.tx, WAKE_ETHERTYPE, &to);
	if (!rec.lat_ns || txfd < 0) {
		fprintf(stderr, "wake: cannot open the sending socket on %s: %s\n", o.tx, strerror(errno));
		return 1;
	}
	printf("wake: %u frames per phase, %u..%u us apart, %s -> %s\n", o.frames, o.spacing_us,
	       o.spacing_us + o.spacing_us / 2, o.tx, o.rx);
	if (o.phase_on[PH_KERNEL] && run_kernel(&o, txfd, &to))
		return 1;

	struct buffer_config bc;
	buffer_config_default(&bc);
	if (o.no_huge)
		bc.page_size = 4096;
	if (buffer_main_init(&bc, err, sizeof(err))) {
		fprintf(stderr, "wake: %s\n", err);
		return 1;
	}
	struct graph_config cfg;
	graph_config_default(&cfg); /* idle-mode sleep: block when the inputs allow it */
	struct graph *g = graph_create(&cfg, err, sizeof(err));
	if (!g || graph_add_registered(g, err, sizeof(err)) || graph_build(g, err, sizeof(err)) ||
	    dev_graph_attach(g, err, sizeof(err))) {
		fprintf(stderr, "wake: graph: %s\n", err);
		return 1;
	}
	const char *words[] = { "host-if", o.rx, "rx-ring", "frame" };
	struct device *dev = dev_create("rx0", "af-packet", words, 2, err, sizeof(err));
	struct device *dev_frame = dev ? dev_create("rx1", "af-packet", words, 4, err, sizeof(err)) : NULL;
	if (!dev_frame) {
		fprintf(stderr, "wake: %s\n", err);
		return 1;
	}
	int rc = 0;
	for (int ph = PH_POLLING; ph < PH_N && !rc; ph++)
		if (o.phase_on[ph] &&
		    run_sluice(&o, (enum phase)ph, g, ph == PH_POLLING_FRAME ? dev_frame : dev, txfd, &to)) {
			fprintf(stderr, "wake: %s: cannot set the interface up in that mode\n", phase_names[ph]);
			rc = 1;
		}
	dev_graph_detach(g);
	graph_destroy(g);
	dev_delete_all();
	buffer_main_free();
	close(txfd);
	free(rec.lat_ns);
	return rc;
}
