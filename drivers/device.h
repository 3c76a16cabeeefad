/* The interface layer: devices, their rx/tx queues and counters, the
 * interface table, rx-queue placement on threads, and the driver registry.
 *
 * A driver embeds `struct device` in its own struct, points dev->ops at one
 * `static const struct device_ops` table and recovers its struct with
 * container_of. The inline wrappers below are the only way nodes and control
 * code reach the ops.
 *
 * Counters follow testpmd: RX-packets, RX-bytes, RX-dropped (no buffers,
 * ring full), RX-errors, TX-packets, TX-bytes, TX-dropped. They live per
 * queue, each queue's line written by one thread only:
 *   RX-packets/RX-bytes: the input node polling the queue, once per burst;
 *   RX-dropped/RX-errors: the driver inside rx_burst (and stats() for what
 *     only the hardware or kernel knows);
 *   TX-packets/TX-bytes/TX-dropped: interface-output on the thread using the
 *     tx queue (thread index modulo the tx queue count), including what the
 *     driver did not take and what arrived while the interface was down.
 * Interface totals are the sums over queues plus what stats() adds. Clearing
 * takes a baseline instead of writing the datapath's lines.
 *
 * Thread-safety: the datapath only reads the table, the poll lists and the
 * device fields and writes its own queue counters. Every call that changes
 * them (create, delete, admin state, mode, placement) must run with the
 * datapath parked (graph barrier) or before it starts; counters may be read
 * at any time.
 */
#ifndef SLUICE_DRIVERS_DEVICE_H
#define SLUICE_DRIVERS_DEVICE_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/conf.h"
#include "base/util.h"

#define DEV_NAME_SIZE CONF_NAME_SIZE
#define DEV_MAX 64                /* interfaces in the table */
#define DEV_MAX_QUEUES 16         /* rx and tx queues per interface, each */
#define DEV_MAX_THREADS 64        /* graph threads that may poll rx queues */
#define DEV_INDEX_INVALID UINT32_MAX
#define DEV_MTU_DEFAULT 1500
/* dev_set_mtu's range: RFC 791's 68 (every IPv4 host must take a 68-byte
 * datagram unfragmented) to a 9216-byte jumbo frame. */
#define DEV_MTU_MIN 68
#define DEV_MTU_MAX 9216
/* Packets one poll of an rx queue may take (the input node's rx burst):
 * 1..DEV_RX_BURST_MAX, a frame by default. A smaller burst is testpmd's
 * --burst: shorter vectors, lower latency per poll, more polls per packet. */
#define DEV_RX_BURST_MAX 256

struct device;

/* The testpmd counter set, per queue or summed for an interface. */
struct dev_counters {
	uint64_t rx_packets;
	uint64_t rx_bytes;
	uint64_t rx_dropped;
	uint64_t rx_errors;
	uint64_t tx_packets;
	uint64_t tx_bytes;
	uint64_t tx_dropped;
};

struct dev_link {
	bool up;
	bool full_duplex;
	uint32_t speed_mbps; /* 0: unknown */
};

enum dev_mode {
	DEV_MODE_L3 = 0,       /* ethernet-input hands frames to the L3 nodes */
	DEV_MODE_L2_XCONNECT,  /* everything received leaves through xconnect_peer */
	DEV_MODE_LCP,          /* a linux-cp TAP: ethernet-input hands every frame to lcp-xc */
};

/* Rx modes (VPP's names; drivers/device_rx_mode.c): what an rx queue with
 * nothing in it asks of the thread polling it. */
enum dev_rx_mode {
	DEV_RX_MODE_DEFAULT = 0, /* the startup default (dev_rx_mode_default) */
	DEV_RX_MODE_POLLING,     /* poll again at once: the thread spins */
	DEV_RX_MODE_INTERRUPT,   /* nothing: the thread may block, woken by the queue's fd */
	DEV_RX_MODE_ADAPTIVE,    /* polling while frames came in the last DEV_RX_ADAPTIVE_NS, then interrupt */
	DEV_RX_MODE_N,
};

