/* Unit suite for cli/: output helpers, registration and argument parsing
 * (through cli_exec_line), exec files, and the server's socket and one-shot
 * protocol on a temporary socket. No graph runs here.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tests/check_run.h"
#include "cli/cli.h"
#include "cli/cli_private.h"

/* ---- test commands ---- */

static int n_echo_runs; /* changes only when a command succeeds */

/*
 * sluice> test echo hello max 3 json
 * {"word": "hello", "max": 3, "json": true}
 */
static int test_echo(struct cli_session *s, int argc, char **argv)
{
	const char *word = NULL;
	uint32_t max = 7;
	bool json = false;
	const struct cli_arg args[] = { { CLI_ARG_WORD, "WORD", &word, 0, 0 },
					{ CLI_ARG_KEY_U32, "max", &max, 1, 100 },
					{ CLI_ARG_FLAG, "json", &json, 0, 0 } };
	int rc = cli_args_parse(s, argc, argv, args, 3);
	if (rc)
		return rc;
	n_echo_runs++;
	if (json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "word", word);
		cJSON_AddNumberToObject(o, "max", max);
		cJSON_AddBoolToObject(o, "json", json);
		cli_json_print(s, o);
	} else
		cli_printf(s, "echo %s max %u\n", word, max);
	return 0;
}

/*
 * sluice> test fail
 * error: always fails
 */
static int test_fail(struct cli_session *s, int argc, char **argv)
{
	(void)argc, (void)argv;
	return cli_fail(s, -EIO, "always fails");
}

/*
 * sluice> test write /srv/x.txt
 * wrote /srv/x.txt
 */
static int test_write(struct cli_session *s, int argc, char **argv)
{
	char path[4096];
	if (argc != 1)
		return cli_fail(s, -EINVAL, "expected FILE");
	int fd = cli_file_open(s, argv[0], path, sizeof(path));
	if (fd < 0)
		return fd;
	bool ok = ftruncate(fd, 0) == 0 && write(fd, "x\n", 2) == 2;
	close(fd);
	if (!ok)
		return cli_fail(s, -EIO, "%s: cannot write", path);
	cli_printf(s, "wrote %s", path);
	return 0;
}

/*
 * sluice> test opt json b
 * name b json 1
 */
static int test_opt(struct cli_session *s, int argc, char **argv)
{
	bool json = cli_take_flag(&argc, argv, "json");
	const char *name;
	int rc = cli_opt_word_arg(s, argc, argv, "NAME", &name);
	if (rc)
		return rc;
	cli_printf(s, "name %s json %d", name ? name : "-", json);
	return 0;
}

CLI_COMMAND(opt_cmd, "test opt", "test opt [NAME] [json]", "An optional word and json anywhere", test_opt)
CLI_COMMAND(write_cmd, "test write", "test write FILE", "Write a file through cli_file_open", test_write)
CLI_COMMAND(echo_cmd, "test echo", "test echo WORD [max N] [json]", "Echo a word", test_echo)
CLI_COMMAND(fail_cmd, "test fail", "test fail", "Fail on purpose", test_fail)

/* Aliases (CLI_ALIAS): VPP-style names translated onto the commands above. */
CLI_ALIAS(vpp_echo_alias, "test vpp-echo", "test vpp-echo WORD [maximum N] [verbose] [json]", "test echo",
	  "maximum=max verbose=")
CLI_ALIAS(hello_alias, "test hello", "test hello [json]", "test echo hello max 9", NULL)
CLI_ALIAS(opt_special_alias, "test opt special", "test opt special", "test echo special", NULL)
CLI_ALIAS(gone_alias, "test gone", "test gone", "test nothing here", NULL)
CLI_ALIAS(failing_alias, "test failing", "test failing", "test fail", NULL)

static int run(const char *line, char **out)
{
	return cli_exec_line(line, out);
}

/* ---- tables, DOT ---- */

START_TEST(table_aligns_columns)
{
	const struct cli_table_col cols[] = { { "Name", false }, { "Calls", true }, { "Note", false } };
	struct cli_table *t = cli_table_create(cols, 3);
	cli_table_cell(t, "pg-input");
	cli_table_cell(t, "%d", 5);
	cli_table_cell(t, "x");
	cli_table_cell(t, "a");
	cli_table_cell(t, "%d", 123456);
	cli_table_cell(t, "%s", "");
	char *text = cli_table_format(t);
	ck_assert_str_eq(text, "Name       Calls  Note\n"
			       "pg-input       5  x\n"
			       "a         123456");
	free(text);
	cli_table_free(t);
}
END_TEST

START_TEST(table_short_last_row)
{
	const struct cli_table_col cols[] = { { "A", false }, { "B", true } };
	struct cli_table *t = cli_table_create(cols, 2);
	cli_table_cell(t, "long value");
	char *text = cli_table_format(t);
	ck_assert_str_eq(text, "A           B\nlong value");
	free(text);
	cli_table_free(t);
}
END_TEST

START_TEST(dot_escapes)
{
	struct cli_dot *d = cli_dot_create("g");
	cli_dot_statement(d, "rankdir=LR");
	cli_dot_node(d, "a\"b", "line1\nline2 \\", "shape=box");
	cli_dot_edge(d, "a\"b", "c", "5 pkts", NULL);
	cli_dot_edge(d, "c", "d", NULL, NULL);
	char *text = cli_dot_finish(d);
	ck_assert_str_eq(text, "digraph \"g\" {\n"
			       "  rankdir=LR;\n"
			       "  \"a\\\"b\" [label=\"line1\\nline2 \\\\\", shape=box];\n"
			       "  \"a\\\"b\" -> \"c\" [label=\"5 pkts\"];\n"
			       "  \"c\" -> \"d\";\n"
			       "}");
	free(text);
}
END_TEST

