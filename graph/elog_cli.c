/* The event log's commands (VPP's names): show event-logger [N] [json],
 * event-logger clear, event-logger save FILE.
 *
 * Tracks are copied without stopping their writers (base/elog.h), so none
 * of these takes the barrier: looking at the log does not add to it.
 *
 * `save` writes the Chrome Trace Event format ("Trace Event Format",
 * https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU),
 * which Perfetto (ui.perfetto.dev) and chrome://tracing open: the object
 * form {"traceEvents": [...], "displayTimeUnit": "ns"}, one track (tid) per
 * thread named by "M" thread_name events, spans as "X" events with ts and
 * dur in microseconds, instants as "i" with thread scope ("s": "t").
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/elog.h"
#include "cli/cli.h"

#define ELOG_SHOW_DEFAULT 100

/* ---- reading ---- */

static int by_time(const void *x, const void *y)
{
	const struct elog_event *a = x, *b = y;
	if (a->ticks != b->ticks)
		return (int64_t)(a->ticks - b->ticks) < 0 ? -1 : 1;
	return (int)a->track - (int)b->track;
}

/* The newest max events of all tracks, oldest first. NULL when out of
 * memory; *n may be 0. */
static struct elog_event *elog_newest(uint32_t max, uint32_t *n)
{
	size_t total = 0;
	for (uint32_t t = 0; t < ELOG_MAX_TRACKS; t++)
		total += MIN(elog_track_count(t), max);
	struct elog_event *ev = malloc((total + ELOG_MAX_TRACKS + 1) * sizeof(*ev));
	if (!ev)
		return NULL;
	size_t got = 0;
	for (uint32_t t = 0; t < ELOG_MAX_TRACKS && got < total; t++)
		got += elog_track_copy(t, ev + got, (uint32_t)MIN(max, total - got));
	qsort(ev, got, sizeof(*ev), by_time);
	*n = (uint32_t)MIN(got, max);
	if (got > max)
		memmove(ev, ev + got - max, (size_t)max * sizeof(*ev));
	return ev;
}

static cJSON *event_args_json(const struct elog_event *e)
{
	const struct elog_type *t = elog_type_get(e->type);
	cJSON *args = cJSON_CreateObject();
	for (uint32_t i = 0; t && i < 3; i++) {
		uint64_t num = 0;
		const char *str = NULL;
		enum elog_arg_kind k = elog_arg(e, i, &num, &str);
		if (k == ELOG_ARG_STR)
			cJSON_AddStringToObject(args, t->arg_name[i], str);
		else if (k == ELOG_ARG_INT)
			cJSON_AddNumberToObject(args, t->arg_name[i], (double)(int64_t)num);
		else if (k != ELOG_ARG_NONE)
			cJSON_AddNumberToObject(args, t->arg_name[i], (double)num);
	}
	return args;
}

/* ---- show event-logger ---- */

static void event_args_text(const struct elog_event *e, char *buf, size_t len)
{
	const struct elog_type *t = elog_type_get(e->type);
	size_t off = 0;
	buf[0] = 0;
	for (uint32_t i = 0; t && i < 3 && off < len; i++) {
		uint64_t num = 0;
		const char *str = NULL;
		enum elog_arg_kind k = elog_arg(e, i, &num, &str);
		const char *sep = off ? " " : "";
		if (k == ELOG_ARG_STR)
			off += (size_t)snprintf(buf + off, len - off, "%s%s \"%s\"", sep, t->arg_name[i], str);
		else if (k == ELOG_ARG_INT)
			off += (size_t)snprintf(buf + off, len - off, "%s%s %lld", sep, t->arg_name[i], (long long)num);
		else if (k != ELOG_ARG_NONE)
			off += (size_t)snprintf(buf + off, len - off, "%s%s %llu", sep, t->arg_name[i],
						(unsigned long long)num);
	}
}

