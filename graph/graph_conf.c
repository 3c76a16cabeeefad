/* The engine's own startup.conf sections: the key tables of `cpu`,
 * `buffers` and `trace`, their cross-key checks, and the translation into
 * the engine's configs. The value codec and the driver registry they use
 * are in conf.c.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/elog.h"
#include "graph/buffer.h"
#include "graph/graph_conf.h"

/* ---- cpu ---- */

/* "-" is what no idle-mode line leaves: the key is an alias now. */
static const char *const idle_modes[] = { "-", "poll", "sleep", NULL };
static const char *const rx_modes[] = { "polling", "interrupt", "adaptive", NULL };

static const struct conf_key cpu_keys[] = {
	{ .name = "main-core", .type = CONF_UINT, .def = "0", .max = CONF_MAX_CPUS * 64 - 1,
	  CONF_FIELD(struct graph_cpu_config, main_core), .doc = "core the main thread is pinned to" },
	{ .name = "corelist-workers", .type = CONF_CPULIST,
	  CONF_FIELD(struct graph_cpu_config, corelist_workers), .doc = "one worker per listed core" },
	{ .name = "workers", .type = CONF_UINT, .def = "0", .max = GRAPH_MAX_THREADS - 1,
	  CONF_FIELD(struct graph_cpu_config, workers), .doc = "worker count, placed automatically" },
	{ .name = "skip-cores", .type = CONF_UINT, .def = "0", .max = CONF_MAX_CPUS * 64 - 1,
	  CONF_FIELD(struct graph_cpu_config, skip_cores), .doc = "low cores automatic placement leaves alone" },
	{ .name = "rx-mode", .type = CONF_ENUM, .def = "adaptive", .choices = rx_modes,
	  CONF_FIELD(struct graph_cpu_config, rx_mode),
	  .doc = "every rx queue's mode unless set: polling (spin), interrupt (block until a frame), adaptive" },
	{ .name = "idle-mode", .type = CONF_ENUM, .choices = idle_modes, CONF_FIELD(struct graph_cpu_config, idle_mode),
	  .doc = "replaced by rx-mode: poll is rx-mode polling, sleep rx-mode adaptive (warned)" },
	{ .name = "idle-max", .type = CONF_DURATION, .def = "1ms", .min = 1000, .max = 1000000000,
	  CONF_FIELD(struct graph_cpu_config, idle_max_ns),
	  .doc = "longest back-off sleep of a thread with a source that cannot wake it" },
	{ .name = "stall-warn", .type = CONF_DURATION, .def = "1s", .max = 3600000000000ull,
	  CONF_FIELD(struct graph_cpu_config, stall_warn_ns),
	  .doc = "log a thread that ends no loop for this long (show threads: stalled); 0s: off" },
	{ 0 },
};

static uint32_t n_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	return n > 0 ? (uint32_t)n : 1;
}

static int no_such_core(struct conf_check *chk, const char *key, uint32_t cpu)
{
	chk->key = key;
	snprintf(chk->msg, sizeof(chk->msg), "core %u does not exist (this machine has cores 0-%u)", cpu,
		 n_cpus() - 1);
	return -EINVAL;
}

static int cpu_check_workers(const struct graph_cpu_config *c, struct conf_check *chk)
{
	int cpus[GRAPH_MAX_THREADS];
	uint32_t n = graph_cpu_config_workers(c, cpus, ARRAY_LEN(cpus));
	if (n < c->workers) {
		chk->key = "workers";
		snprintf(chk->msg, sizeof(chk->msg),
			 "not enough cores for %u workers from skip-cores %u up besides main-core %u "
			 "(this machine has cores 0-%u)", c->workers, c->skip_cores, c->main_core, n_cpus() - 1);
		return -EINVAL;
	}
	return 0;
}

