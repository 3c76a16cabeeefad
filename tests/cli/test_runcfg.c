/* Unit suite for the running configuration's pure parts (cli/cli_runcfg.h):
 * the difference between a baseline and the state now, line by line; the
 * writers' order; and the runtime `exec FILE` command over test commands
 * (stops at its failing line, counts what it applied, nests, bounded).
 * No graph runs here.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check_run.h"
#include "cli/cli.h"
#include "cli/cli_runcfg.h"

/* ---- the difference ---- */

struct out {
	char text[4096];
};

static void out_line(const char *line, void *ctx)
{
	struct out *o = ctx;
	size_t n = strlen(o->text);
	snprintf(o->text + n, sizeof(o->text) - n, "%s\n", line);
}

static const char *diff(const struct cli_runcfg *base, const struct cli_runcfg *now)
{
	static struct out o;
	o.text[0] = 0;
	ck_assert_int_eq(cli_runcfg_diff(base, now, out_line, &o), 0);
	return o.text;
}

/* The baseline of the cases below: an interface of startup.conf that no
 * command made (no line), one that has a line, their attributes, a route. */
static struct cli_runcfg *startup(void)
{
	struct cli_runcfg *rc = cli_runcfg_create();
	cli_runcfg_object(rc, "if a", "delete interface a", NULL);
	cli_runcfg_object(rc, "if b", "delete interface b", "create interface b driver null");
	cli_runcfg_attr(rc, "if a state", false, "set interface state a up");
	cli_runcfg_attr(rc, "if a mtu", true, "set interface mtu 1500 a");
	cli_runcfg_object(rc, "route 10/8", "ip route del 10.0.0.0/8", "ip route add 10.0.0.0/8 via a");
	return rc;
}

START_TEST(same_state_writes_nothing)
{
	struct cli_runcfg *b = startup(), *n = startup();
	ck_assert_uint_eq(cli_runcfg_count(b), 5);
	ck_assert_str_eq(diff(b, n), "");
	cli_runcfg_free(b);
	cli_runcfg_free(n);
}
END_TEST

START_TEST(empty_baseline_writes_lines_not_defaults)
{
	struct cli_runcfg *n = startup();
	/* "if a" has no line, its mtu is at its default: neither is written */
	ck_assert_str_eq(diff(NULL, n), "create interface b driver null\n"
					"set interface state a up\n"
					"ip route add 10.0.0.0/8 via a\n");
	struct out o = { "" };
	cli_runcfg_lines(n, out_line, &o);
	ck_assert_str_eq(o.text, "create interface b driver null\n"
				 "set interface state a up\n"
				 "ip route add 10.0.0.0/8 via a\n");
	cli_runcfg_free(n);
}
END_TEST

START_TEST(new_things_are_written_in_order)
{
	struct cli_runcfg *b = startup(), *n = startup();
	cli_runcfg_object(n, "if c", "delete interface c", "create interface c driver null");
	cli_runcfg_attr(n, "if c state", true, "set interface state c down"); /* a new one's default */
	cli_runcfg_attr(n, "if c mtu", false, "set interface mtu 9000 c");
	cli_runcfg_object(n, "route 11/8", "ip route del 11.0.0.0/8", "ip route add 11.0.0.0/8 via c");
	ck_assert_str_eq(diff(b, n), "create interface c driver null\n"
				     "set interface mtu 9000 c\n"
				     "ip route add 11.0.0.0/8 via c\n");
	cli_runcfg_free(b);
	cli_runcfg_free(n);
}
END_TEST

START_TEST(gone_things_are_undone_first_last_made_first)
{
	struct cli_runcfg *b = startup(), *n = cli_runcfg_create();
	cli_runcfg_object(n, "if b", "delete interface b", "create interface b driver null");
	cli_runcfg_object(n, "if d", "delete interface d", "create interface d driver null");
	/* "if a" and its route are gone; its attributes go with it unwritten */
	ck_assert_str_eq(diff(b, n), "ip route del 10.0.0.0/8\n"
				     "delete interface a\n"
				     "create interface d driver null\n");
	cli_runcfg_free(b);
	cli_runcfg_free(n);
}
END_TEST

