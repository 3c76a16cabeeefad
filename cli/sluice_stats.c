/* sluice-stats: read sluice's counters from its stats segment, as VPP's
 * vpp_get_stats does, without the CLI (it works while every CLI session is
 * taken, and the daemon never waits for it).
 *
 *   sluice-stats [-s SOCKET] [--json] [--regex] ls [PATTERN]
 *   sluice-stats [-s SOCKET] [--json] [--regex] dump [PATTERN]
 *   sluice-stats [-s SOCKET] [--json] [--regex] poll [PATTERN] [--interval 1s] [--count N]
 *   sluice-stats [-s SOCKET] [--regex] [--openmetrics] metrics [PATTERN]
 *
 * PATTERN selects entries by name: a glob (fnmatch, '*' crosses '/'); a
 * pattern without * ? [ is a name and everything under it (`/if` is every
 * interface counter, `/if/tx` that one entry);
 * --regex makes it a POSIX extended regular expression. `metrics` prints
 * what the daemon's Prometheus endpoint serves (base/statseg_metrics.h),
 * for node_exporter's textfile collector or a pipe. Names and the layout:
 * docs/stats-segment.md. Built from base/statseg.h alone.
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "base/statseg.h"
#include "base/statseg_metrics.h"
#include "sluice_version.h"

struct opts {
	const char *socket, *pattern;
	bool json, regex, openmetrics;
	uint64_t interval_ns;
	uint64_t count; /* poll: 0 forever */
	regex_t re;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: sluice-stats [-s SOCKET] [--json] [--regex] ls [PATTERN]\n"
		   "       sluice-stats [-s SOCKET] [--json] [--regex] dump [PATTERN]\n"
		   "       sluice-stats [-s SOCKET] [--json] [--regex] poll [PATTERN] [--interval 1s] [--count N]\n"
		   "       sluice-stats [-s SOCKET] [--regex] [--openmetrics] metrics [PATTERN]\n"
		   "  -s, --socket PATH  the daemon's stats socket (default " SLUICE_DEFAULT_STATS_SOCKET ")\n"
		   "  -j, --json         JSON instead of text\n"
		   "  -r, --regex        PATTERN is an extended regular expression, not a glob\n"
		   "  -i, --interval T   poll: time between readings (500ms, 1s, 2; default 1s)\n"
		   "  -n, --count N      poll: stop after N rate lines (default: until interrupted)\n"
		   "  -o, --openmetrics  metrics: OpenMetrics 1.0 text, not Prometheus text 0.0.4\n");
}

static bool match(const char *name, void *arg)
{
	struct opts *o = arg;
	const char *p = o->pattern;
	if (!p || !p[0])
		return true;
	if (o->regex)
		return regexec(&o->re, name, 0, NULL, 0) == 0;
	size_t n = strlen(p);
	if (!strpbrk(p, "*?[")) /* a name, or every name under it */
		return strncmp(name, p, n) == 0 && (name[n] == 0 || name[n] == '/' || p[n - 1] == '/');
	return fnmatch(p, name, 0) == 0;
}

/* "1s", "500ms", "250us", "2" (seconds). */
static int parse_interval(const char *s, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end);
	double unit = !strcmp(end, "ms") ? 1e6 : !strcmp(end, "us") ? 1e3 : !strcmp(end, "s") || !*end ? 1e9 : 0;
	if (end == s || unit == 0 || v <= 0 || v * unit < 1e6 || v * unit > 3600e9)
		return -EINVAL;
	*ns = (uint64_t)(v * unit);
	return 0;
}

/* ---- elements ---- */

/* The label of index i of dimension k as text: a name, or the index. */
static void label_text(const struct statseg_snapshot *s, const struct statseg_value *v, unsigned k, uint32_t i,
		       char *buf, size_t len)
{
	const char *l = statseg_label(s, v, k, i);
	if (l)
		snprintf(buf, len, "%s", l);
	else
		snprintf(buf, len, "%u", i);
}

/* Whether dimension k is shown (a vector dimension; scalars have none). */
static bool dim_shown(const struct statseg_value *v, unsigned k)
{
	return v->e.dim_names[k][0] != 0;
}

/* "/if/rx[pg0][0]" */
static void element_name(const struct statseg_snapshot *s, const struct statseg_value *v, uint32_t i, uint32_t j,
			  char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s", v->e.name);
	uint32_t idx[2] = { i, j };
	for (unsigned k = 0; k < 2 && n < len; k++)
		if (dim_shown(v, k)) {
			char l[STATSEG_LABEL_SIZE];
			label_text(s, v, k, idx[k], l, sizeof(l));
			n += (size_t)snprintf(buf + n, len - n, "[%s]", l);
		}
}

