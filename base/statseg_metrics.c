/* Stats segment snapshot -> Prometheus text 0.0.4 / OpenMetrics 1.0
 * (base/statseg_metrics.h). libc only.
 *
 * Both formats need a family's samples together under one HELP and one
 * TYPE line, while one family may come from many entries (every /err/
 * entry is sluice_errors_total) and one entry may feed two families (a
 * combined vector's packets and bytes). So each family collects its sample
 * lines in a buffer of its own (open_memstream), and the families are
 * written out at the end, in the order they first appeared. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/statseg_metrics.h"

#define METRIC_NAME_MAX (STATSEG_NAME_SIZE + 48)
#define MAX_LABELS 4

enum kind { KIND_COUNTER, KIND_GAUGE, KIND_INFO };

struct family {
	char base[METRIC_NAME_MAX]; /* without _total / _info */
	char help[STATSEG_NAME_SIZE + 96];
	enum kind kind;
	char *buf;
	size_t len;
	FILE *f; /* the sample lines */
};

struct out {
	enum statseg_metrics_format fmt;
	struct family **fam; /* each family stays put: its memstream writes through &buf and &len */
	uint32_t n, cap, last;
	bool oom;
};

struct label {
	const char *name, *value;
};

/* How one entry is exported: its family and the labels its name carries. */
struct mapping {
	char base[METRIC_NAME_MAX];
	char help[STATSEG_NAME_SIZE + 64];
	double scale; /* 0: the value as it is (exact); else value * scale */
	struct label extra[2];
	uint32_t n_extra;
	char extra_values[2][STATSEG_NAME_SIZE];
};

/* Entries whose generic name or help would say less than this. A name
 * with a unit is in base units (seconds, bytes), as Prometheus' naming
 * guide asks, hence the scales. */
static const struct {
	const char *entry, *base, *help;
	double scale;
} known[] = {
	{ "/if/rx", NULL, "Received on the interface's rx queue", 0 },
	{ "/if/tx", NULL, "Sent on the interface's tx queue", 0 },
	{ "/if/rx-dropped", NULL, "Packets the rx queue dropped", 0 },
	{ "/if/rx-errors", NULL, "Receive errors on the rx queue", 0 },
	{ "/if/tx-dropped", NULL, "Packets the tx queue dropped", 0 },
	{ "/if/rx-queues", NULL, "Receive queues of the interface", 0 },
	{ "/if/tx-queues", NULL, "Transmit queues of the interface", 0 },
	{ "/if/admin-up", NULL, "1 when the interface is administratively up", 0 },
	{ "/if/link-up", NULL, "1 when the interface's link is up", 0 },
	{ "/if/link-speed-mbps", "sluice_interface_link_speed_bytes", "Link speed in bytes per second (0: unknown)",
	  125000 },
	{ "/node/calls", NULL, "Times the node ran on the thread", 0 },
	{ "/node/vectors", NULL, "Packets the node processed on the thread", 0 },
	{ "/node/suspends", NULL, "Times the node suspended on the thread", 0 },
	{ "/node/clocks", NULL, "TSC clocks spent in the node on the thread", 0 },
	{ "/sys/threads/loops", NULL, "Dispatch loops the thread ran", 0 },
	{ "/sys/threads/idle-loops", NULL, "Dispatch loops whose inputs found nothing", 0 },
	{ "/sys/threads/heartbeat-age-ns", "sluice_thread_heartbeat_age_seconds",
	  "Time since the thread last ended a dispatch loop", 1e-9 },
	{ "/sys/threads/sleeps", NULL, "Times the thread blocked in epoll_wait", 0 },
	{ "/sys/threads/wakeups", NULL, "Wakeups of the thread from epoll_wait by cause", 0 },
	{ "/timers/armed", NULL, "Timers armed on the thread's timer service", 0 },
	{ "/lcp/netlink/hold-ns", "sluice_lcp_netlink_hold_seconds",
	  "Barrier holds of linux-cp's netlink listeners (batches and sweeps), summed", 1e-9 },
	{ "/lcp/netlink/hold-max-ns", "sluice_lcp_netlink_hold_max_seconds",
	  "Longest barrier hold of a netlink batch since clear lcp, wall clock", 1e-9 },
	{ "/lcp/netlink/hold-cpu-max-ns", "sluice_lcp_netlink_hold_cpu_max_seconds",
	  "The listener's own CPU time in its longest kind of hold since clear lcp", 1e-9 },
	{ "/lcp/netlink/routes-changed-unix-ns", "sluice_lcp_netlink_routes_changed_timestamp_seconds",
	  "When the count of Linux routes in sluice last changed (Unix time)", 1e-9 },
	{ "/lcp/netlink/hold-cpu-ns", "sluice_lcp_netlink_hold_cpu_seconds",
	  "The listeners' own CPU time inside their barrier holds, summed", 1e-9 },
	{ "/lcp/netlink/free-ns", "sluice_lcp_netlink_free_seconds",
	  "Time the listeners spent freeing route-store memory after their holds' releases", 1e-9 },
	{ "/lcp/netlink/prefault-ns", "sluice_lcp_netlink_prefault_seconds",
	  "Time the listeners spent prefaulting FIB pages before their holds", 1e-9 },
};

