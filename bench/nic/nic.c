/* nic: the native drivers' rx and tx on one core, against their device
 * models (tests/models), the way the daemon runs them:
 *
 *   model rx -> ixgbe-input (or i40e-input) -> ethernet-input -> l2-xconnect
 *     -> interface-output -> ixgbe-tx (i40e-tx) -> model tx
 *
 * Two ports of one driver, port 0 cross-connected to port 1, every
 * registered node in the graph. Each loop puts --burst 64-byte frames on
 * port 0's wire (the model writes them into the rx ring as the NIC would)
 * and runs graph_main_poll once, so the driver's rx burst finds exactly
 * --burst descriptors done and its tx burst sends that many.
 *
 * Instructions: the loops run inside nic_polls(); run it under
 * `valgrind --tool=callgrind --dump-before=nic_polls --dump-after=nic_polls`
 * (one profile of exactly that region, its call counts too) and read the
 * inclusive costs of graph_main_poll (the forwarding loop) and of the
 * driver's rx_burst and tx_burst, minus the model's register functions they
 * call, each call counted as vfio's accessor instead (bench/nic/run.sh
 * does): what is left is sluice's own work per packet, buffer allocation
 * and freeing included. The model's share (frames onto the wire, register
 * decoding, transmission two model ticks after the tail write) is reported
 * apart; the models tick once per loop, outside graph_main_poll. Port 1's rx
 * is polled every loop and comes back empty (counted: it is sluice's).
 *
 * Usage: sluice-bench-nic --driver ixgbe|i40e [--burst N] [--polls N]
 *                         [--warm N] [--size BYTES]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/device.h"
#include "drivers/pci/pci.h"
#include "graph/buffer.h"
#include "graph/graph.h"
#include "tests/models/i40e_model.h"
#include "tests/models/ixgbe_model.h"
#include "tests/models/nic_model.h"

struct opts {
	const char *driver;
	uint32_t burst, size;
	uint64_t polls, warm;
};

/* Port 0's wire, whichever model it is. */
static struct ixgbe_model *xm[2];
static struct i40e_model *im[2];
static uint64_t n_sent, n_model_errors;

static void on_tx(void *ctx, uint16_t queue, const uint8_t *frame, uint32_t len)
{
	(void)ctx, (void)queue, (void)frame, (void)len;
	n_sent++;
}

static void on_error(void *ctx, const char *msg)
{
	(void)ctx;
	if (!n_model_errors++)
		fprintf(stderr, "nic: device model: %s\n", msg);
}

static int wire_rx(const uint8_t *frame, uint32_t len)
{
	return xm[0] ? ixgbe_model_rx(xm[0], frame, len) : i40e_model_rx(im[0], frame, len);
}

/* A poll's worth of the models' time: what the drivers handed over goes
 * out (asynchronous transmit, tests/models/nic_model.h). */
static void models_tick(void)
{
	for (int i = 0; i < 2; i++) {
		if (xm[i])
			ixgbe_model_tick(xm[i]);
		if (im[i])
			i40e_model_tick(im[i]);
	}
}

/* n loops of one burst onto the wire, the models' tick, one poll. */
static uint64_t loops(struct graph *g, const uint8_t *frame, const struct opts *o, uint64_t n)
{
	uint64_t pkts = 0;
	for (uint64_t i = 0; i < n; i++) {
		for (uint32_t k = 0; k < o->burst; k++)
			wire_rx(frame, o->size);
		models_tick();
		pkts += graph_main_poll(g);
	}
	return pkts;
}

/* The region callgrind collects (the warm-up runs outside it). */
__attribute__((noinline)) static uint64_t nic_polls(struct graph *g, const uint8_t *frame, const struct opts *o)
{
	return loops(g, frame, o, o->polls);
}

static void usage(void)
{
	fprintf(stderr, "usage: sluice-bench-nic --driver ixgbe|i40e [--burst N] [--polls N] [--warm N] "
			"[--size BYTES]\n");
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .driver = "ixgbe", .burst = 32, .size = 60, .polls = 2000, .warm = 200 };
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *a = argv[i], *v = argv[i + 1];
		if (!strcmp(a, "--driver"))
			o->driver = v;
		else if (!strcmp(a, "--burst"))
			o->burst = (uint32_t)atoi(v);
		else if (!strcmp(a, "--polls"))
			o->polls = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--warm"))
			o->warm = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--size"))
			o->size = (uint32_t)atoi(v) - 4; /* on the wire without the FCS */
		else
			usage();
	}
	if (argc % 2 == 0 || (strcmp(o->driver, "ixgbe") && strcmp(o->driver, "i40e")) || !o->burst ||
	    o->burst > FRAME_SIZE || o->size < 60 || o->size > 1514)
		usage();
}