/* ---- registration and parsing ---- */

START_TEST(command_runs_with_args)
{
	char *out;
	ck_assert_int_eq(run("test echo hello max 3", &out), 0);
	ck_assert_str_eq(out, "echo hello max 3\n");
	free(out);
	ck_assert_int_eq(run("test echo hi", &out), 0);
	ck_assert_str_eq(out, "echo hi max 7\n");
	free(out);
}
END_TEST

START_TEST(abbreviations_expand)
{
	char *out;
	ck_assert_int_eq(run("te ec abc", &out), 0);
	ck_assert_str_eq(out, "echo abc max 7\n");
	free(out);
}
END_TEST

/* Filters named by an abbreviation filter exactly as spelled in full (the
 * session writes the name out: libcli leaks an abbreviated regex filter's
 * pattern, which the ASan build's leak check at exit would report). */
START_TEST(abbreviated_filters_match_full)
{
	static const char *const pairs[][2] = {
		{ "help | inc echo", "help | include echo" },
		{ "help |in  echo", "help | include echo" },
		{ "help | ex echo", "help | exclude echo" },
		{ "help | gr write", "help | grep write" },
		{ "help | eg wr.te", "help | egrep wr.te" },
	};
	char *all, *out;
	ck_assert_int_eq(run("help", &all), 0);
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		char *a, *b;
		ck_assert_int_eq(run(pairs[i][0], &a), 0);
		ck_assert_int_eq(run(pairs[i][1], &b), 0);
		ck_assert_str_eq(a, b);
		ck_assert(*a && strcmp(a, all)); /* it filtered something, not everything */
		free(a);
		free(b);
	}
	free(all);
	/* Ambiguous ("e": exclude or egrep) stays libcli's error, as before. */
	ck_assert_int_ne(run("help | e echo", &out), 0);
	free(out);
}
END_TEST

START_TEST(json_output_parses)
{
	char *out;
	ck_assert_int_eq(run("test echo w json max 9", &out), 0);
	cJSON *o = cJSON_Parse(out);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(cJSON_GetObjectItem(o, "word")->valuestring, "w");
	ck_assert_int_eq(cJSON_GetObjectItem(o, "max")->valueint, 9);
	cJSON_Delete(o);
	free(out);
}
END_TEST