static void show_text(struct cli_session *s, const struct elog_event *ev, uint32_t n)
{
	static const struct cli_table_col cols[] = { { "Time", true }, { "Thread", false }, { "Event", false },
						     { "Duration", true }, { "Args", false } };
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	for (uint32_t i = 0; t && i < n; i++) {
		const struct elog_type *ty = elog_type_get(ev[i].type);
		char args[256];
		event_args_text(&ev[i], args, sizeof(args));
		cli_table_cell(t, "%.6f", elog_ticks_to_ns(ev[i].ticks) / 1e9);
		cli_table_cell(t, "%s", elog_track_name(ev[i].track));
		cli_table_cell(t, "%s", ty ? ty->name : "?");
		if (ty && ty->duration)
			cli_table_cell(t, "%.1fus", elog_ticks_ns(ev[i].c) / 1e3);
		else
			cli_table_cell(t, "-");
		cli_table_cell(t, "%s", args);
	}
	cli_table_print(s, t);
}

static cJSON *show_json(const struct elog_event *ev, uint32_t n)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(root, "events");
	for (uint32_t i = 0; i < n; i++) {
		const struct elog_type *ty = elog_type_get(ev[i].type);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "time_ns", llround(elog_ticks_to_ns(ev[i].ticks)));
		cJSON_AddNumberToObject(o, "track", ev[i].track);
		cJSON_AddStringToObject(o, "thread", elog_track_name(ev[i].track));
		cJSON_AddStringToObject(o, "event", ty ? ty->name : "?");
		cJSON_AddStringToObject(o, "category", ty ? ty->category : "?");
		if (ty && ty->duration)
			cJSON_AddNumberToObject(o, "duration_ns", llround(elog_ticks_ns(ev[i].c)));
		cJSON_AddItemToObject(o, "args", event_args_json(&ev[i]));
		cJSON_AddItemToArray(arr, o);
	}
	return root;
}

/*
 * sluice> show event-logger 3
 *     Time Thread  Event   Duration Args
 * 2.301533 control cli       40.2us command "clear runtime" status 0
 * 2.301540 control barrier   18.6us threads 2 park_ns 17311
 * 2.950012 worker 0 drops         - reason "ip4-input: ttl expired" count 256
 *
 * The newest N events of every thread (default 100), oldest first; time in
 * seconds since the log began. `json` prints {"events": [{"time_ns",
 * "track", "thread", "event", "category", "duration_ns" (spans), "args"}]}.
 */
static int show_event_logger(struct cli_session *s, int argc, char **argv)
{
	uint32_t max = ELOG_SHOW_DEFAULT;
	bool json = cli_take_flag(&argc, argv, "json");
	const struct cli_arg args[] = { { CLI_ARG_U32, "N", &max, 1, ELOG_SIZE_MAX } };
	int rc = cli_args_parse(s, argc, argv, args, argc ? 1 : 0);
	if (rc)
		return rc;
	uint32_t n = 0;
	struct elog_event *ev = elog_newest(max, &n);
	if (!ev)
		return cli_fail(s, -ENOMEM, "out of memory");
	if (json)
		cli_json_print(s, show_json(ev, n));
	else if (!n)
		cli_printf(s, "no events");
	else
		show_text(s, ev, n);
	free(ev);
	return 0;
}

/*
 * sluice> event-logger clear
 * event log cleared
 */
static int event_logger_clear(struct cli_session *s, int argc, char **argv)
{
	int rc = cli_args_parse(s, argc, argv, NULL, 0);
	if (rc)
		return rc;
	elog_clear();
	cli_printf(s, "event log cleared");
	return 0;
}

/* ---- event-logger save: Trace Event JSON ---- */

/* Microseconds to the nanosecond: cJSON then prints 4738.486, not 17 digits. */
static double us3(double ns)
{
	return (double)llround(ns) / 1e3;
}

static cJSON *trace_event(const struct elog_event *e, int pid)
{
	const struct elog_type *ty = elog_type_get(e->type);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", ty ? ty->name : "?");
	cJSON_AddStringToObject(o, "cat", ty ? ty->category : "?");
	cJSON_AddStringToObject(o, "ph", ty && ty->duration ? "X" : "i");
	cJSON_AddNumberToObject(o, "ts", us3(elog_ticks_to_ns(e->ticks)));
	if (ty && ty->duration)
		cJSON_AddNumberToObject(o, "dur", us3(elog_ticks_ns(e->c)));
	else
		cJSON_AddStringToObject(o, "s", "t");
	cJSON_AddNumberToObject(o, "pid", pid);
	cJSON_AddNumberToObject(o, "tid", e->track);
	cJSON_AddItemToObject(o, "args", event_args_json(e));
	return o;
}