/* ---- names ---- */

/* Append src to dst (of len bytes, holding n), every character outside
 * [a-zA-Z0-9_] as '_' (the exposition formats' name rule: [a-zA-Z_:]
 * [a-zA-Z0-9_:]*; ':' is left to recording rules). */
static size_t sanitize(char *dst, size_t len, size_t n, const char *src)
{
	for (; *src && n + 1 < len; src++) {
		char c = *src;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
		dst[n++] = ok ? c : '_';
	}
	dst[n] = 0;
	return n;
}

/* "/if/rx-dropped" -> "sluice_interface_rx_dropped". */
static void generic_base(const char *entry, char *dst, size_t len)
{
	static const struct {
		const char *prefix, *as;
	} prefixes[] = { { "/if/", "interface_" }, { "/sys/threads/", "thread_" }, { "/dist/", "distributor_" } };
	size_t n = (size_t)snprintf(dst, len, "sluice_");
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(entry, prefixes[i].prefix, strlen(prefixes[i].prefix))) {
			n = sanitize(dst, len, n, prefixes[i].as);
			entry += strlen(prefixes[i].prefix);
			break;
		}
	while (*entry == '/')
		entry++;
	n = sanitize(dst, len, n, entry);
	if (n > 7 && dst[n - 1] == '_') /* "/a/" */
		dst[--n] = 0;
}

static bool is_counter(uint32_t type)
{
	return type == STATSEG_SCALAR_COUNTER || type == STATSEG_COUNTER_VECTOR || type == STATSEG_COMBINED_VECTOR;
}

/* Help for families of entries under a prefix; else the entry's name. */
static void generic_help(const char *entry, char *dst, size_t len)
{
	static const struct {
		const char *prefix, *help;
	} helps[] = {
		{ "/if/driver/", "What the driver counts beyond the queues (kernel or NIC)" },
		{ "/timers/", "Timer service operations on the thread" },
		{ "/dist/", "The distributor, per worker" },
	};
	for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
		if (!strncmp(entry, helps[i].prefix, strlen(helps[i].prefix))) {
			snprintf(dst, len, "%s: %s", helps[i].help, entry + strlen(helps[i].prefix));
			return;
		}
	snprintf(dst, len, "sluice stats segment entry %s", entry);
}

static void map_known(const struct statseg_value *v, struct mapping *m)
{
	generic_base(v->e.name, m->base, sizeof(m->base));
	generic_help(v->e.name, m->help, sizeof(m->help));
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(v->e.name, known[i].entry)) {
			if (known[i].base)
				snprintf(m->base, sizeof(m->base), "%s", known[i].base);
			snprintf(m->help, sizeof(m->help), "%s", known[i].help);
			m->scale = known[i].scale;
		}
	/* A counter's samples get _total; a name of ours that has it already
	 * would get it twice. */
	size_t n = strlen(m->base);
	if (is_counter(v->e.type) && n > 13 && !strcmp(m->base + n - 6, "_total"))
		m->base[n - 6] = 0;
}

static void add_extra(struct mapping *m, const char *name, const char *value, size_t value_len)
{
	uint32_t k = m->n_extra++;
	snprintf(m->extra_values[k], sizeof(m->extra_values[k]), "%.*s", (int)value_len, value);
	m->extra[k] = (struct label){ name, m->extra_values[k] };
}

/* /err/NODE/REASON (a node name has no '/'; a reason may) and
 * /buffer/poolN/WHAT; else a known or generic name. */