/* `json` before, after or without the optional word; once only. */
START_TEST(take_flag_anywhere)
{
	static const struct {
		const char *line, *want;
		int rc;
	} cases[] = {
		{ "test opt json b", "name b json 1\n", 0 }, { "test opt b json", "name b json 1\n", 0 },
		{ "test opt json", "name - json 1\n", 0 },   { "test opt b", "name b json 0\n", 0 },
		{ "test opt", "name - json 0\n", 0 },        { "test opt json json", "name json json 1\n", 0 },
		{ "test opt a json b", NULL, -EINVAL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out;
		ck_assert_int_eq(run(cases[i].line, &out), cases[i].rc);
		if (cases[i].want)
			ck_assert_str_eq(out, cases[i].want);
		free(out);
	}
}
END_TEST

static void count_reg(const struct cli_command_reg *reg, void *ctx)
{
	(void)reg;
	(*(int *)ctx)++;
}

/* `help json` is the registry: every command once, in path order, with
 * its usage and help. */
START_TEST(help_json_lists_registry)
{
	char *out;
	ck_assert_int_eq(run("help json", &out), 0);
	cJSON *o = cJSON_Parse(out);
	ck_assert_ptr_nonnull(o);
	const cJSON *cmds = cJSON_GetObjectItem(o, "commands");
	int n = 0;
	cli_command_foreach(count_reg, &n);
	ck_assert_int_eq(cJSON_GetArraySize(cmds), n);
	ck_assert_int_ge(n, 4);
	const cJSON *c, *prev = NULL, *echo = NULL;
	cJSON_ArrayForEach(c, cmds)
	{
		const char *path = cJSON_GetObjectItem(c, "path")->valuestring;
		if (prev)
			ck_assert_int_lt(strcmp(cJSON_GetObjectItem(prev, "path")->valuestring, path), 0);
		if (!strcmp(path, "test echo"))
			echo = c;
		prev = c;
	}
	ck_assert_ptr_nonnull(echo);
	ck_assert_str_eq(cJSON_GetObjectItem(echo, "usage")->valuestring, "test echo WORD [max N] [json]");
	ck_assert_str_eq(cJSON_GetObjectItem(echo, "help")->valuestring, "Echo a word");
	cJSON_Delete(o);
	free(out);
}
END_TEST

/* ---- aliases ---- */

/* The translation itself: the target's registered path is found, its
 * fixed words come first, mapped words change, dropped ones go, the rest
 * keep their order. */
START_TEST(alias_translate_words)
{
	static const struct cli_alias a = { .target = "test echo one", .words = "maximum=max verbose= brief=" };
	char *argv[] = { "verbose", "maximum", "3", "json", "brief", "x" };
	const struct cli_command_reg *target = NULL;
	char **out = NULL;
	int n = -1;
	ck_assert_int_eq(cli_alias_translate(&a, 6, argv, &target, &n, &out), 0);
	ck_assert_ptr_nonnull(target);
	ck_assert_str_eq(target->path, "test echo");
	ck_assert_int_eq(n, 5);
	const char *want[] = { "one", "max", "3", "json", "x" };
	for (int i = 0; i < n; i++)
		ck_assert_str_eq(out[i], want[i]);
	ck_assert_ptr_null(out[n]);
	free(out);

	static const struct cli_alias none = { .target = "test", .words = NULL };
	ck_assert_int_eq(cli_alias_translate(&none, 0, argv, &target, &n, &out), -ENOENT);
	static const struct cli_alias bare = { .target = "test fail", .words = NULL };
	ck_assert_int_eq(cli_alias_translate(&bare, 0, argv, &target, &n, &out), 0);
	ck_assert_str_eq(target->path, "test fail");
	ck_assert_int_eq(n, 0);
	ck_assert_ptr_null(out[0]);
	free(out);
}
END_TEST

START_TEST(alias_runs_target)
{
	char *out;
	int runs = n_echo_runs;
	ck_assert_int_eq(run("test vpp-echo abc maximum 3 verbose", &out), 0);
	ck_assert_str_eq(out, "echo abc max 3\n");
	free(out);
	ck_assert_int_eq(n_echo_runs, runs + 1);
	ck_assert_int_eq(run("te vpp abc", &out), 0); /* abbreviated, as any command */
	ck_assert_str_eq(out, "echo abc max 7\n");
	free(out);
	ck_assert_msg(run("test hello", &out) == 0, "%s", out);
	ck_assert_str_eq(out, "echo hello max 9\n");
	free(out);
	ck_assert_int_eq(run("test hello json", &out), 0);
	cJSON *o = cJSON_Parse(out);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(cJSON_GetObjectItem(o, "word")->valuestring, "hello");
	ck_assert_int_eq(cJSON_GetObjectItem(o, "max")->valueint, 9);
	cJSON_Delete(o);
	free(out);
}
END_TEST

/* An alias under an existing command's path takes its word: VPP's meaning
 * wins (`show node counters` beside `show node NAME`); other words still
 * reach the command. */
START_TEST(alias_beside_command_wins)
{
	char *out;
	ck_assert_int_eq(run("test opt special", &out), 0);
	ck_assert_str_eq(out, "echo special max 7\n");
	free(out);
	ck_assert_int_eq(run("test opt spec", &out), 0);
	ck_assert_str_eq(out, "echo special max 7\n");
	free(out);
	ck_assert_int_eq(run("test opt other", &out), 0);
	ck_assert_str_eq(out, "name other json 0\n");
	free(out);
	ck_assert_int_eq(run("test opt", &out), 0);
	ck_assert_str_eq(out, "name - json 0\n");
	free(out);
}
END_TEST

/* Abbreviations as VPP takes them, in sessions that never enter libcli's
 * loop too: a prefix two words share is refused with the candidates, a
 * word typed whole wins over a longer one it begins. */
START_TEST(abbreviations_must_be_unique)
{
	char *out;
	ck_assert_int_eq(run("test fai", &out), -EINVAL);
	ck_assert_msg(strstr(out, "error: 'test fai' is ambiguous") && strstr(out, "test fail ") &&
			      strstr(out, "test failing ") && !strstr(out, "test echo"),
		      "%s", out);
	ck_assert_msg(!strstr(out, "always fails"), "%s", out);
	free(out);
	ck_assert_int_eq(run("test fail", &out), -EIO);
	ck_assert_str_eq(out, "error: always fails\n");
	free(out);
	ck_assert_int_eq(run("test faili", &out), -EIO);
	ck_assert_str_eq(out, "error: always fails\n");
	free(out);
}
END_TEST

/* Bad words: the alias's usage and what it runs as; nothing run. A target
 * this build lacks: a clear error. */
START_TEST(alias_errors)
{
	char *out;
	int runs = n_echo_runs;
	ck_assert_int_eq(run("test vpp-echo", &out), -EINVAL);
	ck_assert_msg(strstr(out, "missing WORD") && strstr(out, "usage: test vpp-echo WORD [maximum N]") &&
			      strstr(out, "(runs as: test echo WORD [max N] [json])"),
		      "%s", out);
	free(out);
	ck_assert_int_eq(run("test vpp-echo abc maximum 0", &out), -EINVAL);
	ck_assert_msg(strstr(out, "max: '0' is not a number in 1..100"), "%s", out);
	free(out);
	ck_assert_int_eq(n_echo_runs, runs);
	ck_assert_int_eq(run("test gone", &out), -ENOENT);
	ck_assert_str_eq(out, "error: 'test gone' is VPP's name for 'test nothing here', which this build does not have\n");
	free(out);
	ck_assert_int_eq(run("help json", &out), 0);
	ck_assert_msg(strstr(out, "\"VPP's name for 'test echo'\""), "%s", out);
	free(out);
}
END_TEST

/* Each bad line: non-zero status, a reason and the usage, and no run. */
static const char *const bad_lines[] = {
	"test echo",                 /* missing positional */
	"test echo a b",             /* extra word */
	"test echo a max",           /* keyword without value */
	"test echo a max 0",         /* below range */
	"test echo a max 101",       /* above range */
	"test echo a max 5x",        /* not a number */
	"test echo a max -1",        /* negative */
};

START_TEST(bad_arguments_print_usage)
{
	char *out;
	int before = n_echo_runs;
	ck_assert_int_eq(run(bad_lines[_i], &out), -EINVAL);
	ck_assert_msg(strstr(out, "error: "), "no reason in '%s'", out);
	ck_assert_msg(strstr(out, "usage: test echo WORD [max N] [json]"), "no usage in '%s'", out);
	ck_assert_int_eq(n_echo_runs, before);
	free(out);
}
END_TEST

START_TEST(unknown_commands_fail)
{
	char *out;
	ck_assert_int_lt(run("bogus", &out), 0);
	ck_assert_msg(strlen(out) > 0, "nothing printed");
	free(out);
	ck_assert_int_eq(run("test bogus", &out), -EINVAL);
	ck_assert_msg(strstr(out, "unknown command 'test bogus'") && strstr(out, "test echo WORD"), "%s", out);
	free(out);
	ck_assert_int_eq(run("test", &out), -EINVAL);
	ck_assert_msg(strstr(out, "test fail"), "%s", out);
	free(out);
	ck_assert_int_eq(run("", &out), -EINVAL);
	free(out);
}
END_TEST

START_TEST(failure_status_and_help)
{
	char *out;
	ck_assert_int_eq(run("test fail", &out), -EIO);
	ck_assert_str_eq(out, "error: always fails\n");
	free(out);
	ck_assert_int_eq(run("test echo ?", &out), 0);
	ck_assert_msg(strstr(out, "usage: test echo") && strstr(out, "Echo a word"), "%s", out);
	free(out);
	ck_assert_int_eq(run("help", &out), 0);
	ck_assert_msg(strstr(out, "test echo WORD [max N] [json]") && strstr(out, "Fail on purpose"), "%s", out);
	free(out);
}
END_TEST

START_TEST(overlong_line_rejected)
{
	char *line = malloc(CLI_LINE_MAX + 2);
	memset(line, 'a', CLI_LINE_MAX + 1);
	line[CLI_LINE_MAX + 1] = 0;
	ck_assert_int_eq(run(line, NULL), -EMSGSIZE);
	free(line);
}
END_TEST

/* ---- the file directory ---- */

static bool exists(const char *dir, const char *name)
{
	char p[256];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return lstat(p, &st) == 0;
}

/* Under DIR/in as cli-file-dir: plain names and `..` that stay inside are
 * written; `..` out, a symlinked directory out, a symlink as the file, a
 * missing parent and a name that is no file name are refused with the
 * reason, and nothing is written. Without a file directory, anywhere. */
START_TEST(file_dir_confines_writes)
{
	char d[] = "/tmp/cli-fdir-XXXXXX", p[256], err[256], *out;
	ck_assert_ptr_nonnull(mkdtemp(d));
	const char *dirs[] = { "in", "in/sub", "out" };
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", d, dirs[i]);
		ck_assert_int_eq(mkdir(p, 0700), 0);
	}
	snprintf(p, sizeof(p), "%s/in/link-out", d);
	ck_assert_int_eq(symlink("../out", p), 0);
	snprintf(p, sizeof(p), "%s/in/evil", d);
	ck_assert_int_eq(symlink("../out/evil-target", p), 0);
	snprintf(p, sizeof(p), "%s/in", d);
	ck_assert_int_eq(cli_set_file_dir(p, err, sizeof(err)), 0);

	char line[512], want[512];
	snprintf(line, sizeof(line), "test write %s/in/a.txt", d);
	ck_assert_int_eq(run(line, &out), 0);
	snprintf(want, sizeof(want), "wrote %s/in/a.txt\n", d);
	ck_assert_str_eq(out, want);
	free(out);
	snprintf(line, sizeof(line), "test write %s/in/sub/../b.txt", d);
	ck_assert_int_eq(run(line, &out), 0);
	snprintf(want, sizeof(want), "wrote %s/in/b.txt\n", d);
	ck_assert_str_eq(out, want);
	free(out);
	ck_assert(exists(d, "in/a.txt") && exists(d, "in/b.txt"));

	snprintf(line, sizeof(line), "test write %s/in/../out/c.txt", d);
	ck_assert_int_eq(run(line, &out), -EACCES);
	snprintf(want, sizeof(want), "error: %s/in/../out/c.txt: outside cli-file-dir %s/in\n", d, d);
	ck_assert_str_eq(out, want);
	free(out);
	snprintf(line, sizeof(line), "test write %s/in/link-out/d.txt", d);
	ck_assert_int_eq(run(line, &out), -EACCES);
	ck_assert_msg(strstr(out, "outside cli-file-dir"), "%s", out);
	free(out);
	snprintf(line, sizeof(line), "test write %s/in/evil", d);
	ck_assert_int_eq(run(line, &out), -EACCES);
	snprintf(want, sizeof(want), "error: %s/in/evil: is a symbolic link; cli-file-dir takes plain files only\n", d);
	ck_assert_str_eq(out, want);
	free(out);
	snprintf(line, sizeof(line), "test write %s/in/sub", d);
	ck_assert_int_eq(run(line, &out), -EACCES);
	free(out);
	snprintf(line, sizeof(line), "test write %s/in/..", d);
	ck_assert_int_eq(run(line, &out), -EINVAL);
	ck_assert_msg(strstr(out, "expected a file name at the end"), "%s", out);
	free(out);
	snprintf(line, sizeof(line), "test write %s/in/nodir/e.txt", d);
	ck_assert_int_eq(run(line, &out), -ENOENT);
	free(out);
	ck_assert_int_eq(run("test write /tmp/cli-fdir-never.txt", NULL), -EACCES);
	ck_assert(!exists(d, "out/c.txt") && !exists(d, "out/d.txt") && !exists(d, "out/evil-target"));
	ck_assert(!exists("/tmp", "cli-fdir-never.txt"));

	snprintf(p, sizeof(p), "%s/in/a.txt", d);
	ck_assert_int_eq(cli_set_file_dir(p, err, sizeof(err)), -ENOTDIR);
	ck_assert_int_eq(cli_set_file_dir("", err, sizeof(err)), 0);
	snprintf(line, sizeof(line), "test write %s/out/f.txt", d);
	ck_assert_int_eq(run(line, NULL), 0);
	ck_assert(exists(d, "out/f.txt"));

	const char *files[] = { "in/a.txt", "in/b.txt", "in/link-out", "in/evil", "out/f.txt" };
	for (int i = 0; i < 5; i++) {
		snprintf(p, sizeof(p), "%s/%s", d, files[i]);
		unlink(p);
	}
	for (int i = 2; i >= 0; i--) {
		snprintf(p, sizeof(p), "%s/%s", d, dirs[i]);
		rmdir(p);
	}
	rmdir(d);
}
END_TEST