static cJSON *element_json(const struct statseg_snapshot *s, const struct statseg_value *v, uint32_t i, uint32_t j)
{
	cJSON *o = cJSON_CreateObject();
	uint32_t idx[2] = { i, j };
	for (unsigned k = 0; k < 2; k++) {
		if (!dim_shown(v, k))
			continue;
		const char *l = statseg_label(s, v, k, idx[k]);
		if (l)
			cJSON_AddStringToObject(o, v->e.dim_names[k], l);
		else
			cJSON_AddNumberToObject(o, v->e.dim_names[k], idx[k]);
	}
	return o;
}

static const uint64_t *element(const struct statseg_value *v, uint32_t i, uint32_t j)
{
	return v->v + ((uint64_t)i * v->e.dims[1] + j) * statseg_elem_words(v->e.type);
}

typedef void(element_fn)(const struct statseg_snapshot *s, const struct statseg_value *v, uint32_t i, uint32_t j,
			 void *arg);

/* Every element of every matched entry, holes (rows and columns) and
 * missing queues left out. */
static void for_each_element(const struct statseg_snapshot *s, element_fn *fn, void *arg)
{
	for (uint32_t n = 0; n < s->n; n++) {
		const struct statseg_value *v = &s->vals[n];
		if (!v->matched || v->e.type == STATSEG_NAME_VECTOR)
			continue;
		for (uint32_t i = 0; i < v->e.dims[0]; i++) {
			uint32_t cols = statseg_row_length(s, v, i);
			for (uint32_t j = 0; j < cols; j++) {
				const char *col = statseg_label(s, v, 1, j);
				if (!col || col[0]) /* "": a hole, as for rows */
					fn(s, v, i, j, arg);
			}
		}
	}
}

static bool is_counter(uint32_t type)
{
	return type == STATSEG_SCALAR_COUNTER || type == STATSEG_COUNTER_VECTOR || type == STATSEG_COMBINED_VECTOR;
}

/* ---- ls ---- */

static int cmd_ls(const struct statseg_snapshot *s, const struct opts *o)
{
	cJSON *arr = o->json ? cJSON_CreateArray() : NULL;
	for (uint32_t n = 0; n < s->n; n++) {
		const struct statseg_value *v = &s->vals[n];
		if (!v->matched)
			continue;
		char dims[64] = "";
		if (dim_shown(v, 0)) {
			int n = snprintf(dims, sizeof(dims), "%s[%u]", v->e.dim_names[0], v->e.dims[0]);
			if (dim_shown(v, 1) && n > 0 && (size_t)n < sizeof(dims))
				snprintf(dims + n, sizeof(dims) - (size_t)n, " x %s[%u]", v->e.dim_names[1], v->e.dims[1]);
		}
		if (!arr) {
			printf("%-48s %-16s %s\n", v->e.name, statseg_type_name(v->e.type), dims);
			continue;
		}
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", v->e.name);
		cJSON_AddStringToObject(e, "type", statseg_type_name(v->e.type));
		cJSON *d = cJSON_AddArrayToObject(e, "dims");
		for (unsigned k = 0; k < 2; k++)
			if (dim_shown(v, k)) {
				cJSON *x = cJSON_CreateObject();
				cJSON_AddStringToObject(x, "name", v->e.dim_names[k]);
				cJSON_AddNumberToObject(x, "size", v->e.dims[k]);
				cJSON_AddItemToArray(d, x);
			}
		cJSON_AddItemToArray(arr, e);
	}
	if (arr) {
		char *t = cJSON_PrintUnformatted(arr);
		printf("%s\n", t);
		free(t);
		cJSON_Delete(arr);
	}
	return 0;
}

/* ---- dump ---- */

static void dump_text(const struct statseg_snapshot *s, const struct statseg_value *v, uint32_t i, uint32_t j,
		      void *arg)
{
	(void)arg;
	char name[STATSEG_NAME_SIZE + 2 * (STATSEG_LABEL_SIZE + 2)];
	element_name(s, v, i, j, name, sizeof(name));
	const uint64_t *x = element(v, i, j);
	if (v->e.type == STATSEG_COMBINED_VECTOR)
		printf("%s %" PRIu64 " packets %" PRIu64 " bytes\n", name, x[0], x[1]);
	else
		printf("%s %" PRIu64 "\n", name, x[0]);
}

/* JSON: one object per entry, {"name", "type", "values": [...]} for
 * vectors (each element its dimensions' labels and "value", or "packets"
 * and "bytes") and "value" for scalars. */
static cJSON *entry_json(cJSON *counters, const struct statseg_value *v)
{
	for (cJSON *c = counters->child; c; c = c->next)
		if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, v->e.name))
			return c;
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "name", v->e.name);
	cJSON_AddStringToObject(e, "type", statseg_type_name(v->e.type));
	if (dim_shown(v, 0))
		cJSON_AddArrayToObject(e, "values");
	cJSON_AddItemToArray(counters, e);
	return e;
}

