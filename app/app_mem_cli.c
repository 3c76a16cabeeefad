/* `show memory` (VPP's name): what the process holds, by subsystem, from
 * the accounting each one keeps (buffer pools, FIB tables, timer wheels,
 * schedules and class queues, subscriber hierarchies, the dispatch
 * trace's rings, the stats segment, the event log, the log ring), beside the kernel's
 * view of the process (/proc/self/status) and of the hugepages
 * (/proc/meminfo). It lives in app/ because only app/ sees every folder.
 *
 * Runs under the CLI's command lock, as route changes and the stats
 * writer's reads do; nothing here takes the barrier: every figure is a
 * size the control plane set, not a datapath counter (the scheduler's
 * and the subscriber hierarchies' allocations change only under that
 * lock too). The per-subsystem
 * rows are what each subsystem mapped or reserved; the process's resident
 * size is what the kernel has faulted in, so the two need not agree (a
 * FIB table reserved on THP pages is resident only where touched). Packets
 * a queue holds are buffers: counted once, in their pool's row.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app_cli.h"
#include "base/elog.h"
#include "base/log_ring.h"
#include "base/util.h"
#include "cli/cli.h"
#include "graph/buffer.h"
#include "graph/graph.h"
#include "nodes/ip4/ip4_fib.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip6/ip6_fib.h"
#include "nodes/ip6/ip6_route.h"
#include "drivers/device.h"
#include "nodes/sched/sched_io.h"
#include "sched/egress.h"
#include "sched/evq.h"
#include "sched/hqos.h"
#include "sched/timer.h"

#define MEM_MAX_ROWS 160

struct mem_row {
	const char *subsystem;
	char what[64];
	uint64_t bytes;
	const char *pages; /* "" when the subsystem does not say */
};

struct mem_rows {
	struct mem_row r[MEM_MAX_ROWS];
	uint32_t n;
};

static void row(struct mem_rows *m, const char *subsystem, uint64_t bytes, const char *pages, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void row(struct mem_rows *m, const char *subsystem, uint64_t bytes, const char *pages, const char *fmt, ...)
{
	if (m->n == MEM_MAX_ROWS)
		return;
	struct mem_row *r = &m->r[m->n++];
	r->subsystem = subsystem;
	r->bytes = bytes;
	r->pages = pages ? pages : "";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->what, sizeof(r->what), fmt, ap);
	va_end(ap);
}

static void buffers_rows(struct mem_rows *m)
{
	for (uint32_t p = 0; p < buffer_main.n_pools; p++) {
		struct buffer_pool_stats st;
		if (buffer_pool_stats(p, &st))
			continue;
		row(m, "buffers", (uint64_t)st.n_total * buffer_main.stride, st.hugepages ? "2 MB hugetlb" : "4 KB",
		    "pool %u (NUMA %u): %u x %u bytes", p, st.numa_node, st.n_total, buffer_main.stride);
	}
}

static void fib_rows(struct mem_rows *m)
{
	if (ip4_fib_main) {
		struct ip4_fib_stats st;
		ip4_fib_stats(ip4_fib_main, &st);
		row(m, "fib", st.mem_bytes, ip4_fib_pages_name(st.tbl24_pages), "ip4: %u route(s), %u tbl8 group(s) used",
		    st.n_routes, st.n_tbl8_used);
	}
	if (ip6_fib_main) {
		struct ip6_fib_stats st;
		ip6_fib_stats(ip6_fib_main, &st);
		row(m, "fib", st.mem_bytes, "", "ip6: %u route(s)", st.n_routes);
	}
}

static void timer_rows(struct mem_rows *m, struct graph *g)
{
	for (uint32_t i = 0; g && i < graph_n_threads(g); i++) {
		const struct timer_service *ts = timer_service_of(graph_thread_get(g, i));
		if (!ts)
			continue;
		struct timer_stats st;
		timer_stats(ts, &st);
		row(m, "timers", st.memory_bytes, "", "thread %u: wheel, %u levels", i, st.levels);
	}
}

/* Scheduling state: each interface's schedule (class queues, shaper,
 * impairers) and subscriber hierarchy, the class queues in front of the
 * distributor. The packets they hold are buffers, counted in the pools. */
