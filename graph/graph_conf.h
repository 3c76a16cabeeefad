/* The startup.conf sections the engine owns: `cpu`, `buffers`, `trace`,
 * `event-logger`.
 *
 *   cpu     { main-core 0  corelist-workers 1-2  rx-mode adaptive  idle-max 1ms  stall-warn 1s }
 *   buffers { buffers-per-numa 16384  data-size 2048  page-size 2M }
 *   trace   { max-packets 1024  start-node pg-input  start-count 10 }
 *   event-logger { size 4096 }
 *
 * `buffers` fills struct buffer_config (graph/buffer.h) directly.
 */
#ifndef SLUICE_GRAPH_GRAPH_CONF_H
#define SLUICE_GRAPH_GRAPH_CONF_H

#include <stdint.h>

#include "base/conf.h"
#include "graph/graph.h"

struct graph_cpu_config {
	uint32_t main_core;
	struct conf_cpulist corelist_workers; /* explicit worker cores, in order */
	uint32_t workers;                     /* or: this many, placed automatically */
	uint32_t skip_cores;                  /* cores left alone by automatic placement */
	uint32_t rx_mode;                     /* GRAPH_CONF_RX_* : the default rx mode of every queue */
	uint32_t idle_mode;                   /* the old key: 0 not given, 1 poll, 2 sleep (an alias, warned) */
	uint64_t idle_max_ns;
	uint64_t stall_warn_ns;               /* watchdog threshold, 0: no watchdog */
};

/* cpu { rx-mode }: the values, in the order of their names (the device
 * layer's enum dev_rx_mode minus one; app/main.c maps them). */
enum { GRAPH_CONF_RX_POLLING = 0, GRAPH_CONF_RX_INTERRUPT, GRAPH_CONF_RX_ADAPTIVE };

struct graph_trace_config {
	uint32_t max_packets;            /* packets the trace buffer holds */
	char start_node[CONF_NAME_SIZE]; /* input node to trace from start-up, "" for none */
	uint32_t start_count;            /* packets to trace from it */
};

struct graph_elog_config {
	uint32_t size; /* events per thread (graph_config.elog_size) */
};

extern const struct conf_section graph_cpu_conf_section;
extern const struct conf_section graph_buffers_conf_section; /* struct buffer_config */
extern const struct conf_section graph_trace_conf_section;
extern const struct conf_section graph_elog_conf_section;

/* The cores workers run on: corelist-workers as written, or `workers N`
 * placed on the lowest cores from skip-cores up, main-core excluded. Writes
 * at most max entries and returns the worker count. */
uint32_t graph_cpu_config_workers(const struct graph_cpu_config *c, int *cpus, uint32_t max);

/* The online CPUs no datapath thread is pinned to (main-core and the
 * workers' cores left out), for the control threads: every online CPU when
 * the datapath takes them all. Writes *set (a cpu_set_t) and returns how many. */
int graph_cpu_config_control(const struct graph_cpu_config *c, void *set);

/* The graph_config these sections describe. */
void graph_config_from_conf(struct graph_config *gc, const struct graph_cpu_config *cpu,
			    const struct graph_trace_config *trace);

#endif
