/* `show statistics segment` (VPP's name): the stats segment's socket,
 * size and use, directory, epoch, copy passes and the readers it served
 * (app/statseg.h; docs/stats-segment.md has the layout). Runs under the
 * CLI's command lock, as the writer's passes do, so the figures are one
 * pass's.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "app/statseg.h"
#include "cli/cli.h"

static void utc_text(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;
	if (!ns || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, len, "never");
}

/*
 * sluice> show statistics segment
 * Stats segment: /run/sluice/stats.sock (memfd)
 *   size 33554432 bytes, used 81920 (0.2%), 212 entries, epoch 3
 *   copied every 1000 us, 4711 passes, last 2026-12-03 03:40:00 UTC
 *   readers served: 2
 */
static int show_statistics_segment(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	struct statseg_status st;
	if (statseg_status(&st))
		return cli_fail(s, -ENOENT, "the stats segment is not running");
	char last[40];
	utc_text(st.update_ns, last, sizeof(last));
	if (json) {
		cJSON *root = cJSON_CreateObject();
		cJSON *o = cJSON_AddObjectToObject(root, "statistics_segment");
		cJSON_AddStringToObject(o, "socket", st.socket);
		cJSON_AddNumberToObject(o, "size_bytes", (double)st.size);
		cJSON_AddNumberToObject(o, "used_bytes", (double)st.used);
		cJSON_AddNumberToObject(o, "entries", (double)st.n_entries);
		cJSON_AddNumberToObject(o, "epoch", (double)st.epoch);
		cJSON_AddNumberToObject(o, "updates", (double)st.updates);
		cJSON_AddNumberToObject(o, "last_update_unix_ns", (double)st.update_ns);
		cJSON_AddNumberToObject(o, "interval_ns", (double)st.interval_ns);
		cJSON_AddNumberToObject(o, "readers_served", (double)st.readers);
		cJSON_AddBoolToObject(o, "directory_full", st.directory_full);
		cli_json_print(s, root);
		return 0;
	}
	cli_printf(s, "Stats segment: %s (memfd)", st.socket);
	cli_printf(s, "  size %llu bytes, used %llu (%.1f%%), %llu entries, epoch %llu%s", (unsigned long long)st.size,
		   (unsigned long long)st.used, st.size ? 100.0 * (double)st.used / (double)st.size : 0.0,
		   (unsigned long long)st.n_entries, (unsigned long long)st.epoch,
		   st.directory_full ? " (the directory does not fit: statseg { size } larger)" : "");
	cli_printf(s, "  copied every %llu us, %llu passes, last %s", (unsigned long long)(st.interval_ns / 1000),
		   (unsigned long long)st.updates, last);
	cli_printf(s, "  readers served: %llu", (unsigned long long)st.readers);
	return 0;
}

CLI_COMMAND(show_statistics_segment_cmd, "show statistics segment", "show statistics segment [json]",
	    "The stats segment: socket, size, use, entries, epoch, readers (VPP's command)", show_statistics_segment)