static void read_file(const char *dir, const char *name, char *buf, size_t len)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "r");
	ck_assert_msg(f, "%s: %s", p, strerror(errno));
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

/* What a lstat-then-open check cannot see: a link planted after a
 * cli_file_path check is refused when the command opens the file
 * (cli_file_open re-checks as it opens); a hard link to a file outside,
 * a FIFO (at once, not when someone reads it) and a directory are refused;
 * the file outside keeps its bytes. */
START_TEST(file_dir_open_refuses_planted_links)
{
	char d[] = "/tmp/cli-fopen-XXXXXX", p[768], q[512], err[256], *out;
	ck_assert_ptr_nonnull(mkdtemp(d));
	snprintf(p, sizeof(p), "%s/in", d);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/out", d);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/out/secret", d);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs("outside\n", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/in", d);
	ck_assert_int_eq(cli_set_file_dir(p, err, sizeof(err)), 0);

	/* Checked while nothing is there, then a link appears. */
	char path[512], line[600];
	struct cli_session *s = cli_session_create(NULL, CLI_OUT_BUFFER, -1);
	ck_assert_ptr_nonnull(s);
	snprintf(p, sizeof(p), "%s/in/late", d);
	ck_assert_int_eq(cli_file_path(s, p, path, sizeof(path)), 0);
	ck_assert_int_eq(symlink("../out/secret", p), 0);
	ck_assert_int_eq(cli_file_open(s, p, path, sizeof(path)), -EACCES);
	cli_session_destroy(s);

	snprintf(p, sizeof(p), "%s/out/secret", d);
	snprintf(q, sizeof(q), "%s/in/hard", d);
	ck_assert_int_eq(link(p, q), 0);
	snprintf(line, sizeof(line), "test write %s", q);
	ck_assert_int_eq(run(line, &out), -EACCES);
	snprintf(p, sizeof(p), "error: %s: has other hard links; cli-file-dir takes plain files only\n", q);
	ck_assert_str_eq(out, p);
	free(out);

	snprintf(q, sizeof(q), "%s/in/fifo", d);
	ck_assert_int_eq(mkfifo(q, 0600), 0);
	snprintf(line, sizeof(line), "test write %s", q);
	ck_assert_int_eq(run(line, &out), -EACCES);
	snprintf(p, sizeof(p), "error: %s: not a plain file; cli-file-dir takes plain files only\n", q);
	ck_assert_str_eq(out, p);
	free(out);

	char text[64];
	read_file(d, "out/secret", text, sizeof(text));
	ck_assert_str_eq(text, "outside\n");
	/* An existing plain file inside is rewritten whole. */
	snprintf(line, sizeof(line), "test write %s/in/plain", d);
	snprintf(p, sizeof(p), "%s/in/plain", d);
	f = fopen(p, "w");
	fputs("a longer text than the command writes\n", f);
	fclose(f);
	ck_assert_int_eq(run(line, NULL), 0);
	read_file(d, "in/plain", text, sizeof(text));
	ck_assert_str_eq(text, "x\n");

	ck_assert_int_eq(cli_set_file_dir("", err, sizeof(err)), 0);
	const char *files[] = { "in/late", "in/hard", "in/fifo", "in/plain", "out/secret", "in", "out" };
	for (int i = 0; i < 7; i++) {
		snprintf(p, sizeof(p), "%s/%s", d, files[i]);
		(i < 5 ? unlink : rmdir)(p);
	}
	rmdir(d);
}
END_TEST