/* How a queue wakes a thread blocked in epoll_wait (ops->rx_fd). */
enum dev_rx_wait {
	DEV_RX_WAIT_POLL = 0, /* it cannot: the thread backs off instead of blocking */
	DEV_RX_WAIT_FD,       /* its fd becomes readable (watched on its thread) */
	DEV_RX_WAIT_SELF,     /* the driver arranges its wakeups (graph_thread_wake_within) or has none to wait for */
};
#define DEV_RX_FD_NONE (-1) /* ops->rx_fd: DEV_RX_WAIT_POLL */
#define DEV_RX_FD_SELF (-2) /* ops->rx_fd: DEV_RX_WAIT_SELF */

/* adaptive: how long a queue keeps its thread polling after its last frame. */
#define DEV_RX_ADAPTIVE_NS 200000ull

/* One queue: counters on their own line, written by one thread. */
struct dev_queue {
	alignas(64) struct dev_counters c;
	uint64_t last_rx_ticks; /* rx (adaptive): cpu_ticks of the first empty poll after frames; 0 while polls find frames */
	uint16_t thread_index; /* rx queues: the thread polling it */
	uint8_t rx_mode;       /* enum dev_rx_mode as set; DEFAULT follows dev_rx_mode_default */
	uint8_t rx_wait;       /* enum dev_rx_wait, set while the interface is up */
	uint16_t watch_thread; /* the thread whose epoll holds watch_fd1 - 1 */
	int watch_fd1;         /* the fd watched plus one, 0: none */
	alignas(64) struct dev_counters base; /* snapshot taken by dev_clear_counters */
};

struct device_ops {
	/* The graph node that sends on this driver's interfaces: "<driver>-tx"
	 * ("null-tx", made for every driver by nodes/device-tx.c from
	 * dev_driver_instance); the device layer adds the arcs to it (dev tx
	 * senders below). NULL: none, and what is sent to the interface is
	 * dropped by interface-output as "no tx node". */
	const char *tx_node;
	/* Bring the device up / down. 0 or a negative errno. Optional. */
	int (*start)(struct device *dev);
	void (*stop)(struct device *dev);
	/* Receive up to n packets of rx queue `queue` into fresh buffers whose
	 * indices go to bi[]; returns how many. Counts RX-dropped/RX-errors in
	 * dev->rxq[queue]; the caller counts RX-packets/RX-bytes. */
	uint32_t (*rx_burst)(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n);
	/* Send bi[0..n) on tx queue `queue`; returns how many were taken (a
	 * prefix of bi). Taken buffers belong to the driver (it frees them once
	 * sent); the caller frees and counts as TX-dropped the rest. */
	uint32_t (*tx_burst)(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n);
	/* Link state. Optional: without it the link follows the admin state. */
	void (*link)(struct device *dev, struct dev_link *link);
	/* Add counters only the driver knows (kernel or NIC drops) to *c.
	 * Optional. */
	void (*stats)(struct device *dev, struct dev_counters *c);
	/* `show hardware`: the driver's own state of interest (for a NIC its
	 * registers: link, speed, queue heads and tails, drop counters) as
	 * '\n'-separated lines into buf; returns the snprintf-style length.
	 * Control thread, datapath parked. Optional. */
	int (*format_hw)(struct device *dev, char *buf, size_t len);
	/* Buffers the driver keeps on a queue now (rx: armed in the ring or in
	 * a frame being assembled; tx: handed to the NIC, not yet reclaimed),
	 * for `show buffers`. Control thread, datapath parked. Optional:
	 * drivers that copy (af-packet, pcap, null) keep none. */
	uint32_t (*n_buffers_held)(struct device *dev, bool rx, uint16_t queue);
	/* The fd that becomes readable when rx queue `queue` has frames (an
	 * af-packet socket), DEV_RX_FD_SELF when the driver wakes its thread
	 * itself or never has frames it did not make in a poll, or
	 * DEV_RX_FD_NONE. Control thread, interface up. Optional (NONE). */
	int (*rx_fd)(struct device *dev, uint16_t queue);
	/* The thread polling rx queue `queue` (interrupt mode, or adaptive
	 * past its window) found it empty in its last look before blocking
	 * (graph/sleep.c): enable what makes rx_fd readable (a NIC's interrupt
	 * cause), then look at the ring once more; true when that look found
	 * a frame, and the thread must not block. Datapath, the queue's
	 * thread. Optional: an fd that needs no arming (a socket). */
	bool (*rx_arm)(struct device *dev, uint16_t queue);
	/* Stop if running, release everything, free the driver's struct. */
	void (*destroy)(struct device *dev);
	/* Take a new MTU / MAC where the driver keeps one of its own (af-packet:
	 * the host interface's MTU; tap: the Linux TAP's); 0 or a negative
	 * errno, and then nothing changed. Optional: without them the MTU is
	 * sluice's own IP MTU (ip4-rewrite) and the MAC sluice's own (its
	 * rewrites, ARP, ethernet-input's filter). Control thread, datapath
	 * parked. */
	int (*set_mtu)(struct device *dev, uint32_t mtu);
	int (*set_mac)(struct device *dev, const uint8_t mac[6]);
};