static void sched_rows(struct mem_rows *m)
{
	for (uint32_t i = 0; i < DEV_MAX; i++) {
		const struct device *d = dev_by_index(i);
		const struct sched_io_if *sif = &sched_io_ifs[i];
		if (!d || !sif->e)
			continue;
		row(m, "sched", sched_egress_mem_bytes(sif->e), "", "%s: schedule (class queues, shaper, impairers)",
		    d->name);
		if (sif->hq) {
			uint64_t gen;
			row(m, "hqos", hqos_mem_bytes(sif->hq), "", "%s: %u subscriber(s)", d->name,
			    hqos_sub_count(sif->hq, &gen));
		}
	}
	if (sched_front.evq)
		row(m, "sched", evq_mem_bytes(sched_front.evq), "", "class queues before the distributor, %u deep",
		    sched_front.depth);
}

/* The dispatch trace's per-thread rings, while it holds them. */
static void dtrace_rows(struct mem_rows *m, struct graph *g)
{
	if (!g)
		return;
	struct graph_dtrace_status st;
	graph_dtrace_status(g, &st);
	if (st.ring_bytes)
		row(m, "dtrace", st.ring_bytes, "", "dispatch trace rings (%s)", st.on ? "on" : "stopped");
}

static void log_rows(struct mem_rows *m, struct graph *g)
{
	const struct sluice_config *cfg = app_cli_config();
	if (cfg && cfg->statseg.size)
		row(m, "statseg", cfg->statseg.size, "4 KB (memfd)", "the stats segment");
	uint32_t tracks = (g ? graph_n_threads(g) : 0) + 1;
	row(m, "elog", (uint64_t)elog_size() * sizeof(struct elog_event) * tracks, "",
	    "event log: %u track(s) of %u events", tracks, elog_size());
	struct log_ring *r = base_log_ring();
	if (r)
		row(m, "log", (uint64_t)r->size * sizeof(struct log_ring_entry), "", "log ring: %u lines", r->size);
}

/* /proc/self/status and /proc/meminfo values in kB, by their keys. */
struct proc_mem {
	uint64_t rss, hwm, vsize, anon, file, shmem, hugetlb, locked;
	uint64_t huge_total, huge_free, huge_size;
};

static void proc_scan(const char *path, const char *const *keys, uint64_t *const *dst, size_t n)
{
	FILE *f = fopen(path, "r");
	char line[256];
	while (f && fgets(line, sizeof(line), f))
		for (size_t i = 0; i < n; i++) {
			size_t k = strlen(keys[i]);
			if (!strncmp(line, keys[i], k) && line[k] == ':')
				*dst[i] = strtoull(line + k + 1, NULL, 10);
		}
	if (f)
		fclose(f);
}

static void proc_read(struct proc_mem *p)
{
	memset(p, 0, sizeof(*p));
	static const char *const status_keys[] = { "VmRSS", "VmHWM", "VmSize", "RssAnon", "RssFile", "RssShmem",
						   "HugetlbPages", "VmLck" };
	uint64_t *const status_dst[] = { &p->rss, &p->hwm, &p->vsize, &p->anon, &p->file, &p->shmem, &p->hugetlb,
					 &p->locked };
	proc_scan("/proc/self/status", status_keys, status_dst, ARRAY_LEN(status_keys));
	static const char *const meminfo_keys[] = { "HugePages_Total", "HugePages_Free", "Hugepagesize" };
	uint64_t *const meminfo_dst[] = { &p->huge_total, &p->huge_free, &p->huge_size };
	proc_scan("/proc/meminfo", meminfo_keys, meminfo_dst, ARRAY_LEN(meminfo_keys));
}

static cJSON *memory_json(const struct mem_rows *m, const struct proc_mem *p, uint64_t total)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *o = cJSON_AddObjectToObject(root, "memory");
	cJSON *pr = cJSON_AddObjectToObject(o, "process");
	cJSON_AddNumberToObject(pr, "rss_bytes", (double)p->rss * 1024);
	cJSON_AddNumberToObject(pr, "rss_peak_bytes", (double)p->hwm * 1024);
	cJSON_AddNumberToObject(pr, "virtual_bytes", (double)p->vsize * 1024);
	cJSON_AddNumberToObject(pr, "rss_anon_bytes", (double)p->anon * 1024);
	cJSON_AddNumberToObject(pr, "rss_file_bytes", (double)p->file * 1024);
	cJSON_AddNumberToObject(pr, "rss_shmem_bytes", (double)p->shmem * 1024);
	cJSON_AddNumberToObject(pr, "hugetlb_bytes", (double)p->hugetlb * 1024);
	cJSON_AddNumberToObject(pr, "locked_bytes", (double)p->locked * 1024);
	cJSON *h = cJSON_AddObjectToObject(o, "hugepages");
	cJSON_AddNumberToObject(h, "page_size_bytes", (double)p->huge_size * 1024);
	cJSON_AddNumberToObject(h, "total", (double)p->huge_total);
	cJSON_AddNumberToObject(h, "free", (double)p->huge_free);
	cJSON *subs = cJSON_AddArrayToObject(o, "subsystems");
	for (uint32_t i = 0; i < m->n; i++) {
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "subsystem", m->r[i].subsystem);
		cJSON_AddStringToObject(r, "what", m->r[i].what);
		cJSON_AddNumberToObject(r, "bytes", (double)m->r[i].bytes);
		cJSON_AddStringToObject(r, "pages", m->r[i].pages);
		cJSON_AddItemToArray(subs, r);
	}
	cJSON_AddNumberToObject(o, "accounted_bytes", (double)total);
	return root;
}