/* The race itself: a thread swaps DIR/in/sub between a directory and a
 * link to DIR/out (renameat2 RENAME_EXCHANGE, atomic) while `test write
 * in/sub/f` runs again and again. A check followed by an open writes
 * DIR/out/f now and then; cli_file_open never may. Bounded: 1 s or 20000
 * writes. */
struct swapper {
	char a[512], b[512];
	volatile bool stop;
	uint64_t n_swaps;
};

static void *swap_main(void *arg)
{
	struct swapper *w = arg;
	while (!w->stop)
		if (renameat2(AT_FDCWD, w->a, AT_FDCWD, w->b, RENAME_EXCHANGE) == 0)
			w->n_swaps++;
	return NULL;
}

START_TEST(file_dir_open_survives_swapped_directory)
{
	char d[] = "/tmp/cli-fswap-XXXXXX", p[512], err[256], line[600];
	ck_assert_ptr_nonnull(mkdtemp(d));
	const char *dirs[] = { "in", "in/sub", "out" };
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", d, dirs[i]);
		ck_assert_int_eq(mkdir(p, 0700), 0);
	}
	struct swapper w = { .stop = false };
	snprintf(w.a, sizeof(w.a), "%s/in/sub", d);
	snprintf(w.b, sizeof(w.b), "%s/in/alt", d);
	ck_assert_int_eq(symlink("../out", w.b), 0);
	snprintf(p, sizeof(p), "%s/in", d);
	ck_assert_int_eq(cli_set_file_dir(p, err, sizeof(err)), 0);
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, swap_main, &w), 0);
	snprintf(line, sizeof(line), "test write %s/in/sub/f", d);
	uint32_t n_written = 0, n_refused = 0;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 20000 && !exists(d, "out/f"); i++) {
		if (run(line, NULL) == 0)
			n_written++;
		else
			n_refused++;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000000000ll + (now.tv_nsec - t0.tv_nsec) >= 1000000000ll)
			break;
	}
	w.stop = true;
	pthread_join(t, NULL);
	printf("swapped directory: %llu swaps, %u writes inside, %u refused\n", (unsigned long long)w.n_swaps,
	       n_written, n_refused);
	ck_assert_msg(!exists(d, "out/f"), "a write landed outside cli-file-dir");
	ck_assert_uint_gt(w.n_swaps, 0);

	ck_assert_int_eq(cli_set_file_dir("", err, sizeof(err)), 0);
	const char *files[] = { "in/sub/f", "in/alt/f", "out/f", "in/sub", "in/alt", "out", "in" };
	for (int i = 0; i < 7; i++) {
		snprintf(p, sizeof(p), "%s/%s", d, files[i]);
		(void)(unlink(p) == 0 || rmdir(p) == 0);
	}
	rmdir(d);
}
END_TEST