static void dump_json(const struct statseg_snapshot *s, const struct statseg_value *v, uint32_t i, uint32_t j,
		      void *arg)
{
	cJSON *e = entry_json(arg, v);
	const uint64_t *x = element(v, i, j);
	cJSON *into = dim_shown(v, 0) ? element_json(s, v, i, j) : e;
	if (v->e.type == STATSEG_COMBINED_VECTOR) {
		cJSON_AddNumberToObject(into, "packets", (double)x[0]);
		cJSON_AddNumberToObject(into, "bytes", (double)x[1]);
	} else {
		cJSON_AddNumberToObject(into, "value", (double)x[0]);
	}
	if (into != e)
		cJSON_AddItemToArray(cJSON_GetObjectItem(e, "values"), into);
}

static void print_json(cJSON *root)
{
	char *t = cJSON_PrintUnformatted(root);
	printf("%s\n", t);
	free(t);
	cJSON_Delete(root);
}

static cJSON *json_root(const struct statseg_snapshot *s)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddNumberToObject(root, "epoch", (double)s->epoch);
	cJSON_AddNumberToObject(root, "updates", (double)s->updates);
	/* seconds since 1970: as nanoseconds it would not fit a double exactly */
	cJSON_AddNumberToObject(root, "update_time", (double)s->update_ns / 1e9);
	return root;
}

static int cmd_dump(const struct statseg_snapshot *s, const struct opts *o)
{
	if (!o->json) {
		for_each_element(s, dump_text, NULL);
		return 0;
	}
	cJSON *root = json_root(s);
	for_each_element(s, dump_json, cJSON_AddArrayToObject(root, "counters"));
	print_json(root);
	return 0;
}

/* ---- poll ---- */

struct rates {
	const struct statseg_snapshot *prev;
	double secs;
	bool json;
	cJSON *counters;
};

/* The same element in the previous reading: same entry, same shape and the
 * same labels (an interface deleted and made again is not the same). */
static const uint64_t *previous(const struct rates *r, const struct statseg_snapshot *s,
				const struct statseg_value *v, uint32_t i, uint32_t j)
{
	for (uint32_t n = 0; n < r->prev->n; n++) {
		const struct statseg_value *p = &r->prev->vals[n];
		if (strcmp(p->e.name, v->e.name) || p->e.dims[0] != v->e.dims[0] || p->e.dims[1] != v->e.dims[1])
			continue;
		for (unsigned k = 0; k < 2; k++) {
			const char *a = statseg_label(s, v, k, k ? j : i), *b = statseg_label(r->prev, p, k, k ? j : i);
			if ((a || b) && (!a || !b || strcmp(a, b)))
				return NULL;
		}
		return j < statseg_row_length(r->prev, p, i) ? element(p, i, j) : NULL;
	}
	return NULL;
}

static void rate_one(const struct statseg_snapshot *s, const struct statseg_value *v, uint32_t i, uint32_t j,
		     void *arg)
{
	struct rates *r = arg;
	const uint64_t *x = element(v, i, j), *p = previous(r, s, v, i, j);
	bool counter = is_counter(v->e.type);
	if (counter && !p)
		return;
	uint32_t words = statseg_elem_words(v->e.type);
	double val[2];
	for (uint32_t w = 0; w < words; w++)
		val[w] = counter ? (double)(x[w] - p[w]) / r->secs : (double)x[w];
	if (!r->json) {
		char name[STATSEG_NAME_SIZE + 2 * (STATSEG_LABEL_SIZE + 2)];
		element_name(s, v, i, j, name, sizeof(name));
		if (words == 2)
			printf("%s %.1f packets/s %.1f bytes/s\n", name, val[0], val[1]);
		else
			printf("%s %.1f%s\n", name, val[0], counter ? "/s" : "");
		return;
	}
	cJSON *e = entry_json(r->counters, v);
	cJSON *into = dim_shown(v, 0) ? element_json(s, v, i, j) : e;
	if (words == 2) {
		cJSON_AddNumberToObject(into, "packets_per_second", val[0]);
		cJSON_AddNumberToObject(into, "bytes_per_second", val[1]);
	} else {
		cJSON_AddNumberToObject(into, counter ? "per_second" : "value", val[0]);
	}
	if (into != e)
		cJSON_AddItemToArray(cJSON_GetObjectItem(e, "values"), into);
}

static int take(const struct statseg_client *c, struct opts *o, struct statseg_snapshot *s)
{
	char err[256];
	int rc = statseg_snapshot(c, match, o, 1000, s, err, sizeof(err));
	if (rc)
		fprintf(stderr, "sluice-stats: %s\n", err);
	return rc;
}