START_TEST(changed_object_is_undone_then_made)
{
	struct cli_runcfg *b = startup(), *n = cli_runcfg_create();
	cli_runcfg_object(n, "if a", "delete interface a", NULL);
	cli_runcfg_object(n, "if b", "delete interface b", "create interface b driver null rx-queues 2");
	cli_runcfg_attr(n, "if a state", false, "set interface state a down");
	cli_runcfg_attr(n, "if a mtu", true, "set interface mtu 1500 a");
	cli_runcfg_object(n, "route 10/8", "ip route del 10.0.0.0/8", "ip route add 10.0.0.0/8 via b");
	ck_assert_str_eq(diff(b, n), "delete interface b\n"
				     "create interface b driver null rx-queues 2\n"
				     "set interface state a down\n"
				     "ip route del 10.0.0.0/8\n"
				     "ip route add 10.0.0.0/8 via b\n");
	cli_runcfg_free(b);
	cli_runcfg_free(n);
}
END_TEST

START_TEST(attribute_back_to_default_is_written)
{
	struct cli_runcfg *b = cli_runcfg_create(), *n = cli_runcfg_create();
	cli_runcfg_attr(b, "if a mtu", false, "set interface mtu 9000 a");
	cli_runcfg_attr(n, "if a mtu", true, "set interface mtu 1500 a");
	ck_assert_str_eq(diff(b, n), "set interface mtu 1500 a\n");
	cli_runcfg_free(b);
	cli_runcfg_free(n);
}
END_TEST

START_TEST(made_then_deleted_leaves_nothing)
{
	/* An object gone from the state is simply not there: no line, no undo
	 * (the baseline never had it). */
	struct cli_runcfg *b = startup(), *n = startup();
	struct cli_runcfg *empty = cli_runcfg_create();
	ck_assert_str_eq(diff(b, n), "");
	ck_assert_str_eq(diff(NULL, empty), "");
	cli_runcfg_free(empty);
	cli_runcfg_free(b);
	cli_runcfg_free(n);
}
END_TEST

START_TEST(many_items_are_looked_up_by_key)
{
	struct cli_runcfg *b = cli_runcfg_create(), *n = cli_runcfg_create();
	char key[32];
	for (int i = 0; i < 2000; i++) {
		snprintf(key, sizeof(key), "route %d", i);
		cli_runcfg_object(b, key, "del", "add %d", i);
		cli_runcfg_object(n, key, "del", "add %d", i == 1234 ? -1 : i);
	}
	ck_assert_str_eq(diff(b, n), "del\nadd -1\n");
	cli_runcfg_free(b);
	cli_runcfg_free(n);
}
END_TEST

/* ---- writers ---- */

static void writer_late(struct cli_runcfg *rc, struct cli_session *s)
{
	(void)s;
	cli_runcfg_object(rc, "late", NULL, "late line");
}

static void writer_early(struct cli_runcfg *rc, struct cli_session *s)
{
	(void)s;
	cli_runcfg_object(rc, "early", NULL, "early line");
}

static void writer_early_b(struct cli_runcfg *rc, struct cli_session *s)
{
	(void)s;
	cli_runcfg_object(rc, "early b", NULL, "early b line");
}

/* Registered out of order: collections follow order, then name. */
CLI_RUNCFG_WRITER(w_late, "late", CLI_RUNCFG_ROUTES, writer_late)
CLI_RUNCFG_WRITER(w_early_b, "zz early", CLI_RUNCFG_INTERFACES, writer_early_b)
CLI_RUNCFG_WRITER(w_early, "aa early", CLI_RUNCFG_INTERFACES, writer_early)

START_TEST(writers_run_in_order)
{
	struct cli_runcfg *rc = cli_runcfg_collect(NULL);
	ck_assert_ptr_nonnull(rc);
	struct out o = { "" };
	cli_runcfg_lines(rc, out_line, &o);
	ck_assert_str_eq(o.text, "early line\nearly b line\nlate line\n");
	cli_runcfg_free(rc);
}
END_TEST

/* ---- VPP's `sh run` ---- */

/* Stands for graph/'s show runtime, which this binary does not link. */
static int test_show_runtime(struct cli_session *s, int argc, char **argv)
{
	(void)argc, (void)argv;
	cli_printf(s, "runtime here");
	return 0;
}

CLI_COMMAND(test_show_runtime_cmd, "show runtime", "show runtime", "Test stand-in", test_show_runtime)