static void map_entry(const struct statseg_value *v, struct mapping *m)
{
	memset(m, 0, sizeof(*m));
	const char *name = v->e.name, *slash;
	unsigned pool;
	int at = 0;
	if (!strncmp(name, "/err/", 5) && (slash = strchr(name + 5, '/'))) {
		snprintf(m->base, sizeof(m->base), "sluice_errors");
		snprintf(m->help, sizeof(m->help), "Packets counted by a node's error counter, by reason (show errors)");
		add_extra(m, "node", name + 5, (size_t)(slash - name - 5));
		add_extra(m, "reason", slash + 1, strlen(slash + 1));
	} else if (sscanf(name, "/buffer/pool%u/%n", &pool, &at) == 1 && at > 0) {
		char p[16];
		add_extra(m, "pool", p, (size_t)snprintf(p, sizeof(p), "%u", pool));
		if (!strcmp(name + at, "total")) {
			snprintf(m->base, sizeof(m->base), "sluice_buffer_pool_buffers");
			snprintf(m->help, sizeof(m->help), "Buffers the pool holds in all (free + cached + in_use)");
			return;
		}
		snprintf(m->base, sizeof(m->base), "sluice_buffers");
		snprintf(m->help, sizeof(m->help), "Buffers of the pool by state: free in the pool, cached per "
						   "thread, in_use by packets");
		char state[STATSEG_NAME_SIZE];
		add_extra(m, "state", state, sanitize(state, sizeof(state), 0, name + at));
	} else {
		map_known(v, m);
	}
}

/* ---- families and samples ---- */

static struct family *family_get(struct out *o, const char *base, enum kind kind, const char *help)
{
	if (o->last < o->n && !strcmp(o->fam[o->last]->base, base))
		return o->fam[o->last];
	for (uint32_t i = 0; i < o->n; i++)
		if (!strcmp(o->fam[i]->base, base))
			return o->fam[o->last = i];
	if (o->n == o->cap) {
		uint32_t cap = o->cap ? 2 * o->cap : 64;
		struct family **p = realloc(o->fam, cap * sizeof(*p));
		if (!p)
			return NULL;
		o->fam = p;
		o->cap = cap;
	}
	/* Not moved by the array's growth: open_memstream keeps &f->buf and
	 * &f->len, so a family inside a realloc'd array would have its stream
	 * write through freed memory once the families pass 64. */
	struct family *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	o->fam[o->n] = f;
	snprintf(f->base, sizeof(f->base), "%s", base);
	snprintf(f->help, sizeof(f->help), "%s", help);
	f->kind = kind;
	o->n++; /* freed by families_free from now on */
	f->f = open_memstream(&f->buf, &f->len);
	if (!f->f)
		return NULL;
	o->last = o->n - 1;
	return f;
}

/* The exposition formats' escapes: backslash, newline and (label values
 * always, HELP in OpenMetrics) double quote. */
static void put_escaped(FILE *f, const char *s, bool quote)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (*s == '"' && quote)
			fputs("\\\"", f);
		else
			fputc(*s, f);
	}
}

static const char *suffix(enum kind k)
{
	return k == KIND_COUNTER ? "_total" : k == KIND_INFO ? "_info" : "";
}

struct sample {
	const struct label *labels;
	uint32_t n_labels;
	uint64_t value;
	double scale;
};

static void sample(struct out *o, const char *base, enum kind kind, const char *help, const struct sample *s)
{
	struct family *f = family_get(o, base, kind, help);
	if (!f) {
		o->oom = true;
		return;
	}
	fprintf(f->f, "%s%s", f->base, suffix(f->kind));
	for (uint32_t i = 0; i < s->n_labels; i++) {
		fprintf(f->f, "%s%s=\"", i ? "," : "{", s->labels[i].name);
		put_escaped(f->f, s->labels[i].value, true);
		fputc('"', f->f);
	}
	if (s->n_labels)
		fputc('}', f->f);
	if (s->scale != 0)
		fprintf(f->f, " %.15g\n", (double)s->value * s->scale);
	else
		fprintf(f->f, " %" PRIu64 "\n", s->value);
}

/* ---- entries ---- */

/* The label of index i of dimension k: a thread's index (see the header),
 * else the name vector's element, else the index. */