struct dev_driver;

/* Embedded in each driver's own struct. The first line is what the
 * datapath reads per burst or per packet. */
struct device {
	alignas(64) const struct device_ops *ops;
	uint32_t index;          /* in the interface table: buffer rx_if / tx_if */
	uint32_t xconnect_peer;  /* DEV_MODE_L2_XCONNECT: the interface to send to */
	uint8_t mode;            /* enum dev_mode */
	bool admin_up;
	uint16_t n_rx_queues;
	uint16_t n_tx_queues;
	uint16_t mtu;
	uint8_t mac[6]; /* the driver's, or a locally administered 02:fe:.. made at registration */
	uint16_t rx_burst; /* packets per poll of each rx queue, 1..DEV_RX_BURST_MAX (dev_set_rx_burst) */
	const struct dev_driver *driver;
	char name[DEV_NAME_SIZE];
	struct dev_queue rxq[DEV_MAX_QUEUES];
	struct dev_queue txq[DEV_MAX_QUEUES];
	struct dev_counters base; /* baseline of what stats() adds */
	uint8_t link_seen; /* event log: the link state last logged, 0 none, 1 down, 2 up */
};

/* ---- ops wrappers ---- */

static inline uint32_t dev_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	return dev->ops->rx_burst(dev, queue, bi, n);
}

static inline uint32_t dev_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	return dev->ops->tx_burst(dev, queue, bi, n);
}

/* The tx queue the calling thread uses: one per thread while there are
 * enough, else shared modulo the count (see the report on shared queues). */
static inline uint16_t dev_tx_queue(const struct device *dev, uint32_t thread_index)
{
	return (uint16_t)(thread_index % dev->n_tx_queues);
}

void dev_link_get(struct device *dev, struct dev_link *link);

/* The event log's interface events (device_elog.c): an admin change made
 * (rc: the driver's start status, returned), a link state seen (logged
 * when it differs from the last one seen). */
int dev_elog_admin(struct device *dev, bool up, int rc);
void dev_elog_link(struct device *dev, const struct dev_link *l);

/* ---- the interface table ---- */

struct dev_table {
	struct device *devs[DEV_MAX];
	uint32_t n_devs;
	/* Per thread: the rx queues it polls, rebuilt on every change. */
	struct dev_poll {
		struct device *dev;
		uint16_t queue;
		uint8_t rx_mode; /* effective: never DEV_RX_MODE_DEFAULT */
	} *poll[DEV_MAX_THREADS];
	uint32_t n_poll[DEV_MAX_THREADS];
};
extern struct dev_table dev_table;

