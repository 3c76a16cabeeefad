/* Test-only nodes and commands linked into sluice-test, a build of the
 * daemon (app/main.c) for the fault and overload tests; sluice itself has
 * none of this.
 *
 *   test-stall  input node polled on every thread: sleeps once, on the
 *               thread `test stall` names, for as long as it says;
 *   test-slow   put between handoff-input and ethernet-input by the first
 *               `test slow`: sleeps ns-per-packet x the frame's packets,
 *               then passes the frame on (a node too slow for its load).
 *
 * sluice> test stall 1 2000
 * thread 1 stalls for 2000 ms
 * sluice> test slow 20000
 * test-slow: 20000 ns per packet after handoff-input
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "graph/graph.h"

static _Atomic uint32_t stall_ms[GRAPH_MAX_THREADS];
static _Atomic uint64_t slow_ns_per_packet;

static void sleep_ns(uint64_t ns)
{
	struct timespec d = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	nanosleep(&d, NULL);
}

static uint32_t stall_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	uint32_t ms = atomic_exchange(&stall_ms[rt->thread_index], 0);
	if (ms)
		sleep_ns((uint64_t)ms * 1000000ull);
	return 0;
}

static const struct node_reg test_stall_node = {
	.name = "test-stall",
	.type = NODE_TYPE_INPUT,
	.fn = stall_fn,
};
NODE_REGISTER(test_stall_node)

static uint32_t slow_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	sleep_ns(atomic_load(&slow_ns_per_packet) * n);
	node_forward_frame(rt, 0, f);
	return n;
}

static const struct node_reg test_slow_node = {
	.name = "test-slow",
	.fn = slow_fn,
	.n_next = 1,
	.next_nodes = { "ethernet-input" },
};
NODE_REGISTER(test_slow_node)

static int test_stall(struct cli_session *s, int argc, char **argv)
{
	uint32_t thread = 0, ms = 0;
	const struct cli_arg args[] = { { CLI_ARG_U32, "THREAD", &thread, 0, GRAPH_MAX_THREADS - 1 },
					{ CLI_ARG_U32, "MS", &ms, 1, 600000 } };
	struct graph *g = cli_graph(s);
	int rc = g ? cli_args_parse(s, argc, argv, args, ARRAY_LEN(args)) : cli_fail(s, -ENODEV, "no graph");
	if (rc)
		return rc;
	if (thread >= graph_n_threads(g))
		return cli_fail(s, -EINVAL, "no thread %u", thread);
	atomic_store(&stall_ms[thread], ms);
	cli_printf(s, "thread %u stalls for %u ms", thread, ms);
	return 0;
}

/* Re-point handoff-input's arcs to ethernet-input at test-slow, once. */
static int slow_insert(struct cli_session *s, struct graph *g)
{
	int hin = graph_node_index(g, "handoff-input");
	int eth = graph_node_index(g, "ethernet-input");
	if (hin < 0 || eth < 0)
		return cli_fail(s, -ENOENT, "the graph has no handoff-input -> ethernet-input arc");
	char err[256];
	for (uint16_t k = 0; k < graph_node_n_next(g, (uint32_t)hin); k++) {
		if (graph_node_next(g, (uint32_t)hin, k) != eth)
			continue;
		int rc = graph_set_next(g, (uint32_t)hin, k, "test-slow", err, sizeof(err));
		if (rc)
			return cli_fail(s, rc, "%s", err);
	}
	return 0;
}

static int test_slow(struct cli_session *s, int argc, char **argv)
{
	static bool inserted;
	uint32_t ns = 0;
	const struct cli_arg args[] = { { CLI_ARG_U32, "NS-PER-PACKET", &ns, 0, 1000000 } };
	struct graph *g = cli_graph(s);
	int rc = g ? cli_args_parse(s, argc, argv, args, ARRAY_LEN(args)) : cli_fail(s, -ENODEV, "no graph");
	if (rc)
		return rc;
	if (!inserted && (rc = slow_insert(s, g)) != 0)
		return rc;
	inserted = true;
	atomic_store(&slow_ns_per_packet, ns);
	cli_printf(s, "test-slow: %u ns per packet after handoff-input", ns);
	return 0;
}

CLI_COMMAND(test_stall_cmd, "test stall", "test stall THREAD MS", "Stall one datapath thread (test build only)",
	    test_stall)
CLI_COMMAND(test_slow_cmd, "test slow", "test slow NS-PER-PACKET", "Slow the workers' graph down (test build only)",
	    test_slow)