/* The old idle-mode: an alias for rx-mode, with a warning naming it. */
static int idle_mode_alias(struct graph_cpu_config *c, struct conf_check *chk)
{
	if (!c->idle_mode)
		return 0;
	if (conf_check_was_set(chk, "rx-mode")) {
		chk->key = "idle-mode";
		snprintf(chk->msg, sizeof(chk->msg), "idle-mode is replaced by rx-mode: give rx-mode only");
		return -EINVAL;
	}
	bool poll = c->idle_mode == 1;
	c->rx_mode = poll ? GRAPH_CONF_RX_POLLING : GRAPH_CONF_RX_ADAPTIVE;
	c->idle_mode = 0; /* taken: the effective configuration says rx-mode only, and parses back */
	chk->warn_key = "idle-mode";
	snprintf(chk->warning, sizeof(chk->warning), "idle-mode is replaced by rx-mode: taken as rx-mode %s",
		 poll ? "polling" : "adaptive");
	return 0;
}

static int cpu_check(void *obj, struct conf_check *chk)
{
	struct graph_cpu_config *c = obj;
	if (idle_mode_alias(c, chk))
		return -EINVAL;
	const struct conf_cpulist *l = &c->corelist_workers;
	if (c->main_core >= n_cpus())
		return no_such_core(chk, "main-core", c->main_core);
	/* Both printed by --check (one of them empty) is fine; both in use is not. */
	if (c->workers && l->n) {
		chk->key = "workers";
		snprintf(chk->msg, sizeof(chk->msg), "give either workers or corelist-workers, not both");
		return -EINVAL;
	}
	if (l->n > GRAPH_MAX_THREADS - 1) {
		chk->key = "corelist-workers";
		snprintf(chk->msg, sizeof(chk->msg), "%u workers: at most %d", l->n, GRAPH_MAX_THREADS - 1);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < l->n; i++)
		if (l->cpu[i] >= n_cpus())
			return no_such_core(chk, "corelist-workers", l->cpu[i]);
	if (conf_cpulist_has(l, c->main_core)) {
		chk->warn_key = "corelist-workers";
		snprintf(chk->warning, sizeof(chk->warning),
			 "worker core %u is also main-core: the main thread and a worker share it", c->main_core);
	}
	if (c->stall_warn_ns && c->stall_warn_ns <= c->idle_max_ns) {
		chk->key = "stall-warn";
		snprintf(chk->msg, sizeof(chk->msg), "must exceed idle-max (an idle thread sleeps that long between loops)");
		return -EINVAL;
	}
	return cpu_check_workers(c, chk);
}

uint32_t graph_cpu_config_workers(const struct graph_cpu_config *c, int *cpus, uint32_t max)
{
	uint32_t n = 0;
	if (c->corelist_workers.n) {
		for (; n < c->corelist_workers.n && n < max; n++)
			cpus[n] = c->corelist_workers.cpu[n];
		return n;
	}
	for (uint32_t cpu = c->skip_cores; cpu < n_cpus() && n < c->workers && n < max; cpu++)
		if (cpu != c->main_core)
			cpus[n++] = (int)cpu;
	return n;
}

const struct conf_section graph_cpu_conf_section = {
	.name = "cpu",
	.doc = "threads: the main core and the workers",
	.size = sizeof(struct graph_cpu_config),
	.keys = cpu_keys,
	.check = cpu_check,
};

/* ---- buffers ---- */

static const struct conf_key buffers_keys[] = {
	{ .name = "buffers-per-numa", .type = CONF_UINT, .def = "16384", .min = 1024, .max = 1u << 24,
	  CONF_FIELD(struct buffer_config, buffers_per_numa), .doc = "buffers in each NUMA node's pool" },
	{ .name = "data-size", .type = CONF_SIZE, .def = "2048", .min = 256, .max = 65535,
	  CONF_FIELD(struct buffer_config, data_size), .doc = "packet bytes per buffer" },
	{ .name = "page-size", .type = CONF_SIZE, .def = "0",
	  CONF_FIELD(struct buffer_config, page_size), .doc = "0: 2M hugepages when available, else 4K" },
	{ 0 },
};

static int buffers_check(void *obj, struct conf_check *chk)
{
	const struct buffer_config *b = obj;
	if (b->page_size != 0 && b->page_size != 4096 && b->page_size != 2u << 20 && b->page_size != 1u << 30) {
		chk->key = "page-size";
		snprintf(chk->msg, sizeof(chk->msg), "expected 0 (automatic), 4K, 2M or 1G");
		return -EINVAL;
	}
	return 0;
}

