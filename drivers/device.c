/* The interface table, rx placement, counters and the driver registry.
 *
 * Nothing here runs per packet: the datapath reads dev_table and the poll
 * lists directly (device.h) and writes only its queue counters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "drivers/device.h"
#include "graph/graph.h"

struct dev_table dev_table;

/* The input node receives a burst straight into one frame. */
_Static_assert(DEV_RX_BURST_MAX == FRAME_SIZE, "an rx burst fills at most one frame");
/* Read per poll with the rest of the device's first line. */
_Static_assert(offsetof(struct device, rx_burst) + sizeof(uint16_t) <= 64, "rx_burst in the first line");

/* ---- poll lists ---- */

/* Rebuild every thread's list from the queues' placement. A failed
 * allocation keeps the old lists (placement then lags until the next
 * change); the caller holds the datapath parked. */
static int poll_rebuild(void)
{
	uint32_t count[DEV_MAX_THREADS] = { 0 };
	struct dev_poll *lists[DEV_MAX_THREADS] = { NULL };
	struct device *d;

	DEV_FOREACH(d)
	for (uint16_t q = 0; q < d->n_rx_queues; q++)
		count[d->rxq[q].thread_index]++;
	for (uint32_t t = 0; t < DEV_MAX_THREADS; t++) {
		if (!count[t])
			continue;
		lists[t] = calloc(count[t], sizeof(struct dev_poll));
		if (!lists[t]) {
			for (uint32_t k = 0; k < t; k++)
				free(lists[k]);
			return -ENOMEM;
		}
		count[t] = 0;
	}
	DEV_FOREACH(d)
	for (uint16_t q = 0; q < d->n_rx_queues; q++) {
		uint32_t t = d->rxq[q].thread_index;
		lists[t][count[t]++] = (struct dev_poll){ .dev = d, .queue = q, .rx_mode = (uint8_t)dev_rx_mode(d, q) };
	}
	for (uint32_t t = 0; t < DEV_MAX_THREADS; t++) {
		free(dev_table.poll[t]);
		dev_table.poll[t] = lists[t];
		dev_table.n_poll[t] = count[t];
	}
	dev_rx_wake_sync();
	return 0;
}

/* ---- tx arcs ---- */

#define DEV_MAX_TX_SENDERS 4

static struct dev_tx_sender *tx_senders[DEV_MAX_TX_SENDERS];
static uint32_t n_tx_senders;
static struct graph *tx_graph; /* the attached graph */

void dev_tx_sender_register(struct dev_tx_sender *s)
{
	/* A constructor cannot report; a fifth sender is a build bug its
	 * node's tests show as packets dropped for want of a tx node. */
	if (n_tx_senders < DEV_MAX_TX_SENDERS)
		tx_senders[n_tx_senders++] = s;
}

struct graph *dev_graph(void)
{
	/* Acquire: the tap driver's reader thread reads it outside the barrier. */
	return __atomic_load_n(&tx_graph, __ATOMIC_ACQUIRE);
}

void (*dev_graph_detach_wait)(void);

/* Each sender's arc to dev's tx node in the attached graph, into its
 * table at dev->index; 0 where the graph lacks the sender or the tx node.
 * Nothing is written unless every arc could be made. graph_add_next
 * reuses an arc to the same node, so a sender has one per driver. */
static int tx_arcs_add(const struct device *dev, char *err, size_t errlen)
{
	uint16_t next[DEV_MAX_TX_SENDERS] = { 0 };
	char why[128];
	const char *tx = dev->ops->tx_node;
	if (!tx_graph || !tx || graph_node_index(tx_graph, tx) < 0)
		goto write;
	for (uint32_t k = 0; k < n_tx_senders; k++) {
		int node = graph_node_index(tx_graph, tx_senders[k]->node);
		if (node < 0)
			continue;
		int r = graph_add_next(tx_graph, (uint32_t)node, tx, why, sizeof(why));
		if (r < 0) {
			if (err)
				snprintf(err, errlen, "%s", why);
			return -EMLINK;
		}
		next[k] = (uint16_t)r;
	}
write:
	for (uint32_t k = 0; k < n_tx_senders; k++)
		tx_senders[k]->next[dev->index] = next[k];
	return 0;
}

static void tx_arcs_clear(uint32_t index)
{
	for (uint32_t k = 0; k < n_tx_senders; k++)
		tx_senders[k]->next[index] = 0;
}