static const char *dim_value(const struct statseg_snapshot *s, const struct statseg_value *v, unsigned k, uint32_t i,
			     char *buf, size_t len)
{
	const char *l = strcmp(v->e.dim_names[k], "thread") ? statseg_label(s, v, k, i) : NULL;
	if (l)
		return l;
	snprintf(buf, len, "%u", i);
	return buf;
}

/* /sys/threads/names: sluice_thread_info{thread="1",name="worker 0"} 1. */
static void export_thread_names(struct out *o, const struct statseg_value *v)
{
	for (uint32_t i = 0; i < v->e.dims[0]; i++) {
		char idx[16];
		snprintf(idx, sizeof(idx), "%u", i);
		struct label l[2] = { { "thread", idx }, { "name", v->labels[i] } };
		struct sample smp = { l, 2, 1, 0 };
		if (v->labels[i][0])
			sample(o, "sluice_thread", KIND_INFO, "The name of each datapath thread by index", &smp);
	}
}

static void export_element(struct out *o, const struct statseg_snapshot *s, const struct statseg_value *v,
			   const struct mapping *m, uint32_t i, uint32_t j)
{
	struct label l[MAX_LABELS];
	char bufs[2][16], lnames[2][STATSEG_DIM_NAME_SIZE + 1];
	uint32_t n = 0, idx[2] = { i, j };
	for (uint32_t k = 0; k < m->n_extra; k++)
		l[n++] = m->extra[k];
	/* The thread label last, as the examples write it:
	 * {node="ip4-lookup",thread="1"}. */
	bool thread_first = !strcmp(v->e.dim_names[0], "thread");
	for (unsigned d = 0; d < 2; d++) {
		unsigned k = thread_first ? 1 - d : d;
		if (!v->e.dim_names[k][0])
			continue;
		char tmp[STATSEG_DIM_NAME_SIZE];
		snprintf(tmp, sizeof(tmp), "%.*s", STATSEG_DIM_NAME_SIZE - 1, v->e.dim_names[k]);
		sanitize(lnames[k], sizeof(lnames[k]), 0, tmp);
		l[n] = (struct label){ lnames[k], dim_value(s, v, k, idx[k], bufs[k], sizeof(bufs[k])) };
		if (!l[n++].value[0])
			return; /* a hole: no such node or interface */
	}
	const uint64_t *x = v->v + ((uint64_t)i * v->e.dims[1] + j) * statseg_elem_words(v->e.type);
	enum kind kind = is_counter(v->e.type) ? KIND_COUNTER : KIND_GAUGE;
	if (v->e.type != STATSEG_COMBINED_VECTOR) {
		sample(o, m->base, kind, m->help, &(struct sample){ l, n, x[0], m->scale });
		return;
	}
	static const char *const what[2] = { "packets", "bytes" };
	for (int w = 0; w < 2; w++) {
		char base[METRIC_NAME_MAX + 8], help[sizeof(m->help) + 16];
		snprintf(base, sizeof(base), "%s_%s", m->base, what[w]);
		snprintf(help, sizeof(help), "%s: %s", m->help, what[w]);
		sample(o, base, kind, help, &(struct sample){ l, n, x[w], m->scale });
	}
}

static void export_entry(struct out *o, const struct statseg_snapshot *s, const struct statseg_value *v)
{
	if (!v->matched)
		return;
	if (v->e.type == STATSEG_NAME_VECTOR) { /* labels of other entries, not samples */
		if (!strcmp(v->e.name, "/sys/threads/names"))
			export_thread_names(o, v);
		return;
	}
	struct mapping m;
	map_entry(v, &m);
	for (uint32_t i = 0; i < v->e.dims[0]; i++) {
		uint32_t cols = statseg_row_length(s, v, i); /* 0 for a hole */
		for (uint32_t j = 0; j < cols; j++)
			export_element(o, s, v, &m, i, j);
	}
}

/* The segment's own freshness, and the build. */
static void export_header(struct out *o, const struct statseg_snapshot *s, const char *version)
{
	struct label l = { "version", version ? version : "unknown" };
	sample(o, "sluice_build", KIND_INFO, "The sluice version serving these metrics", &(struct sample){ &l, 1, 1, 0 });
	sample(o, "sluice_statseg_updates", KIND_COUNTER, "Copy passes of the stats segment's writer",
	       &(struct sample){ NULL, 0, s->updates, 0 });
	sample(o, "sluice_statseg_update_timestamp_seconds", KIND_GAUGE,
	       "When the stats segment's writer last copied the counters (seconds since 1970)",
	       &(struct sample){ NULL, 0, s->update_ns, 1e-9 });
}