/* The interface with this index, or NULL. Safe on the datapath. */
static inline struct device *dev_by_index(uint32_t index)
{
	return index < DEV_MAX ? dev_table.devs[index] : NULL;
}

/* The interface called name, or NULL. */
struct device *dev_by_name(const char *name);

/* Interfaces in the table. Iterate with DEV_FOREACH. */
uint32_t dev_count(void);
#define DEV_FOREACH(d)                                                                         \
	for (uint32_t dev_i_ = 0; dev_i_ < DEV_MAX; dev_i_++)                                  \
		if (((d) = dev_table.devs[dev_i_]) != NULL)

/* Enter a device the driver has filled (ops, driver, queue counts, and its
 * MAC when it has one) into the table under name: gives it the lowest free
 * index and, when its MAC is all zeros, a random locally administered one
 * (02:fe:xx:xx:xx:xx, as VPP gives its af-packet interfaces: the host
 * kernel keeps its own address, so frames for sluice are not also taken up
 * by the host stack); places its rx queues on thread 0, starts admin down
 * in L3 mode; in the attached graph (dev_graph_attach) the senders get
 * their arcs to its tx node. 0, -EEXIST (name taken), -ENOSPC,
 * -EINVAL (bad name or queue counts), -EMLINK (a sender has no room for
 * another arc). */
int dev_register(struct device *dev, const char *name);

/* Take a device out of the table (interfaces cross-connected to it fall back
 * to L3) without destroying it. */
void dev_unregister(struct device *dev);

/* Unregister and destroy through ops->destroy, after telling every
 * delete hook (below) that the interface goes. */
void dev_delete(struct device *dev);

/* Run fn(if_index) from dev_delete while the interface is still registered,
 * so that subsystems above drivers/ (IPv4 addresses, routes, neighbours)
 * forget it without drivers/ depending on them. Control path only (the
 * datapath parked); hooks registered from constructors run in registration
 * order. Returns 0, or -ENOSPC beyond DEV_MAX_DELETE_HOOKS. */
#define DEV_MAX_DELETE_HOOKS 8
int dev_on_delete(void (*fn)(uint32_t if_index));

/* Run fn(if_index) after an interface's admin state, MTU or MAC changed,
 * so that linux-cp keeps the paired TAP in step and IPv4 its rewrites'
 * source MAC. Same rules as dev_on_delete. */
int dev_on_change(void (*fn)(uint32_t if_index));

/* Tell the change hooks that dev changed (device_set.c). */
void dev_changed(struct device *dev);

/* `set interface mtu`: DEV_MTU_MIN..DEV_MTU_MAX, through the driver's
 * set_mtu when it has one; the change hooks run when it changed. 0,
 * -ERANGE, or the driver's refusal (nothing changed). Datapath parked. */
int dev_set_mtu(struct device *dev, uint32_t mtu);

/* `set interface mac address`: a unicast MAC (group bit clear, not all
 * zeros), through the driver's set_mac when it has one; the change hooks
 * run when it changed. 0, -EINVAL, or the driver's refusal. Datapath
 * parked. */
int dev_set_mac(struct device *dev, const uint8_t mac[6]);

/* mac as aa:bb:cc:dd:ee:ff into buf (18 bytes); returns buf. */
const char *dev_format_mac(char buf[18], const uint8_t mac[6]);

/* A random locally administered unicast MAC, 02:fe:xx:xx:xx:xx. */
void dev_mac_generate(uint8_t mac[6]);

/* Unregister and destroy every interface (shutdown, tests). */
void dev_delete_all(void);

/* ---- tx arcs ---- */

/* A node that hands packets to the drivers' tx nodes (interface-output,
 * sched-egress) registers one of these: next[if_index] is its arc to that
 * interface's tx node (ops->tx_node) in the attached graph, 0 when there is
 * none (no graph, no tx node, or that node not in the graph), so a sender's
 * arc 0 must not be a tx node (it is error-drop). Only the device layer
 * writes it, with the datapath parked; the datapath reads it per frame. */