static int models_create(const char *driver)
{
	static const uint8_t mac[2][6] = { { 0x02, 0, 0, 0, 0, 0x30 }, { 0x02, 0, 0, 0, 0, 0x31 } };
	static const char *addr[2] = { "0000:03:00.0", "0000:03:00.1" };
	for (int i = 0; i < 2; i++) {
		if (!strcmp(driver, "ixgbe")) {
			if (!(xm[i] = ixgbe_model_create(addr[i], mac[i])))
				return -1;
			nic_model_on_error(ixgbe_model_nic(xm[i]), on_error, NULL);
			nic_model_on_tx(ixgbe_model_nic(xm[i]), on_tx, NULL);
			nic_model_set_tx_pace(ixgbe_model_nic(xm[i]), 2, 1u << 16); /* steady state: no backlog */
		} else {
			if (!(im[i] = i40e_model_create(addr[i], mac[i])))
				return -1;
			i40e_model_set_ena_delay(im[i], 0);
			nic_model_on_error(i40e_model_nic(im[i]), on_error, NULL);
			nic_model_on_tx(i40e_model_nic(im[i]), on_tx, NULL);
			nic_model_set_tx_pace(i40e_model_nic(im[i]), 2, 1u << 16);
		}
	}
	pci_io_provider_set(nic_model_open, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	char err[512];
	parse(argc, argv, &o);
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.page_size = 4096;
	bc.buffers_per_numa = 16384;
	if (buffer_main_init(&bc, err, sizeof(err))) {
		fprintf(stderr, "nic: %s\n", err);
		return 1;
	}
	struct graph_config cfg;
	graph_config_default(&cfg);
	cfg.idle_mode = GRAPH_IDLE_POLL;
	struct graph *g = graph_create(&cfg, err, sizeof(err));
	if (!g || graph_add_registered(g, err, sizeof(err)) || graph_build(g, err, sizeof(err)) ||
	    dev_graph_attach(g, err, sizeof(err))) {
		fprintf(stderr, "nic: graph: %s\n", err);
		return 1;
	}
	if (models_create(o.driver)) {
		fprintf(stderr, "nic: cannot create the device models\n");
		return 1;
	}
	struct device *d[2];
	for (int i = 0; i < 2; i++) {
		const char *words[] = { "dev", i ? "0000:03:00.1" : "0000:03:00.0" };
		char name[8];
		snprintf(name, sizeof(name), "port%d", i);
		if (!(d[i] = dev_create(name, o.driver, words, 2, err, sizeof(err)))) {
			fprintf(stderr, "nic: %s\n", err);
			return 1;
		}
	}
	if (dev_set_xconnect(d[0], d[1]) || dev_set_admin_up(d[0], true) || dev_set_admin_up(d[1], true)) {
		fprintf(stderr, "nic: cannot set up the cross-connect\n");
		return 1;
	}
	nic_model_advance_ns(1000000000ull); /* the links come up (the models' virtual time, nic_model.h) */
	uint8_t frame[1514];
	for (uint32_t i = 0; i < o.size; i++)
		frame[i] = (uint8_t)(i * 7 + 1);
	memcpy(frame, "\x02\x00\x00\x00\x00\x99", 6); /* unicast to a host beyond port 1 */
	frame[12] = 0x88, frame[13] = 0xb5;            /* local experimental ethertype */

	/* Warm caches, rings and frame pools outside the collected region. */
	loops(g, frame, &o, o.warm);
	uint64_t sent0 = n_sent;
	uint64_t pkts = nic_polls(g, frame, &o);
	uint64_t sent = n_sent - sent0;
	printf("nic: driver %s burst %u size %u polls %llu packets %llu sent %llu\n", o.driver, o.burst, o.size + 4,
	       (unsigned long long)o.polls, (unsigned long long)pkts, (unsigned long long)sent);
	int rc = 0;
	if (sent != o.polls * o.burst || n_model_errors) {
		fprintf(stderr, "nic: %llu of %llu frames reached port 1's wire, %llu model errors\n",
			(unsigned long long)sent, (unsigned long long)(o.polls * o.burst),
			(unsigned long long)n_model_errors);
		rc = 1;
	}
	dev_graph_detach(g);
	graph_destroy(g);
	dev_delete_all();
	pci_io_provider_set(NULL, NULL);
	for (int i = 0; i < 2; i++) {
		if (xm[i])
			ixgbe_model_destroy(xm[i]);
		if (im[i])
			i40e_model_destroy(im[i]);
	}
	buffer_main_free();
	return rc;
}