/*
 * sluice> show memory
 * Process: resident 151.2 MB (peak 153.0 MB), virtual 1.4 GB, anon 80.1 MB, file 12.0 MB, shmem 33.0 MB, hugetlb 36.0 MB
 * Hugepages (2048 kB): 64 total, 46 free
 * Subsystem  What                                   Bytes  Pages
 * buffers    pool 0 (NUMA 0): 16384 x 2304 bytes  37748736  2 MB hugetlb
 * fib        ip4: 3 route(s), 0 tbl8 group(s) used  ...
 * timers     thread 0: wheel, 6 levels              9646080
 * statseg    the stats segment                     33554432  4 KB (memfd)
 * ...
 * accounted  total                                 ...
 */
static int show_memory(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	struct mem_rows *m = calloc(1, sizeof(*m));
	if (!m)
		return cli_fail(s, -ENOMEM, "out of memory");
	struct graph *g = cli_graph(s);
	buffers_rows(m);
	fib_rows(m);
	timer_rows(m, g);
	sched_rows(m);
	dtrace_rows(m, g);
	log_rows(m, g);
	uint64_t total = 0;
	for (uint32_t i = 0; i < m->n; i++)
		total += m->r[i].bytes;
	struct proc_mem p;
	proc_read(&p);
	if (json) {
		cli_json_print(s, memory_json(m, &p, total));
		free(m);
		return 0;
	}
	cli_printf(s, "Process: resident %.1f MB (peak %.1f MB), virtual %.1f MB, anon %.1f MB, file %.1f MB, "
		      "shmem %.1f MB, hugetlb %.1f MB",
		   p.rss / 1024.0, p.hwm / 1024.0, p.vsize / 1024.0, p.anon / 1024.0, p.file / 1024.0, p.shmem / 1024.0,
		   p.hugetlb / 1024.0);
	cli_printf(s, "Hugepages (%llu kB): %llu total, %llu free", (unsigned long long)p.huge_size,
		   (unsigned long long)p.huge_total, (unsigned long long)p.huge_free);
	static const struct cli_table_col cols[] = {
		{ "Subsystem", false }, { "What", false }, { "Bytes", true }, { "Pages", false } };
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	for (uint32_t i = 0; t && i < m->n; i++) {
		cli_table_cell(t, "%s", m->r[i].subsystem);
		cli_table_cell(t, "%s", m->r[i].what);
		cli_table_cell(t, "%llu", (unsigned long long)m->r[i].bytes);
		cli_table_cell(t, "%s", m->r[i].pages[0] ? m->r[i].pages : "-");
	}
	cli_table_cell(t, "%s", "accounted");
	cli_table_cell(t, "%s", "total");
	cli_table_cell(t, "%llu", (unsigned long long)total);
	cli_table_cell(t, "%s", "");
	cli_table_print(s, t);
	free(m);
	return 0;
}

CLI_COMMAND(show_memory_cmd, "show memory", "show memory [json]",
	    "Memory by subsystem (buffer pools, FIBs, timer wheels, stats segment, logs) and the process's own",
	    show_memory)

/* ---- show physmem ---- */

/* The big regions and how they are backed: what VPP's `show physmem` says
 * of its physmem maps. Each buffer pool (its NUMA node, its address range,
 * hugetlb or 4 KB pages), the IPv4 FIB's tbl24 (the one table large enough
 * to care) and the stats segment. The NUMA node of a region that follows
 * the first touch (the FIB, the segment) is not one sluice chose: -1. */
struct physmem_region {
	char name[32];
	int numa_node;
	uint64_t bytes, start;
	const char *pages;
	bool hugepages;
};

#define PHYSMEM_MAX (BUFFER_MAX_POOLS + 2)