int dev_graph_attach(struct graph *g, char *err, size_t errlen)
{
	struct device *d;
	int rc = 0;
	graph_barrier_sync(g);
	__atomic_store_n(&tx_graph, g, __ATOMIC_RELEASE);
	DEV_FOREACH(d)
	if (rc == 0)
		rc = tx_arcs_add(d, err, errlen);
	if (rc) {
		__atomic_store_n(&tx_graph, NULL, __ATOMIC_RELEASE);
		for (uint32_t i = 0; i < DEV_MAX; i++)
			tx_arcs_clear(i);
	}
	dev_rx_wake_sync();
	graph_barrier_release(g);
	return rc;
}

void dev_graph_detach(struct graph *g)
{
	if (!g || g != tx_graph)
		return;
	graph_barrier_sync(g);
	__atomic_store_n(&tx_graph, NULL, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < DEV_MAX; i++)
		tx_arcs_clear(i);
	dev_rx_wake_sync();
	graph_barrier_release(g);
	if (dev_graph_detach_wait)
		dev_graph_detach_wait(); /* no driver thread still holds g: it may be destroyed */
}

/* ---- the table ---- */

/* 02:fe then four random bytes: locally administered, unicast. */
void dev_mac_generate(uint8_t mac[6])
{
	uint32_t r;
	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)(time_now_ns() ^ ((uint64_t)getpid() << 16));
	mac[0] = 0x02;
	mac[1] = 0xfe;
	memcpy(mac + 2, &r, 4);
}

struct device *dev_by_name(const char *name)
{
	struct device *d;
	DEV_FOREACH(d)
	if (strcmp(d->name, name) == 0)
		return d;
	return NULL;
}

uint32_t dev_count(void)
{
	return dev_table.n_devs;
}

int dev_register(struct device *dev, const char *name)
{
	size_t len = strlen(name);
	if (len == 0 || len >= DEV_NAME_SIZE || !dev->ops || !dev->ops->rx_burst || !dev->ops->tx_burst ||
	    dev->n_rx_queues > DEV_MAX_QUEUES || dev->n_tx_queues == 0 || dev->n_tx_queues > DEV_MAX_QUEUES)
		return -EINVAL;
	if (dev_by_name(name))
		return -EEXIST;
	uint32_t i = 0;
	while (i < DEV_MAX && dev_table.devs[i])
		i++;
	if (i == DEV_MAX)
		return -ENOSPC;
	memcpy(dev->name, name, len + 1);
	dev->index = i;
	dev->mode = DEV_MODE_L3;
	dev->xconnect_peer = DEV_INDEX_INVALID;
	__atomic_store_n(&dev->admin_up, false, __ATOMIC_RELAXED);
	dev->rx_burst = DEV_RX_BURST_MAX;
	if (!dev->mtu)
		dev->mtu = DEV_MTU_DEFAULT;
	static const uint8_t zero_mac[6];
	if (memcmp(dev->mac, zero_mac, 6) == 0)
		dev_mac_generate(dev->mac);
	for (uint16_t q = 0; q < DEV_MAX_QUEUES; q++) {
		memset(&dev->rxq[q], 0, sizeof(dev->rxq[q]));
		memset(&dev->txq[q], 0, sizeof(dev->txq[q]));
	}
	memset(&dev->base, 0, sizeof(dev->base));
	int rc = tx_arcs_add(dev, NULL, 0);
	if (rc)
		return rc;
	dev_table.devs[i] = dev;
	dev_table.n_devs++;
	if (poll_rebuild()) {
		dev_table.devs[i] = NULL;
		dev_table.n_devs--;
		tx_arcs_clear(i);
		return -ENOMEM;
	}
	graph_feature_if_live(tx_graph, i, true);
	return 0;
}

void dev_unregister(struct device *dev)
{
	if (dev_by_index(dev->index) != dev)
		return;
	dev_rx_unwatch(dev);
	struct device *d;
	DEV_FOREACH(d)
	if (d->mode == DEV_MODE_L2_XCONNECT && d->xconnect_peer == dev->index)
		dev_set_l3(d);
	dev_table.devs[dev->index] = NULL;
	dev_table.n_devs--;
	tx_arcs_clear(dev->index);
	graph_feature_if_live(tx_graph, dev->index, false);
	if (poll_rebuild()) {
		/* The lists still name dev: empty them rather than poll freed memory. */
		for (uint32_t t = 0; t < DEV_MAX_THREADS; t++)
			dev_table.n_poll[t] = 0;
	}
	dev->index = DEV_INDEX_INVALID;
}

