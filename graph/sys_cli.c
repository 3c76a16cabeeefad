/* `show clock` and `show cpu` (VPP's names): the clocks the engine runs on
 * and the processor it runs on. Both read the kernel's files and the
 * threads' published words; neither takes the barrier. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "graph/graph.h"

/* ---- show clock ---- */

/* Seconds since the process started: /proc/self/stat's starttime (field
 * 22, clock ticks after boot) against /proc/uptime. -1 when unreadable. */
static double process_uptime_s(void)
{
	char buf[1024];
	double up = -1;
	FILE *f = fopen("/proc/uptime", "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lf", &up) != 1)
		up = -1;
	fclose(f);
	f = fopen("/proc/self/stat", "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* The command name (field 2) may hold spaces: count from its ')'. */
	char *p = strrchr(buf, ')');
	unsigned long long start = 0;
	for (int field = 2; p && *p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &start) != 1 || up < 0)
		return -1;
	return up - (double)start / (double)sysconf(_SC_CLK_TCK);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * sluice> show clock
 * Time now 2026-12-02 23:41:07.123456 UTC, monotonic 1234.567890123 s, up 61.4 s
 * TSC 2.9950 GHz (measured against the monotonic clock)
 * Thread  Name      Last loop (s)  Heartbeat
 *      0  main           61.402913      412us
 *      1  worker 0       61.403001       25us
 *
 * Last loop: when the thread last ended a dispatch loop, in seconds since
 * the graph was made; heartbeat: how long ago that was (show threads).
 */
static int show_clock(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	uint64_t wall = clock_ns(CLOCK_REALTIME), mono = clock_ns(CLOCK_MONOTONIC);
	double up = process_uptime_s(), tsc = cpu_ticks_per_second();
	time_t sec = (time_t)(wall / 1000000000ull);
	struct tm tm;
	gmtime_r(&sec, &tm);
	char when[64];
	size_t n = strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(when + n, sizeof(when) - n, ".%06u", (unsigned)(wall / 1000 % 1000000));
	struct graph *g = cli_graph(s);
	uint32_t nt = g ? graph_n_threads(g) : 0;
	if (json) {
		cJSON *root = cJSON_CreateObject();
		cJSON *o = cJSON_AddObjectToObject(root, "clock");
		when[10] = 'T';
		cJSON_AddStringToObject(o, "utc", when);
		cJSON_AddNumberToObject(o, "realtime_ns", (double)wall);
		cJSON_AddNumberToObject(o, "monotonic_ns", (double)mono);
		cJSON_AddNumberToObject(o, "uptime_ns", up < 0 ? 0 : up * 1e9);
		cJSON_AddNumberToObject(o, "tsc_hz", tsc);
		cJSON *th = cJSON_AddArrayToObject(o, "threads");
		for (uint32_t i = 0; i < nt; i++) {
			struct graph_thread_info ti;
			if (graph_thread_info(g, i, &ti))
				continue;
			cJSON *t = cJSON_CreateObject();
			cJSON_AddNumberToObject(t, "thread", i);
			cJSON_AddStringToObject(t, "name", ti.name);
			cJSON_AddNumberToObject(t, "last_loop_ns", (double)ti.last_loop_ns);
			cJSON_AddNumberToObject(t, "heartbeat_age_ns", (double)ti.heartbeat_age_ns);
			cJSON_AddItemToArray(th, t);
		}
		cli_json_print(s, root);
		return 0;
	}
	cli_printf(s, "Time now %s UTC, monotonic %.9f s, up %.1f s", when, (double)mono / 1e9, up);
	cli_printf(s, "TSC %.4f GHz (measured against the monotonic clock)", tsc / 1e9);
	if (!nt)
		return 0;
	static const struct cli_table_col cols[] = {
		{ "Thread", true }, { "Name", false }, { "Last loop (s)", true }, { "Heartbeat (us)", true } };
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	for (uint32_t i = 0; t && i < nt; i++) {
		struct graph_thread_info ti;
		if (graph_thread_info(g, i, &ti))
			continue;
		cli_table_cell(t, "%u", i);
		cli_table_cell(t, "%s", ti.name);
		cli_table_cell(t, "%.6f", (double)ti.last_loop_ns / 1e9);
		cli_table_cell(t, "%llu", (unsigned long long)(ti.heartbeat_age_ns / 1000));
	}
	cli_table_print(s, t);
	return 0;
}

/* ---- show cpu ---- */

/* The flags a packet data plane cares about: the vector sets its hot
 * loops and hashes use, and whether the TSC can be trusted as a clock. */
static const char *const cpu_flags_of_interest[] = {
	"sse4_2", "avx", "avx2", "avx512f", "avx512bw", "avx512vl", "aes", "pclmulqdq", "sha_ni",
	"bmi2", "popcnt", "rdtscp", "constant_tsc", "nonstop_tsc", "tsc_known_freq", "hypervisor",
};

struct cpu_desc {
	char model[128], vendor[64], mhz[32], flags[4096], base_khz[32];
	int family, model_no, stepping;
};

static void trim_value(char *dst, size_t len, const char *line)
{
	const char *v = strchr(line, ':');
	v = v ? v + 1 : "";
	while (*v == ' ' || *v == '\t')
		v++;
	snprintf(dst, len, "%s", v);
	dst[strcspn(dst, "\n")] = 0;
}