struct dev_tx_sender {
	const char *node; /* the sender's name in the graph */
	uint16_t next[DEV_MAX];
};

/* From a constructor: see DEV_TX_SENDER_REGISTER. */
void dev_tx_sender_register(struct dev_tx_sender *s);
#define DEV_TX_SENDER_REGISTER(s)                                                              \
	static void __attribute__((constructor)) dev_tx_sender_register_##s(void)              \
	{                                                                                      \
		dev_tx_sender_register(&(s));                                                  \
	}

struct graph;

/* Make g the graph whose arcs carry packets to the interfaces: adds, with
 * graph_add_next, an arc from every registered sender in g to the tx node
 * of every interface there is, and from then on of every interface
 * registered, until dev_graph_detach (which must come before
 * graph_destroy). Replaces the graph attached before, if any. Control
 * thread; takes the barrier. 0, or a negative errno with the reason in err
 * (-EMLINK: a sender has no room for another arc), and then no graph is
 * attached. */
int dev_graph_attach(struct graph *g, char *err, size_t errlen);

/* Forget g (nothing when another graph or none is attached): every
 * sender's table back to 0. The arcs stay in g. */
void dev_graph_detach(struct graph *g);

/* The graph attached, or NULL. */
struct graph *dev_graph(void);

/* Set by a driver whose own thread uses dev_graph() outside the barrier (the
 * tap reader's wake-ups): dev_graph_detach calls it once the pointer is
 * NULL, and it returns when that thread no longer holds the old graph. */
extern void (*dev_graph_detach_wait)(void);

/* ---- control ---- */

/* Admin state: start/stop the driver. Up on an interface already up whose
 * link is down (its driver's link op says so) stops and starts the driver
 * again: how an af-packet interface recovers once its host-if is made anew.
 * 0 or a negative errno from start (the interface is then admin down). */
int dev_set_admin_up(struct device *dev, bool up);

/* Put dev in L2 mode sending everything it receives out of peer (one way,
 * as `set interface l2 xconnect dev peer`). 0 or -EINVAL (same interface). */
int dev_set_xconnect(struct device *dev, struct device *peer);

/* Back to L3 mode. */
void dev_set_l3(struct device *dev);

/* Packets the input node asks of each rx queue per poll (a registered
 * interface starts at DEV_RX_BURST_MAX, a whole frame). Read once per poll,
 * so it costs nothing per packet. 0, or -ERANGE outside
 * 1..DEV_RX_BURST_MAX (nothing changed). */
int dev_set_rx_burst(struct device *dev, uint32_t n);

/* ---- rx placement ---- */

/* Poll rx queue `queue` of dev from thread `thread_index`.
 * 0 or -EINVAL (queue or thread out of range). */
int dev_set_rx_placement(struct device *dev, uint16_t queue, uint32_t thread_index);

/* Place every rx queue of every interface round-robin over threads
 * first..first+n-1 (interfaces in index order, queues in order). With n 0
 * everything goes to thread 0. Returns 0 or -EINVAL. */
int dev_rx_placement_round_robin(uint32_t first, uint32_t n);

/* The rx queues thread_index polls; *n gets their count. The array stays
 * valid until the next placement or table change. */
static inline const struct dev_poll *dev_poll_list(uint32_t thread_index, uint32_t *n)
{
	if (thread_index >= DEV_MAX_THREADS) {
		*n = 0;
		return NULL;
	}
	*n = dev_table.n_poll[thread_index];
	return dev_table.poll[thread_index];
}

/* ---- rx modes (drivers/device_rx_mode.c) ---- */

/* The mode of queues left at DEV_RX_MODE_DEFAULT (startup.conf
 * `cpu { rx-mode }`); adaptive unless set. */