static void (*delete_hooks[DEV_MAX_DELETE_HOOKS])(uint32_t if_index);
static uint32_t n_delete_hooks;

int dev_on_delete(void (*fn)(uint32_t if_index))
{
	if (n_delete_hooks >= DEV_MAX_DELETE_HOOKS)
		return -ENOSPC;
	delete_hooks[n_delete_hooks++] = fn;
	return 0;
}

void dev_delete(struct device *dev)
{
	for (uint32_t i = 0; i < n_delete_hooks; i++)
		delete_hooks[i](dev->index);
	dev_set_admin_up(dev, false);
	dev_unregister(dev);
	dev->ops->destroy(dev);
}

void dev_delete_all(void)
{
	struct device *d;
	DEV_FOREACH(d)
	dev_delete(d);
	for (uint32_t t = 0; t < DEV_MAX_THREADS; t++) {
		free(dev_table.poll[t]);
		dev_table.poll[t] = NULL;
		dev_table.n_poll[t] = 0;
	}
}

/* ---- control ---- */

/* Up on an interface already up whose driver reports its link down: the
 * driver is restarted, so that it finds its lower interface again (an
 * af-packet host-if deleted and made anew). */
static bool restart_wanted(struct device *dev)
{
	if (!dev->admin_up || !dev->ops->link || !dev->ops->start)
		return false;
	struct dev_link l;
	dev_link_get(dev, &l);
	if (l.up)
		return false;
	dev_rx_unwatch(dev);
	if (dev->ops->stop)
		dev->ops->stop(dev);
	__atomic_store_n(&dev->admin_up, false, __ATOMIC_RELAXED);
	return true;
}

int dev_set_admin_up(struct device *dev, bool up)
{
	if (up == dev->admin_up && !(up && restart_wanted(dev)))
		return 0;
	if (up) {
		if (dev->ops->start) {
			int rc = dev->ops->start(dev);
			if (rc < 0)
				return dev_elog_admin(dev, up, rc);
		}
	} else {
		dev_rx_unwatch(dev); /* before stop closes the fds */
		if (dev->ops->stop)
			dev->ops->stop(dev);
	}
	/* Atomic: the sluice-tap thread reads it outside the barrier (its wake-ups). */
	__atomic_store_n(&dev->admin_up, up, __ATOMIC_RELAXED);
	dev_rx_wake_sync();
	dev_elog_admin(dev, up, 0);
	dev_changed(dev);
	return 0;
}

void dev_link_get(struct device *dev, struct dev_link *link)
{
	memset(link, 0, sizeof(*link));
	if (dev->ops->link)
		dev->ops->link(dev, link);
	else
		link->up = dev->admin_up;
	dev_elog_link(dev, link);
}

int dev_set_xconnect(struct device *dev, struct device *peer)
{
	if (dev == peer || dev_by_index(peer->index) != peer)
		return -EINVAL;
	dev->xconnect_peer = peer->index;
	dev->mode = DEV_MODE_L2_XCONNECT;
	return 0;
}

void dev_set_l3(struct device *dev)
{
	dev->mode = DEV_MODE_L3;
	dev->xconnect_peer = DEV_INDEX_INVALID;
}

int dev_set_rx_burst(struct device *dev, uint32_t n)
{
	if (n < 1 || n > DEV_RX_BURST_MAX)
		return -ERANGE;
	dev->rx_burst = (uint16_t)n;
	return 0;
}

/* ---- placement ---- */

int dev_set_rx_placement(struct device *dev, uint16_t queue, uint32_t thread_index)
{
	if (queue >= dev->n_rx_queues || thread_index >= DEV_MAX_THREADS)
		return -EINVAL;
	uint16_t old = dev->rxq[queue].thread_index;
	__atomic_store_n(&dev->rxq[queue].thread_index, (uint16_t)thread_index, __ATOMIC_RELAXED);
	if (poll_rebuild()) {
		__atomic_store_n(&dev->rxq[queue].thread_index, old, __ATOMIC_RELAXED);
		return -ENOMEM;
	}
	return 0;
}