/* ---- output ---- */

static const char *type_name(enum statseg_metrics_format fmt, enum kind k)
{
	if (k == KIND_INFO)
		return fmt == STATSEG_METRICS_OPENMETRICS ? "info" : "gauge";
	return k == KIND_COUNTER ? "counter" : "gauge";
}

/* Text 0.0.4 names a family after its samples (..._total); OpenMetrics
 * after its base, the samples adding _total or _info. */
static void write_family(FILE *out, enum statseg_metrics_format fmt, const struct family *f)
{
	const char *sfx = fmt == STATSEG_METRICS_OPENMETRICS ? "" : suffix(f->kind);
	fprintf(out, "# HELP %s%s ", f->base, sfx);
	put_escaped(out, f->help, fmt == STATSEG_METRICS_OPENMETRICS);
	fprintf(out, "\n# TYPE %s%s %s\n", f->base, sfx, type_name(fmt, f->kind));
	fwrite(f->buf, 1, f->len, out);
}

static void families_free(struct out *o)
{
	for (uint32_t i = 0; i < o->n; i++) {
		if (o->fam[i]->f)
			fclose(o->fam[i]->f);
		free(o->fam[i]->buf);
		free(o->fam[i]);
	}
	free(o->fam);
}

int statseg_metrics_format(const struct statseg_snapshot *s, enum statseg_metrics_format fmt, const char *version,
			   char **out, size_t *len)
{
	struct out o = { .fmt = fmt };
	export_header(&o, s, version);
	for (uint32_t i = 0; i < s->n && !o.oom; i++)
		export_entry(&o, s, &s->vals[i]);
	*out = NULL;
	*len = 0;
	FILE *f = o.oom ? NULL : open_memstream(out, len);
	for (uint32_t i = 0; f && i < o.n; i++) {
		o.oom |= fflush(o.fam[i]->f) != 0;
		write_family(f, fmt, o.fam[i]);
	}
	if (f && fmt == STATSEG_METRICS_OPENMETRICS)
		fputs("# EOF\n", f);
	bool failed = !f || o.oom || ferror(f);
	if (f)
		failed |= fclose(f) != 0;
	families_free(&o);
	if (failed) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* ---- content negotiation ---- */

const char *statseg_metrics_content_type(enum statseg_metrics_format f)
{
	return f == STATSEG_METRICS_OPENMETRICS ? STATSEG_METRICS_OPENMETRICS_TYPE : STATSEG_METRICS_TEXT_TYPE;
}

/* The q parameter of one media range's parameters (RFC 9110 12.4.2), 1
 * without one. */
static double range_quality(const char *params, size_t n)
{
	char buf[256], *save;
	snprintf(buf, sizeof(buf), "%.*s", (int)n, params);
	for (char *p = strtok_r(buf, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
		p += strspn(p, " \t");
		if (!strncasecmp(p, "q=", 2))
			return strtod(p + 2, NULL);
	}
	return 1;
}

/* RFC 9110 12.5.1: the media range with the highest quality wins; a tie
 * goes to OpenMetrics, which a client that lists it asked for by name. */
enum statseg_metrics_format statseg_metrics_negotiate(const char *accept)
{
	double om = 0, text = 0;
	for (const char *r = accept; r && *r;) {
		r += strspn(r, ", \t");
		size_t n = strcspn(r, ","), type = strcspn(r, ";,");
		while (type && (r[type - 1] == ' ' || r[type - 1] == '\t'))
			type--;
		double q = range_quality(r + type, n - type);
		if (type == 28 && !strncasecmp(r, "application/openmetrics-text", 28))
			om = q > om ? q : om;
		else if ((type == 10 && !strncasecmp(r, "text/plain", 10)) || (type == 6 && !strncasecmp(r, "text/*", 6)) ||
			 (type == 3 && !strncmp(r, "*/*", 3)))
			text = q > text ? q : text;
		r += n;
	}
	return om > 0 && om >= text ? STATSEG_METRICS_OPENMETRICS : STATSEG_METRICS_TEXT;
}
