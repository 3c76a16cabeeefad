/* Scripts of commands: the line loop shared by startup.conf's `unix { exec
 * FILE }` (cli_exec_file) and the runtime `exec FILE` command.
 *
 * A script runs command by command, each under the barrier it takes itself
 * (one barrier sync per command, never one around the whole script: the
 * datapath runs between them), and stops at the first failing command. A
 * failing command changes nothing (every command checks its words before it
 * changes anything), so after a failure the state is the script's lines
 * before it, applied: `exec` says how many and which line failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_private.h"
#include "base/util.h"

/* exec inside exec (a script that runs another): bounded, so that a script
 * that runs itself fails instead of exhausting the stack. */
#define EXEC_DEPTH_MAX 8

static __thread uint32_t exec_depth;

static bool skip_line(const char *line)
{
	line += strspn(line, " \t\r\n");
	return !*line || *line == '#';
}

int cli_exec_stream(FILE *f, const char *path, struct cli_session *s, void (*after)(struct cli_session *, void *),
		    void *ctx, struct cli_exec_result *r, char *err, size_t errlen)
{
	char *line = malloc(CLI_LINE_MAX + 2);
	int rc = line ? 0 : -ENOMEM;
	*r = (struct cli_exec_result){ 0, 0 };
	unsigned no = 1;
	for (; !rc && fgets(line, CLI_LINE_MAX + 2, f); no++) {
		size_t n = strcspn(line, "\r\n");
		if (n > CLI_LINE_MAX || (!line[n] && !feof(f))) {
			snprintf(err, errlen, "%s:%u: line longer than %d bytes", path, no, CLI_LINE_MAX);
			r->fail_line = no;
			rc = -EMSGSIZE;
			break;
		}
		line[n] = 0;
		if (skip_line(line))
			continue;
		if (s->out_mode == CLI_OUT_LOG)
			base_log("cli", "exec %s:%u: %s", path, no, line);
		rc = cli_session_run(s, line);
		if (after)
			after(s, ctx);
		if (rc) {
			snprintf(err, errlen, "%s:%u: %s: %s", path, no, line, strerror(-rc));
			r->fail_line = no;
		} else {
			r->n_applied++;
		}
	}
	if (rc == -ENOMEM && !line)
		snprintf(err, errlen, "%s: out of memory", path);
	free(line);
	return rc;
}

/* After each command of a runtime exec: its output to the caller's session. */
static void relay_output(struct cli_session *inner, void *outer)
{
	if (inner->out_len)
		cli_printf(outer, "%s", inner->out);
	inner->out_len = 0;
	if (inner->out)
		inner->out[0] = 0;
}

/* The script, opened for reading: under cli-file-dir when that is set (the
 * directory resolved, the file itself not a link), as files commands write
 * are; a script's lines are echoed in errors, so it must not be a way to
 * read files outside. */
static FILE *open_script(struct cli_session *s, const char *path, int *rc)
{
	char real[PATH_MAX];
	if ((*rc = cli_file_path(s, path, real, sizeof(real))))
		return NULL;
	int fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		*rc = cli_fail(s, -errno, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return f;
}

/*
 * sluice> exec /etc/sluice/routes.cli
 * 10.9.0.0/16 via 10.1.0.2 nul1
 * ...
 * exec /etc/sluice/routes.cli: 12 command(s) applied
 * sluice> exec bad.cli
 * error: no interface nul9
 * error: bad.cli:3: set interface state nul9 up: Invalid argument
 * exec bad.cli: 2 command(s) applied; line 3 failed and changed nothing; the lines after it were not run
 */
static int exec_script(struct cli_session *s, int argc, char **argv)
{
	const char *path = NULL;
	const struct cli_arg args[] = { { CLI_ARG_WORD, "FILE", &path, 0, 0 } };
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	if (rc)
		return rc;
	if (exec_depth >= EXEC_DEPTH_MAX)
		return cli_fail(s, -ELOOP, "%s: exec nested deeper than %d scripts", path, EXEC_DEPTH_MAX);
	FILE *f = open_script(s, path, &rc);
	if (!f)
		return rc == -EINVAL ? -ENOENT : rc; /* the file's fault, not the usage's */
	struct cli_session *inner = cli_session_create(s->graph, CLI_OUT_BUFFER, -1);
	if (!inner) {
		fclose(f);
		return cli_fail(s, -ENOMEM, "out of memory");
	}
	char err[CLI_LINE_MAX + PATH_MAX + 64];
	struct cli_exec_result r;
	exec_depth++;
	rc = cli_exec_stream(f, path, inner, relay_output, s, &r, err, sizeof(err));
	exec_depth--;
	cli_session_destroy(inner);
	fclose(f);
	if (!rc) {
		cli_printf(s, "exec %s: %u command(s) applied", path, r.n_applied);
		return 0;
	}
	cli_printf(s, "error: %s", err);
	cli_printf(s, "exec %s: %u command(s) applied; line %u failed and changed nothing; the lines after it were not run",
		   path, r.n_applied, r.fail_line);
	/* The script's failure, not exec's usage: -EINVAL would print it. */
	return rc == -EINVAL ? -ECANCELED : rc;
}

CLI_COMMAND(exec_cmd, "exec", "exec FILE",
	    "Run FILE's commands one by one (under cli-file-dir), stopping at the first that fails", exec_script)