int dev_rx_placement_round_robin(uint32_t first, uint32_t n)
{
	if (n == 0) {
		first = 0;
		n = 1;
	}
	if ((uint64_t)first + n > DEV_MAX_THREADS)
		return -EINVAL;
	uint32_t k = 0;
	struct device *d;
	DEV_FOREACH(d)
	for (uint16_t q = 0; q < d->n_rx_queues; q++)
		__atomic_store_n(&d->rxq[q].thread_index, (uint16_t)(first + k++ % n), __ATOMIC_RELAXED);
	return poll_rebuild();
}

/* ---- counters ---- */

/* Holder "device": what each driver keeps in its rings, per queue. */
static void device_holder(void *ctx, struct buffer_tally *t)
{
	(void)ctx;
	struct device *dev;
	DEV_FOREACH(dev)
	{
		if (!dev->ops->n_buffers_held)
			continue;
		char where[BUFFER_WHERE_SIZE];
		for (uint16_t q = 0; q < dev->n_rx_queues; q++) {
			snprintf(where, sizeof(where), "%s rx %u", dev->name, q);
			buffer_tally_add(t, where, dev->ops->n_buffers_held(dev, true, q));
		}
		for (uint16_t q = 0; q < dev->n_tx_queues; q++) {
			snprintf(where, sizeof(where), "%s tx %u", dev->name, q);
			buffer_tally_add(t, where, dev->ops->n_buffers_held(dev, false, q));
		}
	}
}

static void __attribute__((constructor)) device_holder_register(void)
{
	buffer_holder_register("device", device_holder, NULL);
}

static void counters_add(struct dev_counters *c, const struct dev_counters *x)
{
	c->rx_packets += stat_read(&x->rx_packets);
	c->rx_bytes += stat_read(&x->rx_bytes);
	c->rx_dropped += stat_read(&x->rx_dropped);
	c->rx_errors += stat_read(&x->rx_errors);
	c->tx_packets += stat_read(&x->tx_packets);
	c->tx_bytes += stat_read(&x->tx_bytes);
	c->tx_dropped += stat_read(&x->tx_dropped);
}

static void counters_sub(struct dev_counters *c, const struct dev_counters *x)
{
	c->rx_packets -= x->rx_packets;
	c->rx_bytes -= x->rx_bytes;
	c->rx_dropped -= x->rx_dropped;
	c->rx_errors -= x->rx_errors;
	c->tx_packets -= x->tx_packets;
	c->tx_bytes -= x->tx_bytes;
	c->tx_dropped -= x->tx_dropped;
}

/* Raw totals: queues plus the driver's own counters. */
static void counters_raw(struct device *dev, struct dev_counters *c, struct dev_counters *driver)
{
	memset(c, 0, sizeof(*c));
	memset(driver, 0, sizeof(*driver));
	for (uint16_t q = 0; q < dev->n_rx_queues; q++)
		counters_add(c, &dev->rxq[q].c);
	for (uint16_t q = 0; q < dev->n_tx_queues; q++)
		counters_add(c, &dev->txq[q].c);
	if (dev->ops->stats)
		dev->ops->stats(dev, driver);
}

void dev_counters_get(struct device *dev, struct dev_counters *c)
{
	struct dev_counters driver;
	counters_raw(dev, c, &driver);
	counters_add(c, &driver);
	for (uint16_t q = 0; q < dev->n_rx_queues; q++)
		counters_sub(c, &dev->rxq[q].base);
	for (uint16_t q = 0; q < dev->n_tx_queues; q++)
		counters_sub(c, &dev->txq[q].base);
	counters_sub(c, &dev->base);
}

static void queue_counters(const struct dev_queue *dq, struct dev_counters *c)
{
	memset(c, 0, sizeof(*c));
	counters_add(c, &dq->c);
	counters_sub(c, &dq->base);
}

void dev_rx_queue_counters(const struct device *dev, uint16_t queue, struct dev_counters *c)
{
	if (queue < dev->n_rx_queues)
		queue_counters(&dev->rxq[queue], c);
	else
		memset(c, 0, sizeof(*c));
}

void dev_tx_queue_counters(const struct device *dev, uint16_t queue, struct dev_counters *c)
{
	if (queue < dev->n_tx_queues)
		queue_counters(&dev->txq[queue], c);
	else
		memset(c, 0, sizeof(*c));
}