START_TEST(sh_run_stays_show_runtime)
{
	static const struct {
		const char *line, *want;
	} cases[] = {
		{ "sh run", "runtime here" },	{ "sh ru", "runtime here" },
		{ "sh runt", "runtime here" },	{ "sh runn json", "\"running_config\"" },
		{ "show running-config", "# sluice running-config" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = NULL;
		ck_assert_int_eq(cli_exec_line(cases[i].line, &out), 0);
		ck_assert_msg(strstr(out, cases[i].want), "%s: %s", cases[i].line, out);
		free(out);
	}
}
END_TEST

/* ---- runtime exec ---- */

static int test_value;
static uint32_t n_sets;

/* sluice> test set 5 */
static int test_set(struct cli_session *s, int argc, char **argv)
{
	uint32_t v = 0;
	const struct cli_arg args[] = { { CLI_ARG_U32, "N", &v, 0, 100 } };
	int rc = cli_args_parse(s, argc, argv, args, 1);
	if (rc)
		return rc;
	test_value = (int)v;
	n_sets++;
	cli_printf(s, "value %u", v);
	return 0;
}

CLI_COMMAND(test_set_cmd, "test set", "test set N", "Set the test value", test_set)

static char dir[] = "/tmp/sluice-runcfg-unit-XXXXXX";

static const char *script(const char *name, const char *text)
{
	static char path[sizeof(dir) + 64];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static char *exec(const char *path, int *rc)
{
	char line[256], *out = NULL;
	snprintf(line, sizeof(line), "exec %s", path);
	*rc = cli_exec_line(line, &out);
	ck_assert_ptr_nonnull(out);
	return out;
}

START_TEST(exec_stops_at_failing_line)
{
	test_value = 0;
	n_sets = 0;
	const char *p = script("fail3.cli", "test set 1\n# a comment\ntest set 2\ntest set 999\ntest set 4\n");
	int rc;
	char *out = exec(p, &rc);
	ck_assert_int_ne(rc, 0);
	ck_assert_int_eq(test_value, 2); /* lines 1 and 3 applied, 4 refused, 5 not run */
	ck_assert_uint_eq(n_sets, 2);
	ck_assert_ptr_nonnull(strstr(out, "value 1\nvalue 2\n"));
	ck_assert_ptr_nonnull(strstr(out, "fail3.cli:4: test set 999: Invalid argument"));
	ck_assert_ptr_nonnull(strstr(out, "2 command(s) applied; line 4 failed"));
	ck_assert_ptr_null(strstr(out, "value 4"));
	free(out);
}
END_TEST

START_TEST(exec_nests_and_is_bounded)
{
	char text[256];
	const char *inner = script("inner.cli", "test set 7\ntest set 8\n");
	snprintf(text, sizeof(text), "test set 6\nexec %s\n", inner);
	const char *outer = script("outer.cli", text);
	int rc;
	char *out = exec(outer, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(test_value, 8);
	ck_assert_ptr_nonnull(strstr(out, "inner.cli: 2 command(s) applied"));
	ck_assert_ptr_nonnull(strstr(out, "outer.cli: 2 command(s) applied"));
	free(out);

	char self[sizeof(dir) + 64];
	snprintf(self, sizeof(self), "%s/self.cli", dir);
	snprintf(text, sizeof(text), "exec %s\n", self);
	script("self.cli", text);
	out = exec(self, &rc);
	ck_assert_int_eq(rc, -ELOOP);
	ck_assert_ptr_nonnull(strstr(out, "nested deeper than 8"));
	free(out);

	out = exec("/nonexistent/x.cli", &rc);
	ck_assert_int_ne(rc, 0);
	free(out);
}
END_TEST

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[sizeof(dir) + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static Suite *runcfg_suite(void)
{
	Suite *s = suite_create("cli-runcfg");
	TCase *d = tcase_create("diff");
	tcase_add_test(d, same_state_writes_nothing);
	tcase_add_test(d, empty_baseline_writes_lines_not_defaults);
	tcase_add_test(d, new_things_are_written_in_order);
	tcase_add_test(d, gone_things_are_undone_first_last_made_first);
	tcase_add_test(d, changed_object_is_undone_then_made);
	tcase_add_test(d, attribute_back_to_default_is_written);
	tcase_add_test(d, made_then_deleted_leaves_nothing);
	tcase_add_test(d, many_items_are_looked_up_by_key);
	tcase_add_test(d, writers_run_in_order);
	tcase_add_test(d, sh_run_stays_show_runtime);
	suite_add_tcase(s, d);
	TCase *e = tcase_create("exec");
	tcase_add_unchecked_fixture(e, setup, teardown);
	tcase_add_test(e, exec_stops_at_failing_line);
	tcase_add_test(e, exec_nests_and_is_bounded);
	suite_add_tcase(s, e);
	return s;
}

int main(void)
{
	return check_run_suite(runcfg_suite());
}