extern enum dev_rx_mode dev_rx_mode_default;
void dev_rx_mode_set_default(enum dev_rx_mode m);

/* `set interface rx-mode NAME [queue N] MODE`: one queue, or every queue
 * when queue is -1. Datapath parked. 0 or -EINVAL (queue or mode out of
 * range; nothing changed). */
int dev_set_rx_mode(struct device *dev, int queue, enum dev_rx_mode mode);

/* The mode rx queue `queue` of dev is in (DEFAULT resolved). */
enum dev_rx_mode dev_rx_mode(const struct device *dev, uint16_t queue);

/* "polling", "interrupt", "adaptive" ("default" for DEFAULT); parse: the
 * mode or -1. */
const char *dev_rx_mode_name(enum dev_rx_mode m);
int dev_rx_mode_parse(const char *s);

/* Bring each rx queue's wakeup in line with its interface's state and
 * placement: its fd watched on the thread it is placed on while the
 * interface is up and a graph is attached (graph_rx_watch). The device
 * layer calls it after every such change; before a driver closes its fds
 * (stop, destroy) dev_rx_unwatch(dev). Control thread. */
void dev_rx_wake_sync(void);
void dev_rx_unwatch(struct device *dev);

/* ---- counters ---- */

/* Interface totals since the last clear, including what stats() adds. */
void dev_counters_get(struct device *dev, struct dev_counters *c);

/* One queue since the last clear (rx: the rx fields; tx: the tx fields). */
void dev_rx_queue_counters(const struct device *dev, uint16_t queue, struct dev_counters *c);
void dev_tx_queue_counters(const struct device *dev, uint16_t queue, struct dev_counters *c);

/* Start counting from zero again (a baseline; the datapath is not touched). */
void dev_clear_counters(struct device *dev);

/* ---- drivers ---- */

/* A driver: its name (the `driver` value), its key table and a constructor.
 * create() gets the driver's own struct as the key table filled it and
 * returns a device with ops, driver and queue counts set (not yet
 * registered), or NULL with the reason in err. */
struct dev_driver {
	const char *name;
	const struct conf_driver *conf;
	struct device *(*create)(const void *conf, char *err, size_t errlen);
};

/* From a constructor: see DEV_DRIVER_REGISTER. Also registers the key table
 * with the startup.conf driver registry. */
void dev_driver_register(const struct dev_driver *d);
#define DEV_DRIVER_REGISTER(d)                                                                 \
	static void __attribute__((constructor)) dev_driver_register_##d(void)                 \
	{                                                                                      \
		dev_driver_register(&(d));                                                     \
	}

/* The driver called name, or NULL. */
const struct dev_driver *dev_driver_find(const char *name);

/* The driver table's size, and registrations dropped because it was full
 * (the plugin loader refuses the plugin that brought them). */
#define DEV_MAX_DRIVERS 16
uint32_t dev_driver_dropped(void);

/* The i-th registered driver as a node template's instance (graph/node.h,
 * node_instance_fn_t): its name and itself as the context, false past the
 * last. nodes/device-input.c and device-tx.c make "<driver>-input" and
 * "<driver>-tx" from it, so a driver registered here (DEV_DRIVER_REGISTER)
 * has its nodes with no line anywhere else; its ops->tx_node names the
 * second. */
bool dev_driver_instance(uint32_t i, const char **name, const void **context);

/* Create and register an interface from its driver's filled key struct
 * (startup.conf's struct conf_interface gives both). Returns the device or
 * NULL with a message for a person in err. */
struct device *dev_create_conf(const char *name, const struct conf_driver *drv, const void *conf,
			       char *err, size_t errlen);

/* Create from words as typed at the CLI: `key value` pairs (flags take no
 * value), checked against the driver's table, defaults for the rest.
 * Returns the device or NULL with a message in err. */
struct device *dev_create(const char *name, const char *driver, const char *const *words, uint32_t n_words,
			  char *err, size_t errlen);

#endif