static int cmd_poll(const struct statseg_client *c, struct opts *o)
{
	struct statseg_snapshot prev, cur;
	if (take(c, o, &prev))
		return 1;
	for (uint64_t n = 0; !o->count || n < o->count; n++) {
		struct timespec ts = { .tv_sec = (time_t)(o->interval_ns / 1000000000ull),
				       .tv_nsec = (long)(o->interval_ns % 1000000000ull) };
		nanosleep(&ts, NULL);
		if (take(c, o, &cur)) {
			statseg_snapshot_free(&prev);
			return 1;
		}
		/* The writer's own clock: rates over the time between its copies. */
		double secs = (double)(int64_t)(cur.update_ns - prev.update_ns) / 1e9;
		struct rates r = { .prev = &prev, .secs = secs > 0 ? secs : (double)o->interval_ns / 1e9, .json = o->json };
		cJSON *root = NULL;
		if (o->json) {
			root = json_root(&cur);
			cJSON_AddNumberToObject(root, "seconds", r.secs);
			r.counters = cJSON_AddArrayToObject(root, "counters");
		} else {
			printf("# %.3f s\n", r.secs);
		}
		for_each_element(&cur, rate_one, &r);
		if (root)
			print_json(root);
		fflush(stdout);
		statseg_snapshot_free(&prev);
		prev = cur;
	}
	statseg_snapshot_free(&prev);
	return 0;
}

/* ---- metrics ---- */

static int cmd_metrics(const struct statseg_snapshot *s, const struct opts *o)
{
	char *text;
	size_t len;
	enum statseg_metrics_format f = o->openmetrics ? STATSEG_METRICS_OPENMETRICS : STATSEG_METRICS_TEXT;
	if (statseg_metrics_format(s, f, SLUICE_VERSION, &text, &len)) {
		fprintf(stderr, "sluice-stats: out of memory\n");
		return 1;
	}
	int rc = fwrite(text, 1, len, stdout) == len ? 0 : 1;
	free(text);
	return rc;
}

/* ---- main ---- */

static int parse_args(int argc, char **argv, struct opts *o, const char **cmd)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },   { "json", no_argument, NULL, 'j' },
		{ "regex", no_argument, NULL, 'r' },          { "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },    { "help", no_argument, NULL, 'h' },
		{ "openmetrics", no_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;
	while ((ch = getopt_long(argc, argv, "s:jri:n:oh", lo, NULL)) != -1) {
		switch (ch) {
		case 's': o->socket = optarg; break;
		case 'j': o->json = true; break;
		case 'r': o->regex = true; break;
		case 'i':
			if (parse_interval(optarg, &o->interval_ns))
				return -EINVAL;
			break;
		case 'n': o->count = strtoull(optarg, NULL, 10); break;
		case 'o': o->openmetrics = true; break;
		case 'h': usage(stdout); exit(0);
		default: return -EINVAL;
		}
	}
	if (optind >= argc || argc - optind > 2)
		return -EINVAL;
	*cmd = argv[optind];
	o->pattern = optind + 1 < argc ? argv[optind + 1] : NULL;
	if (o->regex && o->pattern && regcomp(&o->re, o->pattern, REG_EXTENDED | REG_NOSUB)) {
		fprintf(stderr, "sluice-stats: bad regular expression '%s'\n", o->pattern);
		return -EINVAL;
	}
	static const char *const cmds[] = { "ls", "dump", "poll", "metrics" };
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(*cmd, cmds[i]))
			return 0;
	return -EINVAL;
}

int main(int argc, char **argv)
{
	struct opts o = { .socket = SLUICE_DEFAULT_STATS_SOCKET, .interval_ns = 1000000000ull };
	const char *cmd;
	if (parse_args(argc, argv, &o, &cmd)) {
		usage(stderr);
		return 2;
	}
	struct statseg_client c;
	char err[256];
	if (statseg_connect(&c, o.socket, err, sizeof(err))) {
		fprintf(stderr, "sluice-stats: %s\n", err);
		return 1;
	}
	int rc;
	if (!strcmp(cmd, "poll")) {
		rc = cmd_poll(&c, &o);
	} else {
		struct statseg_snapshot s;
		if (take(&c, &o, &s)) {
			rc = 1;
		} else {
			rc = !strcmp(cmd, "ls")	       ? cmd_ls(&s, &o)
			     : !strcmp(cmd, "metrics") ? cmd_metrics(&s, &o)
						       : cmd_dump(&s, &o);
			statseg_snapshot_free(&s);
		}
	}
	statseg_disconnect(&c);
	if (o.regex && o.pattern)
		regfree(&o.re);
	return rc;
}
