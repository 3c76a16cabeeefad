/* Unit suite for cli/: output helpers, registration and argument parsing
 * (through cli_exec_line), exec files, and the server's socket and one-shot
 * protocol on a temporary socket. No graph runs here.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

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

static const struct cli_command_reg echo_cmd = {
	.path = "test echo", .usage = "test echo WORD [max N] [json]", .help = "Echo a word", .fn = test_echo
};
static const struct cli_command_reg fail_cmd = {
	.path = "test fail", .usage = "test fail", .help = "Fail on purpose", .fn = test_fail
};
CLI_COMMAND_REGISTER(echo_cmd)
CLI_COMMAND_REGISTER(fail_cmd)

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

static void server_up(void)
{
	snprintf(sock_dir, sizeof(sock_dir), "/tmp/cli-unit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(sock_dir));
	snprintf(sock_path, sizeof(sock_path), "%s/sub/cli.sock", sock_dir);
	struct cli_server_config cfg;
	cli_server_config_default(&cfg);
	snprintf(cfg.listen, sizeof(cfg.listen), "%s", sock_path);
	char err[256];
	ck_assert_msg(cli_server_start(&cfg, err, sizeof(err)) == 0, "%s", err);
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

/* Send the one-shot hello and a line; return everything sent back. */
static char *oneshot(const char *line, size_t *len)
{
	int fd = dial();
	send(fd, CLI_HELLO_EXEC, strlen(CLI_HELLO_EXEC), MSG_NOSIGNAL);
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
	tcase_add_test(reg, json_output_parses);
	tcase_add_loop_test(reg, bad_arguments_print_usage, 0, sizeof(bad_lines) / sizeof(bad_lines[0]));
	tcase_add_test(reg, unknown_commands_fail);
	tcase_add_test(reg, failure_status_and_help);
	tcase_add_test(reg, overlong_line_rejected);
	tcase_add_test(reg, exec_file_runs_and_names_line);
	suite_add_tcase(s, reg);
	TCase *srv = tcase_create("server");
	tcase_add_test(srv, socket_is_private_and_removed);
	tcase_add_test(srv, oneshot_reports_status);
	tcase_add_test(srv, oneshot_overlong_line);
	tcase_add_test(srv, stale_socket_replaced_live_refused);
	suite_add_tcase(s, srv);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cli_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
