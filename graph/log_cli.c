/* `show logging` and `clear logging` (VPP's names): the last lines
 * base_log printed, from the log ring (base/log_ring.h). Reading copies the
 * ring under its own mutex; nothing here takes the barrier. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "base/log_ring.h"
#include "base/util.h"
#include "cli/cli.h"

/* "2026-12-02 23:40:01.123" (UTC), as VPP prints its log's times. */
static void format_time(char *buf, size_t len, uint64_t ns, char sep)
{
	time_t sec = (time_t)(ns / 1000000000ull);
	struct tm tm;
	gmtime_r(&sec, &tm);
	size_t n = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	if (n && n < len)
		buf[10] = sep;
	snprintf(buf + n, len - n, ".%03u", (unsigned)(ns / 1000000ull % 1000));
}

static cJSON *logging_json(struct log_ring *r, const struct log_ring_entry *e, uint32_t n, uint64_t lost)
{
	uint64_t logged, overwritten;
	log_ring_counters(r, &logged, &overwritten);
	cJSON *root = cJSON_CreateObject();
	cJSON *o = cJSON_AddObjectToObject(root, "logging");
	cJSON_AddNumberToObject(o, "size", r->size);
	cJSON_AddNumberToObject(o, "lost", (double)lost);
	cJSON_AddNumberToObject(o, "logged", (double)logged);
	cJSON_AddNumberToObject(o, "overwritten", (double)overwritten);
	cJSON *lines = cJSON_AddArrayToObject(o, "lines");
	for (uint32_t i = 0; i < n; i++) {
		char t[48];
		format_time(t, sizeof(t), e[i].time_ns, 'T');
		cJSON *l = cJSON_CreateObject();
		cJSON_AddNumberToObject(l, "seq", (double)e[i].seq);
		cJSON_AddStringToObject(l, "time", t);
		cJSON_AddStringToObject(l, "subsystem", e[i].subsystem);
		cJSON_AddStringToObject(l, "message", e[i].text);
		cJSON_AddBoolToObject(l, "cut", e[i].cut);
		cJSON_AddItemToArray(lines, l);
	}
	return root;
}

/*
 * sluice> show logging last 2
 * 2026-12-02 23:40:01.123 main: running (Ctrl-C or SIGTERM to stop)
 * 2026-12-02 23:40:07.410 cli: session 3 from /run/sluice/cli.sock
 * sluice> show logging json
 * {"logging": {"size": 1024, "lost": 0, "logged": 9, "overwritten": 0, "lines": [{"seq": 1, "time": "2026-12-02T23:40:00.981",
 *   "subsystem": "config", "message": "...", "cut": false}, ...]}}
 *
 * Times are UTC. A line cut to fit the ring ends in "..." (json: "cut").
 * lost: lines before the first shown that the ring no longer holds;
 * logged and overwritten count since start (clear logging included), as
 * the stats segment's /log/lines and /log/overwritten do.
 */
static int show_logging(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	uint32_t last = LOG_RING_SIZE;
	const struct cli_arg args[] = {
		{ CLI_ARG_KEY_U32, "last", &last, 1, LOG_RING_SIZE },
		{ CLI_ARG_FLAG, "json", &json, 0, 0 },
	};
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	if (rc)
		return rc;
	struct log_ring *r = base_log_ring();
	if (!r)
		return cli_fail(s, -ENOMEM, "the log ring could not be allocated at start");
	struct log_ring_entry *e = malloc((size_t)last * sizeof(*e));
	if (!e)
		return cli_fail(s, -ENOMEM, "out of memory");
	uint64_t lost = 0;
	uint32_t n = log_ring_read(r, 0, e, last, &lost);
	if (json) {
		cli_json_print(s, logging_json(r, e, n, lost));
		free(e);
		return 0;
	}
	if (lost)
		cli_printf(s, "(%llu older line(s) overwritten)", (unsigned long long)lost);
	for (uint32_t i = 0; i < n; i++) {
		char t[48];
		format_time(t, sizeof(t), e[i].time_ns, ' ');
		cli_printf(s, "%s %s: %s%s", t, e[i].subsystem, e[i].text, e[i].cut ? "..." : "");
	}
	if (!n)
		cli_printf(s, "no log lines");
	free(e);
	return 0;
}

static int clear_logging(struct cli_session *s, int argc, char **argv)
{
	(void)argv;
	if (argc)
		return cli_fail(s, -EINVAL, "clear logging takes no words");
	struct log_ring *r = base_log_ring();
	if (r)
		log_ring_clear(r);
	return 0;
}

CLI_COMMAND(show_logging_cmd, "show logging", "show logging [last N] [json]",
	    "The last log lines (the daemon's stderr), oldest first", show_logging)
CLI_COMMAND(clear_logging_cmd, "clear logging", "clear logging", "Forget the log lines show logging keeps",
	    clear_logging)