/* A metadata event: what Perfetto calls the process or a track. */
static cJSON *trace_meta(const char *what, int pid, uint32_t tid, const char *name)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", what);
	cJSON_AddStringToObject(o, "ph", "M");
	cJSON_AddNumberToObject(o, "ts", 0);
	cJSON_AddNumberToObject(o, "pid", pid);
	cJSON_AddNumberToObject(o, "tid", tid);
	cJSON_AddItemToObject(o, "args", cJSON_CreateObject());
	cJSON_AddStringToObject(cJSON_GetObjectItem(o, "args"), "name", name);
	return o;
}

/* One event a time, printed by cJSON and written out: the file may hold
 * 65 tracks of up to ELOG_SIZE_MAX events, which as one cJSON tree would
 * take some hundred bytes of nodes per event. */
struct trace_writer {
	FILE *f;
	uint64_t n;
	bool ok;
};

static void trace_put(struct trace_writer *w, cJSON *o)
{
	char *text = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	if (!text || fputs(w->n++ ? ",\n" : "\n", w->f) < 0 || fputs(text, w->f) < 0)
		w->ok = false;
	free(text);
}

static int trace_track(struct trace_writer *w, uint32_t track, int pid, struct elog_event *buf)
{
	uint32_t n = elog_track_copy(track, buf, elog_size());
	if (!n && !elog_track_name(track)[0])
		return 0;
	trace_put(w, trace_meta("thread_name", pid, track, elog_track_name(track)));
	for (uint32_t i = 0; i < n; i++)
		trace_put(w, trace_event(&buf[i], pid));
	return (int)n;
}

static void trace_write(struct trace_writer *w)
{
	int pid = (int)getpid();
	struct elog_event *buf = malloc((size_t)elog_size() * sizeof(*buf));
	if (!buf) {
		w->ok = false;
		return;
	}
	w->ok = fputs("{\"traceEvents\":[", w->f) >= 0;
	trace_put(w, trace_meta("process_name", pid, 0, "sluice"));
	uint64_t events = 0;
	for (uint32_t t = 0; t < ELOG_MAX_TRACKS; t++)
		events += (uint64_t)trace_track(w, t, pid, buf);
	free(buf);
	cJSON *other = cJSON_CreateObject();
	cJSON_AddStringToObject(other, "source", "sluice event-logger");
	cJSON_AddNumberToObject(other, "events", (double)events);
	char *text = cJSON_PrintUnformatted(other);
	cJSON_Delete(other);
	if (!text || fprintf(w->f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":%s}\n", text) < 0)
		w->ok = false;
	free(text);
	w->n = events;
}

/*
 * sluice> event-logger save /var/lib/sluice/elog.json
 * saved 1532 events to /var/lib/sluice/elog.json
 *
 * Chrome Trace Event JSON, for ui.perfetto.dev or chrome://tracing. With
 * cli-file-dir set, FILE must lie under it (as for `trace save`).
 */
static int event_logger_save(struct cli_session *s, int argc, char **argv)
{
	const char *arg = NULL;
	char path[PATH_MAX];
	const struct cli_arg args[] = { { CLI_ARG_WORD, "FILE", &arg, 0, 0 } };
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	if (rc)
		return rc;
	/* Checked and opened in one step (cli-file-dir), then truncated. */
	struct trace_writer w = { 0 };
	rc = cli_file_fopen(s, arg, path, sizeof(path), &w.f);
	if (rc)
		return rc;
	trace_write(&w);
	rc = fclose(w.f) == 0 && w.ok ? 0 : -(errno ? errno : EIO);
	if (rc)
		return cli_fail(s, rc, "cannot write %s: %s", path, strerror(-rc));
	cli_printf(s, "saved %llu events to %s", (unsigned long long)w.n, path);
	return 0;
}

CLI_COMMAND(show_event_logger_cmd, "show event-logger", "show event-logger [N] [json]",
	    "The newest N events of the event log, every thread", show_event_logger)
CLI_COMMAND(event_logger_clear_cmd, "event-logger clear", "event-logger clear", "Forget every logged event",
	    event_logger_clear)
CLI_COMMAND(event_logger_save_cmd, "event-logger save", "event-logger save FILE",
	    "Write the event log to FILE as Chrome Trace Event JSON (Perfetto)", event_logger_save)