/* The first processor's lines of /proc/cpuinfo. */
static void cpu_read(struct cpu_desc *c)
{
	memset(c, 0, sizeof(*c));
	c->family = c->model_no = c->stepping = -1;
	FILE *f = fopen("/proc/cpuinfo", "r");
	char *line = NULL;
	size_t cap = 0;
	while (f && getline(&line, &cap, f) > 0 && line[0] != '\n') {
		char v[64];
		if (!strncmp(line, "model name", 10))
			trim_value(c->model, sizeof(c->model), line);
		else if (!strncmp(line, "vendor_id", 9))
			trim_value(c->vendor, sizeof(c->vendor), line);
		else if (!strncmp(line, "cpu MHz", 7))
			trim_value(c->mhz, sizeof(c->mhz), line);
		else if (!strncmp(line, "flags", 5))
			trim_value(c->flags, sizeof(c->flags), line);
		else if (!strncmp(line, "cpu family", 10) && (trim_value(v, sizeof(v), line), 1))
			c->family = atoi(v);
		else if (!strncmp(line, "model\t", 6) && (trim_value(v, sizeof(v), line), 1))
			c->model_no = atoi(v);
		else if (!strncmp(line, "stepping", 8) && (trim_value(v, sizeof(v), line), 1))
			c->stepping = atoi(v);
	}
	free(line);
	if (f)
		fclose(f);
	f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/base_frequency", "r");
	if (f) {
		if (!fgets(c->base_khz, sizeof(c->base_khz), f))
			c->base_khz[0] = 0;
		c->base_khz[strcspn(c->base_khz, "\n")] = 0;
		fclose(f);
	}
}

static bool has_flag(const char *flags, const char *flag)
{
	size_t n = strlen(flag);
	for (const char *p = flags; (p = strstr(p, flag)); p += n)
		if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
			return true;
	return false;
}

/* What this binary was compiled to use (meson option cpu_arch). */
static const char *build_isa(void)
{
#if defined(__AVX512F__)
	return "avx512";
#elif defined(__AVX2__)
	return "avx2";
#elif defined(__SSE4_2__)
	return "sse4.2";
#else
	return "baseline";
#endif
}

/*
 * sluice> show cpu
 * Model name:          Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz
 * Vendor, family:      GenuineIntel, family 6 model 106 stepping 6
 * Flags of interest:   sse4_2 avx avx2 avx512f avx512bw avx512vl aes pclmulqdq ... constant_tsc
 * Frequency:           2899.968 MHz now (cpuinfo), TSC 2.8999 GHz measured
 * CPUs online:         2
 * Built for:           avx512
 */
static int show_cpu(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	struct cpu_desc *c = malloc(sizeof(*c));
	if (!c)
		return cli_fail(s, -ENOMEM, "out of memory");
	cpu_read(c);
	char flags[512] = "";
	size_t len = 0;
	for (size_t i = 0; i < ARRAY_LEN(cpu_flags_of_interest); i++)
		if (has_flag(c->flags, cpu_flags_of_interest[i]) && len < sizeof(flags))
			len += (size_t)snprintf(flags + len, sizeof(flags) - len, "%s%s", len ? " " : "",
						cpu_flags_of_interest[i]);
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	double tsc = cpu_ticks_per_second();
	if (json) {
		cJSON *root = cJSON_CreateObject();
		cJSON *o = cJSON_AddObjectToObject(root, "cpu");
		cJSON_AddStringToObject(o, "model_name", c->model);
		cJSON_AddStringToObject(o, "vendor", c->vendor);
		cJSON_AddNumberToObject(o, "family", c->family < 0 ? 0 : c->family);
		cJSON_AddNumberToObject(o, "model", c->model_no < 0 ? 0 : c->model_no);
		cJSON_AddNumberToObject(o, "stepping", c->stepping < 0 ? 0 : c->stepping);
		cJSON *fl = cJSON_AddArrayToObject(o, "flags");
		for (size_t i = 0; i < ARRAY_LEN(cpu_flags_of_interest); i++)
			if (has_flag(c->flags, cpu_flags_of_interest[i]))
				cJSON_AddItemToArray(fl, cJSON_CreateString(cpu_flags_of_interest[i]));
		cJSON_AddNumberToObject(o, "frequency_mhz", atof(c->mhz));
		cJSON_AddNumberToObject(o, "base_frequency_khz", atof(c->base_khz));
		cJSON_AddNumberToObject(o, "tsc_hz", tsc);
		cJSON_AddNumberToObject(o, "cpus_online", online < 0 ? 0 : (double)online);
		cJSON_AddStringToObject(o, "built_for", build_isa());
		cli_json_print(s, root);
		free(c);
		return 0;
	}
	cli_printf(s, "%-20s %s", "Model name:", c->model[0] ? c->model : "-");
	cli_printf(s, "%-20s %s, family %d model %d stepping %d", "Vendor, family:", c->vendor[0] ? c->vendor : "-",
		   c->family, c->model_no, c->stepping);
	cli_printf(s, "%-20s %s", "Flags of interest:", flags[0] ? flags : "-");
	cli_printf(s, "%-20s %s MHz now (cpuinfo)%s%s%s, TSC %.4f GHz measured", "Frequency:", c->mhz[0] ? c->mhz : "-",
		   c->base_khz[0] ? ", base " : "", c->base_khz, c->base_khz[0] ? " kHz" : "", tsc / 1e9);
	cli_printf(s, "%-20s %ld", "CPUs online:", online);
	cli_printf(s, "%-20s %s", "Built for:", build_isa());
	free(c);
	return 0;
}

CLI_COMMAND(show_clock_cmd, "show clock", "show clock [json]",
	    "Wall and monotonic time, uptime, the TSC rate and each thread's last loop", show_clock)
CLI_COMMAND(show_cpu_cmd, "show cpu", "show cpu [json]", "The processor: model, flags of interest, frequency",
	    show_cpu)
