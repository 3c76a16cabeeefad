/* A small daemon for the CLI integration tests: the engine, the CLI server
 * and the engine's commands, running a graph of three test nodes:
 *
 *   cli-test-src (input) -> cli-test-pass -> cli-test-sink
 *                                        \-> error-drop (every 10th packet)
 *
 * cli-test-src makes a burst of 4 packets each millisecond, so counters rise
 * steadily while the thread mostly sleeps. Every node traces the packet's
 * sequence number.
 *
 * usage: cli_test_server SOCKET [WORKERS]   (runs until SIGTERM or SIGINT)
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "graph/graph.h"

#define BURST 4
#define PERIOD_NS 1000000ull

struct seq_trace {
	uint32_t seq;
};

static uint32_t *seq_of(uint32_t bi)
{
	return (uint32_t *)buffer_get(bi)->opaque;
}

static void trace_seq(struct node_runtime *rt, uint32_t bi)
{
	struct buffer *b = buffer_get(bi);
	if (unlikely(b->flags & BUFFER_F_TRACED)) {
		struct seq_trace *t = (void *)node_trace_detail(rt, b);
		if (t)
			t->seq = *seq_of(bi);
	}
}

static int format_seq(char *buf, size_t len, const uint8_t *detail)
{
	const struct seq_trace *t = (const void *)detail;
	return snprintf(buf, len, "seq %u", t->seq);
}

struct src_state {
	uint64_t next_ns;
	uint32_t seq;
};

static uint32_t src_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	struct src_state *st = rt->data;
	uint64_t now = time_now_ns();
	if (now < st->next_ns)
		return 0;
	st->next_ns = now + PERIOD_NS;
	uint32_t bi[BURST];
	uint32_t n = buffer_alloc(bi, BURST, -1);
	for (uint32_t i = 0; i < n; i++) {
		*seq_of(bi[i]) = st->seq++;
		buffer_get(bi[i])->current_length = 64;
	}
	node_trace_input(rt, bi, n);
	for (uint32_t i = 0; i < n; i++)
		trace_seq(rt, bi[i]);
	node_enqueue(rt, 0, bi, n);
	return n;
}

static const struct node_reg src_node = {
	.name = "cli-test-src",
	.type = NODE_TYPE_INPUT,
	.fn = src_fn,
	.n_next = 1,
	.next_nodes = { "cli-test-pass" },
	.format_trace = format_seq,
	.runtime_data_size = sizeof(struct src_state),
};
NODE_REGISTER(src_node)

static const char *const pass_errors[] = { "every tenth packet" };

static uint32_t pass_fn(struct node_runtime *rt, struct frame *f)
{
	uint16_t nexts[FRAME_SIZE];
	for (uint32_t i = 0; i < f->n_vectors; i++) {
		uint32_t bi = f->buffers[i];
		trace_seq(rt, bi);
		nexts[i] = *seq_of(bi) % 10 == 9;
		if (nexts[i])
			buffer_get(bi)->error = node_error(rt, 0);
	}
	node_enqueue_to_nexts(rt, f->buffers, nexts, f->n_vectors);
	return f->n_vectors;
}

static const struct node_reg pass_node = {
	.name = "cli-test-pass",
	.type = NODE_TYPE_INTERNAL,
	.fn = pass_fn,
	.n_next = 2,
	.next_nodes = { "cli-test-sink", "error-drop" },
	.n_errors = 1,
	.error_strings = pass_errors,
	.format_trace = format_seq,
};
NODE_REGISTER(pass_node)

static uint32_t sink_fn(struct node_runtime *rt, struct frame *f)
{
	for (uint32_t i = 0; i < f->n_vectors; i++)
		trace_seq(rt, f->buffers[i]);
	buffer_free(f->buffers, f->n_vectors);
	return f->n_vectors;
}

static const struct node_reg sink_node = {
	.name = "cli-test-sink",
	.type = NODE_TYPE_INTERNAL,
	.fn = sink_fn,
	.format_trace = format_seq,
};
NODE_REGISTER(sink_node)

static atomic_bool stop;

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop, true);
}

static int die(const char *what, const char *err)
{
	fprintf(stderr, "cli_test_server: %s: %s\n", what, err);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return die("usage", "cli_test_server SOCKET [WORKERS]");
	uint32_t n_workers = argc > 2 ? (uint32_t)atoi(argv[2]) : 0;
	char err[256];
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 4096;
	bc.page_size = 4096;
	if (buffer_main_init(&bc, err, sizeof(err)))
		return die("buffers", err);
	struct graph *g = graph_create(NULL, err, sizeof(err));
	if (!g || graph_add_registered(g, err, sizeof(err)) || graph_build(g, err, sizeof(err)))
		return die("graph", err);
	int cpus[GRAPH_MAX_THREADS];
	for (uint32_t i = 0; i < n_workers && i < GRAPH_MAX_THREADS; i++)
		cpus[i] = -1;
	if (n_workers && graph_workers_start(g, cpus, n_workers, err, sizeof(err)))
		return die("workers", err);
	struct cli_server_config cc;
	cli_server_config_default(&cc);
	snprintf(cc.listen, sizeof(cc.listen), "%s", argv[1]);
	cc.graph = g;
	if (cli_server_start(&cc, err, sizeof(err)))
		return die("cli", err);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	graph_main_loop(g, &stop);
	cli_server_stop();
	graph_destroy(g);
	buffer_main_free();
	return 0;
}