static uint32_t physmem_regions(struct physmem_region *r)
{
	uint32_t n = 0;
	for (uint32_t p = 0; p < buffer_main.n_pools && n < BUFFER_MAX_POOLS; p++) {
		struct buffer_pool_stats st;
		if (buffer_pool_stats(p, &st))
			continue;
		r[n] = (struct physmem_region){ .numa_node = (int)st.numa_node,
						 .bytes = (uint64_t)st.n_total * buffer_main.stride,
						 .start = (uint64_t)(uintptr_t)buffer_main.base +
							  (uint64_t)p * buffer_main.index_span * buffer_main.stride,
						 .pages = st.hugepages ? "2 MB hugetlb" : "4 KB",
						 .hugepages = st.hugepages };
		snprintf(r[n++].name, sizeof(r[0].name), "buffer pool %u", p);
	}
	if (ip4_fib_main) {
		struct ip4_fib_stats st;
		ip4_fib_stats(ip4_fib_main, &st);
		r[n] = (struct physmem_region){ .name = "ip4 fib", .numa_node = -1, .bytes = st.mem_bytes,
						 .pages = ip4_fib_pages_name(st.tbl24_pages),
						 .hugepages = st.tbl24_pages == IP4_FIB_PAGES_HUGETLB };
		n++;
	}
	const struct sluice_config *cfg = app_cli_config();
	if (cfg && cfg->statseg.size)
		r[n++] = (struct physmem_region){ .name = "stats segment", .numa_node = -1, .bytes = cfg->statseg.size,
						   .pages = "4 KB (memfd)" };
	return n;
}

/*
 * sluice> show physmem
 * Hugepages (2048 kB): 64 total, 46 free; this process: 36.0 MB hugetlb
 * Region         NUMA     Bytes  Pages         Start
 * buffer pool 0     0  37748736  2 MB hugetlb  0x7f1c40000000
 * ip4 fib           -  67174400  THP-advised   -
 * stats segment     -  33554432  4 KB (memfd)  -
 */
static int show_physmem(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	struct physmem_region r[PHYSMEM_MAX];
	uint32_t n = physmem_regions(r);
	struct proc_mem p;
	proc_read(&p);
	if (json) {
		cJSON *root = cJSON_CreateObject();
		cJSON *o = cJSON_AddObjectToObject(root, "physmem");
		cJSON *h = cJSON_AddObjectToObject(o, "hugepages");
		cJSON_AddNumberToObject(h, "page_size_bytes", (double)p.huge_size * 1024);
		cJSON_AddNumberToObject(h, "total", (double)p.huge_total);
		cJSON_AddNumberToObject(h, "free", (double)p.huge_free);
		cJSON_AddNumberToObject(h, "process_bytes", (double)p.hugetlb * 1024);
		cJSON *a = cJSON_AddArrayToObject(o, "regions");
		for (uint32_t i = 0; i < n; i++) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "name", r[i].name);
			cJSON_AddNumberToObject(e, "numa_node", r[i].numa_node);
			cJSON_AddNumberToObject(e, "bytes", (double)r[i].bytes);
			cJSON_AddStringToObject(e, "pages", r[i].pages);
			cJSON_AddBoolToObject(e, "hugepages", r[i].hugepages);
			if (r[i].start)
				cJSON_AddNumberToObject(e, "start", (double)r[i].start);
			cJSON_AddItemToArray(a, e);
		}
		cli_json_print(s, root);
		return 0;
	}
	cli_printf(s, "Hugepages (%llu kB): %llu total, %llu free; this process: %.1f MB hugetlb",
		   (unsigned long long)p.huge_size, (unsigned long long)p.huge_total, (unsigned long long)p.huge_free,
		   p.hugetlb / 1024.0);
	static const struct cli_table_col cols[] = {
		{ "Region", false }, { "NUMA", true }, { "Bytes", true }, { "Pages", false }, { "Start", false } };
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	for (uint32_t i = 0; t && i < n; i++) {
		cli_table_cell(t, "%s", r[i].name);
		if (r[i].numa_node >= 0)
			cli_table_cell(t, "%d", r[i].numa_node);
		else
			cli_table_cell(t, "-");
		cli_table_cell(t, "%llu", (unsigned long long)r[i].bytes);
		cli_table_cell(t, "%s", r[i].pages);
		if (r[i].start)
			cli_table_cell(t, "0x%llx", (unsigned long long)r[i].start);
		else
			cli_table_cell(t, "-");
	}
	cli_table_print(s, t);
	return 0;
}

CLI_COMMAND(show_physmem_cmd, "show physmem", "show physmem [json]",
	    "Buffer pools and other big regions: size, NUMA node, hugetlb or 4 KB pages (VPP's command)", show_physmem)