/* ---- logins ---- */

static char *write_secret(const char *text)
{
	char *path = strdup("/tmp/cli-pw-XXXXXX");
	int fd = mkstemp(path); /* 0600 */
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* Plain and crypt(3) secrets: the right password of the right user only. */
START_TEST(auth_file_checks_logins)
{
	char err[256];
	/* perl -e 'print crypt("hash pw", q($6$abcdefgh$))' */
	char *pw = write_secret("plain:pass word\n"
				"hashed:$6$abcdefgh$VSBX.v1a9RXVIL9INXQIsRvdPoeGXw4xe/2GDbK2XXJiWjZ2ei2hsIyQJRTX1dAQQmNYsP.3QLkfUC3t5dUJw1\n");
	struct cli_auth *a = cli_auth_load(pw, err, sizeof(err));
	ck_assert_msg(a != NULL, "%s", err);
	ck_assert(cli_auth_check(a, "plain", "pass word"));
	ck_assert(!cli_auth_check(a, "plain", "pass"));
	ck_assert(!cli_auth_check(a, "plain", "pass word "));
	ck_assert(!cli_auth_check(a, "plain", ""));
	ck_assert(cli_auth_check(a, "hashed", "hash pw"));
	ck_assert(!cli_auth_check(a, "hashed", "hash pw2"));
	ck_assert(!cli_auth_check(a, "hashed",
				  "$6$abcdefgh$VSBX.v1a9RXVIL9INXQIsRvdPoeGXw4xe/2GDbK2XXJiWjZ2ei2hsIyQJRTX1dAQQmNYsP.3QLkfUC3t5dUJw1"));
	ck_assert(!cli_auth_check(a, "nobody", "pass word"));
	ck_assert(!cli_auth_check(a, "hashed", "pass word"));
	cli_auth_free(a);
	ck_assert_int_eq(chmod(pw, 0604), 0);
	ck_assert_ptr_null(cli_auth_load(pw, err, sizeof(err)));
	ck_assert_msg(strstr(err, "lets others read or write it"), "%s", err);
	unlink(pw);
	free(pw);
}
END_TEST

/* ---- exec files ---- */

static char *write_temp(const char *text)
{
	char *path = strdup("/tmp/cli-exec-XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

START_TEST(exec_file_runs_and_names_line)
{
	char err[256] = "";
	int before = n_echo_runs;
	char *ok = write_temp("# comment\n\n  test echo one\n   # indented comment\ntest echo two max 2\n");
	ck_assert_int_eq(cli_exec_file(ok, err, sizeof(err)), 0);
	ck_assert_int_eq(n_echo_runs, before + 2);
	char *bad = write_temp("test echo one\n# c\ntest echo\ntest echo never\n");
	ck_assert_int_eq(cli_exec_file(bad, err, sizeof(err)), -EINVAL);
	char want[128];
	snprintf(want, sizeof(want), "%s:3: test echo:", bad);
	ck_assert_msg(strstr(err, want), "'%s' lacks '%s'", err, want);
	ck_assert_int_eq(n_echo_runs, before + 3);
	ck_assert_int_eq(cli_exec_file("/nonexistent/x.cli", err, sizeof(err)), -ENOENT);
	unlink(ok);
	unlink(bad);
	free(ok);
	free(bad);
}
END_TEST

/* ---- server ---- */

static char sock_dir[64];
static char sock_path[100];

/* Start on a fresh socket; tweak (may be NULL) changes the config first. */
static void server_up_with(void (*tweak)(struct cli_server_config *))
{
	snprintf(sock_dir, sizeof(sock_dir), "/tmp/cli-unit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(sock_dir));
	snprintf(sock_path, sizeof(sock_path), "%s/sub/cli.sock", sock_dir);
	struct cli_server_config cfg;
	cli_server_config_default(&cfg);
	snprintf(cfg.listen, sizeof(cfg.listen), "%s", sock_path);
	if (tweak)
		tweak(&cfg);
	char err[256];
	ck_assert_msg(cli_server_start(&cfg, err, sizeof(err)) == 0, "%s", err);
}

static void server_up(void)
{
	server_up_with(NULL);
}

static void server_down(void)
{
	cli_server_stop();
	char sub[100];
	snprintf(sub, sizeof(sub), "%s/sub", sock_dir);
	rmdir(sub);
	rmdir(sock_dir);
}

static int dial(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Send the one-shot hello (with a login when login is "USER\nPASSWORD\n")
 * and a line; return everything sent back. */
static char *oneshot_login(const char *login, const char *line, size_t *len)
{
	int fd = dial();
	const char *hello = login ? CLI_HELLO_EXEC_AUTH : CLI_HELLO_EXEC;
	send(fd, hello, strlen(hello), MSG_NOSIGNAL);
	if (login)
		send(fd, login, strlen(login), MSG_NOSIGNAL);
	send(fd, line, strlen(line), MSG_NOSIGNAL);
	send(fd, "\n", 1, MSG_NOSIGNAL);
	static char buf[65536];
	size_t n = 0;
	ssize_t k;
	while (n < sizeof(buf) - 1 && (k = recv(fd, buf + n, sizeof(buf) - 1 - n, 0)) > 0)
		n += (size_t)k;
	close(fd);
	buf[n] = 0;
	*len = n;
	return buf;
}

static char *oneshot(const char *line, size_t *len)
{
	return oneshot_login(NULL, line, len);
}

/* The status after the output's NUL mark. */
static int status_of(const char *r)
{
	return atoi(r + strlen(r) + 1);
}

START_TEST(socket_is_private_and_removed)
{
	server_up();
	struct stat st;
	ck_assert_int_eq(stat(sock_path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	char err[256];
	struct cli_server_config cfg;
	cli_server_config_default(&cfg);
	snprintf(cfg.listen, sizeof(cfg.listen), "%s", sock_path);
	ck_assert_int_eq(cli_server_start(&cfg, err, sizeof(err)), -EALREADY);
	server_down();
	ck_assert_int_eq(stat(sock_path, &st), -1);
}
END_TEST

START_TEST(oneshot_reports_status)
{
	server_up();
	size_t n;
	char *r = oneshot("test echo sock", &n);
	ck_assert_str_eq(r, "echo sock max 7\n");
	ck_assert_mem_eq(r + strlen(r), "\0" "0\n", 3);
	r = oneshot("test fail", &n);
	ck_assert_str_eq(r, "error: always fails\n");
	char want[16];
	snprintf(want, sizeof(want), "%d\n", EIO);
	ck_assert_str_eq(r + strlen(r) + 1, want);
	server_down();
}
END_TEST

START_TEST(oneshot_overlong_line)
{
	server_up();
	size_t big = 1 << 20;
	char *line = malloc(big + 1);
	memset(line, 'x', big);
	line[big] = 0;
	size_t n;
	char *r = oneshot(line, &n);
	ck_assert_msg(strstr(r, "longer than"), "%s", r);
	char want[16];
	snprintf(want, sizeof(want), "%d\n", EMSGSIZE);
	ck_assert_str_eq(r + strlen(r) + 1, want);
	r = oneshot("test echo after", &n);
	ck_assert_str_eq(r, "echo after max 7\n");
	free(line);
	server_down();
}
END_TEST

START_TEST(stale_socket_replaced_live_refused)
{
	server_up();
	char err[256];
	struct cli_server_config cfg;
	cli_server_config_default(&cfg);
	snprintf(cfg.listen, sizeof(cfg.listen), "%s", sock_path);
	cli_server_stop();
	/* a socket file nobody listens on: a dead sluice's */
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_path);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	close(fd);
	ck_assert_msg(cli_server_start(&cfg, err, sizeof(err)) == 0, "%s", err);
	server_down();
}
END_TEST

static char *pw_path;

static void with_password(struct cli_server_config *c)
{
	snprintf(c->password_file, sizeof(c->password_file), "%s", pw_path);
}

/* With a password file: no login, a wrong one and a right one. */
START_TEST(oneshot_login_required)
{
	pw_path = write_secret("op:right\n");
	server_up_with(with_password);
	size_t n;
	char *r = oneshot("test echo x", &n);
	ck_assert_str_eq(r, "error: this CLI needs a login (sluicectl -a FILE)\n");
	ck_assert_int_eq(status_of(r), EACCES);
	int before = n_echo_runs;
	r = oneshot_login("op\nwrong\n", "test echo x", &n);
	ck_assert_str_eq(r, "error: login refused\n");
	ck_assert_int_eq(status_of(r), EACCES);
	r = oneshot_login("other\nright\n", "test echo x", &n);
	ck_assert_str_eq(r, "error: login refused\n");
	ck_assert_int_eq(n_echo_runs, before);
	r = oneshot_login("op\nright\n", "test echo x", &n);
	ck_assert_str_eq(r, "echo x max 7\n");
	ck_assert_int_eq(status_of(r), 0);
	r = oneshot_login("op\nright\n", "show cli", &n);
	ck_assert_msg(strstr(r, "logins          2\n") && strstr(r, "login-failures  2\n"), "%s", r);
	server_down();
	unlink(pw_path);
	free(pw_path);
}
END_TEST

static void max_line_100(struct cli_server_config *c)
{
	c->max_line = 100;
}

/* cli-max-line 100: a line of exactly 100 bytes runs, 101 is refused
 * and runs nothing, the session after it works. */
START_TEST(oneshot_max_line_exact)
{
	server_up_with(max_line_100);
	char line[128];
	size_t n;
	snprintf(line, sizeof(line), "test echo %090d", 0);
	ck_assert_uint_eq(strlen(line), 100);
	char *r = oneshot(line, &n);
	ck_assert_int_eq(status_of(r), 0);
	snprintf(line, sizeof(line), "test echo %091d", 0);
	int before = n_echo_runs;
	r = oneshot(line, &n);
	ck_assert_str_eq(r, "error: command line longer than 100 bytes; nothing was run\n");
	ck_assert_int_eq(status_of(r), EMSGSIZE);
	ck_assert_int_eq(n_echo_runs, before);
	r = oneshot("show cli", &n);
	ck_assert_msg(strstr(r, "long-lines      1\n") && strstr(r, "max-line        100\n"), "%s", r);
	server_down();
}
END_TEST

static void one_session_group_0660(struct cli_server_config *c)
{
	c->max_sessions = 1;
	c->socket_mode = 0660;
	snprintf(c->socket_group, sizeof(c->socket_group), "daemon");
}

/* cli-max-sessions 1: a second client while one is connected is told so
 * and closed, and counted; cli-group and cli-mode land on the socket. */
START_TEST(max_sessions_and_group)
{
	server_up_with(one_session_group_0660);
	struct stat st;
	ck_assert_int_eq(stat(sock_path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0660);
	struct group *gr = getgrnam("daemon");
	ck_assert_ptr_nonnull(gr);
	ck_assert_int_eq(st.st_gid, gr->gr_gid);
	int first = dial();
	send(first, CLI_HELLO_INTERACTIVE, strlen(CLI_HELLO_INTERACTIVE), MSG_NOSIGNAL);
	char buf[256];
	ck_assert_int_gt(recv(first, buf, sizeof(buf), 0), 0); /* the banner: the session runs */
	size_t n;
	char *r = oneshot("test echo x", &n);
	ck_assert_str_eq(r, "error: too many CLI sessions (cli-max-sessions 1), try again later\n");
	close(first);
	/* the slot frees once the session thread sees the close */
	for (int i = 0; i < 200; i++) {
		r = oneshot("show cli", &n);
		if (strstr(r, "refused-busy"))
			break;
		usleep(10000);
	}
	ck_assert_msg(strstr(r, "refused-busy    "), "%s", r);
	/* the refused client, and those the loop above met before the slot freed */
	ck_assert_msg(!strstr(r, "refused-busy    0\n") && strstr(r, "sessions        1 open of 1\n"), "%s", r);
	server_down();
}
END_TEST

static void tcp_any(struct cli_server_config *c)
{
	snprintf(c->listen, sizeof(c->listen), "0.0.0.0:0");
}

START_TEST(non_loopback_needs_password)
{
	struct cli_server_config cfg;
	char err[256];
	cli_server_config_default(&cfg);
	tcp_any(&cfg);
	ck_assert_int_eq(cli_server_start(&cfg, err, sizeof(err)), -EPERM);
	ck_assert_str_eq(err, "cli: 0.0.0.0:0 is not a loopback address: refusing to listen without cli-password-file");
	ck_assert(cli_listen_is_loopback("127.0.0.1:1") && cli_listen_is_loopback("[::1]:1") &&
		  cli_listen_is_loopback("localhost:1") && cli_listen_is_loopback(":1") &&
		  cli_listen_is_loopback("[::ffff:127.0.0.9]:1"));
	ck_assert(!cli_listen_is_loopback("0.0.0.0:1") && !cli_listen_is_loopback("[::]:1") &&
		  !cli_listen_is_loopback("128.0.0.1:1") && !cli_listen_is_loopback("localhost.example:1"));
}
END_TEST

static Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *fmt = tcase_create("format");
	tcase_add_test(fmt, table_aligns_columns);
	tcase_add_test(fmt, table_short_last_row);
	tcase_add_test(fmt, dot_escapes);
	suite_add_tcase(s, fmt);
	TCase *reg = tcase_create("registry");
	tcase_add_test(reg, command_runs_with_args);
	tcase_add_test(reg, abbreviations_expand);
	tcase_add_test(reg, abbreviated_filters_match_full);
	tcase_add_test(reg, json_output_parses);
	tcase_add_test(reg, take_flag_anywhere);
	tcase_add_test(reg, help_json_lists_registry);
	tcase_add_loop_test(reg, bad_arguments_print_usage, 0, sizeof(bad_lines) / sizeof(bad_lines[0]));
	tcase_add_test(reg, unknown_commands_fail);
	tcase_add_test(reg, alias_translate_words);
	tcase_add_test(reg, alias_runs_target);
	tcase_add_test(reg, alias_beside_command_wins);
	tcase_add_test(reg, alias_errors);
	tcase_add_test(reg, abbreviations_must_be_unique);
	tcase_add_test(reg, failure_status_and_help);
	tcase_add_test(reg, overlong_line_rejected);
	tcase_add_test(reg, exec_file_runs_and_names_line);
	tcase_add_test(reg, file_dir_confines_writes);
	tcase_add_test(reg, file_dir_open_refuses_planted_links);
	tcase_add_test(reg, file_dir_open_survives_swapped_directory);
	tcase_add_test(reg, auth_file_checks_logins);
	suite_add_tcase(s, reg);
	TCase *srv = tcase_create("server");
	tcase_add_test(srv, socket_is_private_and_removed);
	tcase_add_test(srv, oneshot_reports_status);
	tcase_add_test(srv, oneshot_overlong_line);
	tcase_add_test(srv, stale_socket_replaced_live_refused);
	tcase_add_test(srv, oneshot_login_required);
	tcase_add_test(srv, oneshot_max_line_exact);
	tcase_add_test(srv, max_sessions_and_group);
	tcase_add_test(srv, non_loopback_needs_password);
	suite_add_tcase(s, srv);
	return s;
}

int main(void)
{
	return check_run_suite(cli_suite());
}