const struct conf_section graph_buffers_conf_section = {
	.name = "buffers",
	.doc = "packet buffer pools, one per NUMA node",
	.size = sizeof(struct buffer_config),
	.keys = buffers_keys,
	.check = buffers_check,
};

/* ---- trace ---- */

static const struct conf_key trace_keys[] = {
	{ .name = "max-packets", .type = CONF_UINT, .def = "1024", .min = 1, .max = 1u << 20,
	  CONF_FIELD(struct graph_trace_config, max_packets), .doc = "packets the trace buffer holds" },
	{ .name = "start-node", .type = CONF_STRING,
	  CONF_FIELD(struct graph_trace_config, start_node), .doc = "input node traced from start-up" },
	{ .name = "start-count", .type = CONF_UINT, .def = "0", .max = 1u << 20,
	  CONF_FIELD(struct graph_trace_config, start_count), .doc = "packets traced from start-up" },
	{ 0 },
};

static int trace_check(void *obj, struct conf_check *chk)
{
	const struct graph_trace_config *t = obj;
	if ((t->start_count > 0) != (t->start_node[0] != 0)) {
		chk->key = t->start_count ? "start-count" : "start-node";
		snprintf(chk->msg, sizeof(chk->msg), "start-node and start-count go together");
		return -EINVAL;
	}
	if (t->start_count > t->max_packets) {
		chk->key = "start-count";
		snprintf(chk->msg, sizeof(chk->msg), "start-count %u exceeds max-packets %u", t->start_count,
			 t->max_packets);
		return -EINVAL;
	}
	return 0;
}

const struct conf_section graph_trace_conf_section = {
	.name = "trace",
	.doc = "packet trace",
	.size = sizeof(struct graph_trace_config),
	.keys = trace_keys,
	.check = trace_check,
};

/* ---- event-logger ---- */

static const struct conf_key elog_keys[] = {
	{ .name = "size", .type = CONF_UINT, .def = "4096", .min = ELOG_SIZE_MIN, .max = ELOG_SIZE_MAX,
	  CONF_FIELD(struct graph_elog_config, size), .doc = "events each thread's ring holds, a power of two" },
	{ 0 },
};

static int elog_check(void *obj, struct conf_check *chk)
{
	const struct graph_elog_config *e = obj;
	return conf_check_pow2(chk, "size", e->size);
}

const struct conf_section graph_elog_conf_section = {
	.name = "event-logger",
	.doc = "the event log (show event-logger): 32 bytes an event, per thread",
	.size = sizeof(struct graph_elog_config),
	.keys = elog_keys,
	.check = elog_check,
};

void graph_config_from_conf(struct graph_config *gc, const struct graph_cpu_config *cpu,
			    const struct graph_trace_config *trace)
{
	graph_config_default(gc);
	/* rx-mode polling (or the old idle-mode poll) spins every thread, as
	 * idle-mode poll did; otherwise threads block or back off. */
	gc->idle_mode = cpu->rx_mode == GRAPH_CONF_RX_POLLING ? GRAPH_IDLE_POLL : GRAPH_IDLE_SLEEP;
	gc->idle_max_us = (uint32_t)(cpu->idle_max_ns / 1000);
	gc->trace_max = trace->max_packets;
}

/* A control thread (CLI, stats, /metrics, sluice-tap) started by the pinned
 * main thread would inherit main-core and take its time from the datapath
 * there, where the box has a core to spare. */
int graph_cpu_config_control(const struct graph_cpu_config *c, void *out)
{
	cpu_set_t *set = out, all;
	CPU_ZERO(set);
	for (long i = 0, n = sysconf(_SC_NPROCESSORS_ONLN); i < n && i < CPU_SETSIZE; i++)
		CPU_SET((int)i, set);
	all = *set;
	int workers[GRAPH_MAX_THREADS];
	uint32_t n = graph_cpu_config_workers(c, workers, GRAPH_MAX_THREADS);
	if (c->main_core < CPU_SETSIZE)
		CPU_CLR((int)c->main_core, set);
	for (uint32_t i = 0; i < n; i++)
		if (workers[i] >= 0 && workers[i] < CPU_SETSIZE)
			CPU_CLR(workers[i], set);
	if (!CPU_COUNT(set))
		*set = all;
	return CPU_COUNT(set);
}