void dev_clear_counters(struct device *dev)
{
	struct dev_counters raw, driver;
	counters_raw(dev, &raw, &driver);
	for (uint16_t q = 0; q < DEV_MAX_QUEUES; q++) {
		memset(&dev->rxq[q].base, 0, sizeof(dev->rxq[q].base));
		memset(&dev->txq[q].base, 0, sizeof(dev->txq[q].base));
		counters_add(&dev->rxq[q].base, &dev->rxq[q].c);
		counters_add(&dev->txq[q].base, &dev->txq[q].c);
	}
	dev->base = driver;
}

/* ---- drivers ---- */

static const struct dev_driver *drivers[DEV_MAX_DRIVERS];
static uint32_t n_drivers, n_dropped;

void dev_driver_register(const struct dev_driver *d)
{
	/* A constructor cannot report: a driver past the table is counted, and
	 * the plugin loader refuses the plugin that brought it (a built-in one
	 * is a build bug the unit test of the registry would show). */
	if (n_drivers == DEV_MAX_DRIVERS) {
		n_dropped++;
		return;
	}
	drivers[n_drivers++] = d;
	conf_driver_register(d->conf);
}

uint32_t dev_driver_dropped(void)
{
	return n_dropped;
}

bool dev_driver_instance(uint32_t i, const char **name, const void **context)
{
	if (i >= n_drivers)
		return false;
	*name = drivers[i]->name;
	*context = drivers[i];
	return true;
}

const struct dev_driver *dev_driver_find(const char *name)
{
	for (uint32_t i = 0; i < n_drivers; i++)
		if (strcmp(drivers[i]->name, name) == 0)
			return drivers[i];
	return NULL;
}

struct device *dev_create_conf(const char *name, const struct conf_driver *cd, const void *conf, char *err,
			       size_t errlen)
{
	const struct dev_driver *drv = dev_driver_find(cd->name);
	if (!drv) {
		snprintf(err, errlen, "interface %s: driver %s has no constructor", name, cd->name);
		return NULL;
	}
	if (dev_by_name(name)) {
		snprintf(err, errlen, "interface %s already exists", name);
		return NULL;
	}
	struct device *dev = drv->create(conf, err, errlen);
	if (!dev)
		return NULL;
	dev->driver = drv;
	int rc = dev_register(dev, name);
	if (rc < 0) {
		snprintf(err, errlen, "interface %s: %s", name,
			 rc == -ENOSPC   ? "the interface table is full"
			 : rc == -EINVAL ? "bad name (1 to 31 characters) or queue counts"
			 : rc == -EMLINK ? "a node sending to the tx nodes has no room for another arc"
					 : strerror(-rc));
		dev->ops->destroy(dev);
		return NULL;
	}
	return dev;
}

struct device *dev_create(const char *name, const char *driver, const char *const *words, uint32_t n_words,
			  char *err, size_t errlen)
{
	const struct dev_driver *drv = dev_driver_find(driver);
	if (!drv) {
		char names[128];
		conf_driver_names(names, sizeof(names));
		snprintf(err, errlen, "unknown driver '%s': known drivers: %s", driver, names);
		return NULL;
	}
	const struct conf_driver *cd = drv->conf;
	alignas(16) uint8_t conf[CONF_DRIVER_CONF_SIZE];
	char msg[CONF_MSG_SIZE];
	memset(conf, 0, sizeof(conf));
	if (conf_defaults(cd->keys, conf, msg, sizeof(msg))) {
		snprintf(err, errlen, "driver %s: %s", driver, msg);
		return NULL;
	}
	struct conf_check chk = { .keys = cd->keys };
	for (uint32_t i = 0; i < n_words; i++) {
		const struct conf_key *k = conf_key_find(cd->keys, words[i]);
		if (!k) {
			snprintf(err, errlen, "driver %s has no key '%s'", driver, words[i]);
			return NULL;
		}
		const char *value = NULL;
		if (k->type != CONF_FLAG) {
			if (i + 1 == n_words) {
				snprintf(err, errlen, "missing value for '%s'", words[i]);
				return NULL;
			}
			value = words[++i];
		}
		if (conf_value_parse(k, value, conf, msg, sizeof(msg))) {
			snprintf(err, errlen, "%s: %s", k->name, msg);
			return NULL;
		}
		chk.set |= 1ull << (k - cd->keys);
	}
	if (cd->check && cd->check(conf, &chk) < 0) {
		snprintf(err, errlen, "%s%s%s", chk.key ? chk.key : "", chk.key ? ": " : "", chk.msg);
		return NULL;
	}
	return dev_create_conf(name, cd, conf, err, errlen);
}
