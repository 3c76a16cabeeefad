/* The CLI's event in the event log (base/elog.h): each command run, by its
 * path ("show runtime", not its arguments: they may hold secrets or be
 * long), how long it took and its status. A command that takes the barrier
 * shows the barrier's span inside its own on the same track. */
#include "base/elog.h"
#include "cli/cli_private.h"

static struct elog_type cli_type = {
	.name = "cli", .category = "cli", .duration = true,
	.arg_name = { "command", "status" }, .arg_kind = { ELOG_ARG_STR, ELOG_ARG_INT },
};
ELOG_TYPE_REGISTER(cli_type)

void cli_elog_command(const char *path, uint64_t start, int rc)
{
	elog_duration(&cli_type, start, elog_string(path), (uint64_t)(int64_t)rc);
}
