/* The fixture the node, driver and control-plane Check tests share: a
 * buffer pool on 4 KB pages (no hugepages needed on a test box), the graph
 * of every registered node built and the interface layer attached to it,
 * testdrv interfaces, and the teardown that gives it all back and checks
 * that no buffer leaked. A test adds what is its own (addresses, pairs,
 * services) around these.
 */
#ifndef SLUICE_TESTS_GRAPH_FIXTURE_H
#define SLUICE_TESTS_GRAPH_FIXTURE_H

#include <check.h>
#include <stdint.h>

#include "graph/buffer.h"
#include "drivers/device.h"
#include "graph/graph.h"

static char fixture_err[256];

/* The buffer pool: n buffers on 4 KB pages. */
static inline void fixture_buffers_up(uint32_t n)
{
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = n;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, fixture_err, sizeof(fixture_err)) == 0, "%s", fixture_err);
}

/* Every registered node in one graph, built, interfaces attached. */
static inline struct graph *fixture_graph_up(void)
{
	struct graph *g = graph_create(NULL, fixture_err, sizeof(fixture_err));
	ck_assert_msg(g, "%s", fixture_err);
	ck_assert_msg(graph_add_registered(g, fixture_err, sizeof(fixture_err)) == 0, "%s", fixture_err);
	ck_assert_msg(graph_build(g, fixture_err, sizeof(fixture_err)) == 0, "%s", fixture_err);
	ck_assert_msg(dev_graph_attach(g, fixture_err, sizeof(fixture_err)) == 0, "%s", fixture_err);
	return g;
}

/* The graph detached and destroyed, every interface deleted. */
static inline void fixture_graph_down(struct graph *g)
{
	dev_graph_detach(g);
	graph_destroy(g);
	dev_delete_all();
}

/* Every buffer back in the pool, the pool freed. */
static inline void fixture_buffers_down(void)
{
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_thread_unregister();
	buffer_main_free();
}

/* A testdrv interface (link it with testdrv_lib), admin up. */
static inline struct device *fixture_testdrv(const char *name)
{
	struct device *d = dev_create(name, "testdrv", NULL, 0, fixture_err, sizeof(fixture_err));
	ck_assert_msg(d, "%s", fixture_err);
	ck_assert_int_eq(dev_set_admin_up(d, true), 0);
	return d;
}

#endif
