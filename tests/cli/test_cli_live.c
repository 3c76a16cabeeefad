/* Integration suite: starts a daemon and drives it only through sluicectl.
 *
 * Environment (set by tests/cli/meson.build):
 *   SLUICECTL      the sluicectl binary
 *   CLI_DAEMON     "test:PATH" (tests/cli/cli_test_server) or "sluice:PATH"
 *   CLI_INPUT      the input node to trace
 *   CLI_PATH       comma-separated nodes a traced packet visits, in order;
 *                  "a|b" accepts either at that step
 *   CLI_CONF       sluice only: startup.conf text after the unix section
 * Every wait is bounded; the daemon is killed when the suite ends.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "tests/check_run.h"

static char dir[64];
static char sock[100];
static pid_t daemon_pid;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* Run sluicectl with a command; return its exit status and output. */
static int ctl(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int ctl(char **out, const char *fmt, ...)
{
	char cmd[2048], line[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "timeout 20 %s -s %s %s 2>&1", getenv("SLUICECTL"), sock, line);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	size_t k;
	while ((k = fread(buf + n, 1, cap - n - 1, p)) > 0) {
		n += k;
		if (n + 1 == cap)
			buf = realloc(buf, cap *= 2);
	}
	buf[n] = 0;
	int st = pclose(p);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static cJSON *ctl_json(const char *cmd)
{
	char *out;
	ck_assert_int_eq(ctl(&out, "%s", cmd), 0);
	cJSON *j = cJSON_Parse(out);
	ck_assert_msg(j != NULL, "'%s' printed no JSON: %s", cmd, out);
	free(out);
	return j;
}

static void write_conf(const char *path)
{
	FILE *f = fopen(path, "w");
	fprintf(f, "unix { cli-listen %s }\n%s\n", sock, getenv("CLI_CONF") ? getenv("CLI_CONF") : "");
	fclose(f);
}

static void start_daemon(void)
{
	snprintf(dir, sizeof(dir), "/tmp/cli-live-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/run/cli.sock", dir);
	const char *spec = getenv("CLI_DAEMON");
	const char *path = strchr(spec, ':') + 1;
	char conf[160];
	snprintf(conf, sizeof(conf), "%s/startup.conf", dir);
	bool sluice = !strncmp(spec, "sluice:", 7);
	if (sluice)
		write_conf(conf);
	daemon_pid = fork();
	if (daemon_pid == 0) {
		if (sluice)
			execl(path, path, "-c", conf, (char *)NULL);
		else
			execl(path, path, sock, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100; i++) {
		if (ctl(NULL, "show version") == 0)
			return;
		sleep_ms(50);
	}
	kill(daemon_pid, SIGKILL);
	ck_abort_msg("daemon did not answer within 5 s");
}

static void stop_daemon(void)
{
	if (daemon_pid <= 0)
		return;
	kill(daemon_pid, SIGTERM);
	int st = 0;
	for (int i = 0; i < 100 && waitpid(daemon_pid, &st, WNOHANG) == 0; i++)
		sleep_ms(50);
	if (waitpid(daemon_pid, &st, WNOHANG) == 0) {
		kill(daemon_pid, SIGKILL);
		waitpid(daemon_pid, &st, 0);
	}
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	daemon_pid = 0;
}

/* ---- reading text tables back ---- */

/* The text row that starts with `name`: the numbers in its columns col_a
 * and col_b (0-based, whitespace-split). */
static bool text_row(const char *text, const char *name, int col_a, int col_b, double *a, double *b)
{
	char *copy = strdup(text), *save = NULL;
	bool found = false;
	for (char *l = strtok_r(copy, "\n", &save); l && !found; l = strtok_r(NULL, "\n", &save)) {
		char *w[16], *s2 = NULL;
		int n = 0;
		for (char *t = strtok_r(l, " ", &s2); t && n < 16; t = strtok_r(NULL, " ", &s2))
			w[n++] = t;
		if (n > col_a && n > col_b && !strcmp(w[0], name)) {
			*a = strtod(w[col_a], NULL);
			*b = strtod(w[col_b], NULL);
			found = true;
		}
	}
	free(copy);
	return found;
}

static cJSON *json_named(cJSON *array, const char *key, const char *name)
{
	cJSON *it;
	cJSON_ArrayForEach(it, array)
	{
		cJSON *n = cJSON_GetObjectItem(it, key);
		if (n && cJSON_IsString(n) && !strcmp(n->valuestring, name))
			return it;
	}
	return NULL;
}

static double num(cJSON *o, const char *key)
{
	cJSON *n = cJSON_GetObjectItem(o, key);
	ck_assert_msg(n && cJSON_IsNumber(n), "no number '%s'", key);
	return n->valuedouble;
}

/* ---- tests ---- */

START_TEST(socket_is_0600)
{
	struct stat st;
	ck_assert_int_eq(stat(sock, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_int_eq(st.st_mode & 0777, 0600);
}
END_TEST

START_TEST(runtime_counters_rise)
{
	const char *input = getenv("CLI_INPUT");
	cJSON *a = ctl_json("show runtime json");
	sleep_ms(300);
	cJSON *b = ctl_json("show runtime json");
	cJSON *ta = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "threads"), 0);
	cJSON *tb = cJSON_GetArrayItem(cJSON_GetObjectItem(b, "threads"), 0);
	cJSON *na = json_named(cJSON_GetObjectItem(ta, "nodes"), "name", input);
	cJSON *nb = json_named(cJSON_GetObjectItem(tb, "nodes"), "name", input);
	ck_assert_ptr_nonnull(na);
	ck_assert_ptr_nonnull(nb);
	ck_assert_double_gt(num(nb, "vectors"), num(na, "vectors"));
	ck_assert_double_gt(num(nb, "calls"), num(na, "calls"));
	ck_assert_double_gt(num(tb, "time"), num(ta, "time"));
	cJSON_Delete(a);
	cJSON_Delete(b);
}
END_TEST

/* JSON taken between two text samples lies between them, node by node. */
START_TEST(runtime_json_matches_text)
{
	char *t1, *t2;
	ck_assert_int_eq(ctl(&t1, "show runtime"), 0);
	cJSON *j = ctl_json("show runtime json");
	ck_assert_int_eq(ctl(&t2, "show runtime"), 0);
	ck_assert_msg(strstr(t1, "Vectors/Call") && strstr(t1, "Thread 0"), "%s", t1);
	cJSON *nodes = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "threads"), 0), "nodes");
	int checked = 0;
	cJSON *n;
	cJSON_ArrayForEach(n, nodes)
	{
		const char *name = cJSON_GetObjectItem(n, "name")->valuestring;
		double c1, v1, c2, v2;
		if (!text_row(t1, name, 2, 3, &c1, &v1) || !text_row(t2, name, 2, 3, &c2, &v2))
			continue;
		ck_assert_msg(c1 <= num(n, "calls") && num(n, "calls") <= c2, "%s calls", name);
		ck_assert_msg(v1 <= num(n, "vectors") && num(n, "vectors") <= v2, "%s vectors", name);
		checked++;
	}
	ck_assert_int_ge(checked, 2);
	cJSON_Delete(j);
	free(t1);
	free(t2);
}
END_TEST

START_TEST(errors_json_matches_text)
{
	char *t1, *t2;
	ck_assert_int_eq(ctl(&t1, "show errors"), 0);
	cJSON *j = ctl_json("show errors json");
	ck_assert_int_eq(ctl(&t2, "show errors"), 0);
	cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "errors"))
	{
		const char *node = cJSON_GetObjectItem(e, "node")->valuestring;
		const char *reason = cJSON_GetObjectItem(e, "reason")->valuestring;
		if (num(e, "count") == 0)
			continue;
		/* text rows: Count Node Reason...; find the row by node then reason */
		char *row1 = strstr(t1, reason), *row2 = strstr(t2, reason);
		ck_assert_msg(row1 && row2, "'%s: %s' missing from text", node, reason);
		while (row1 > t1 && row1[-1] != '\n')
			row1--;
		while (row2 > t2 && row2[-1] != '\n')
			row2--;
		double c1 = strtod(row1, NULL), c2 = strtod(row2, NULL);
		ck_assert_msg(c1 <= num(e, "count") && num(e, "count") <= c2, "%s count", reason);
	}
	cJSON_Delete(j);
	free(t1);
	free(t2);
}
END_TEST

START_TEST(graph_json_matches_text_and_dot_renders)
{
	char *t1, *t2, *dot;
	ck_assert_int_eq(ctl(&t1, "show graph"), 0);
	cJSON *j = ctl_json("show graph json");
	ck_assert_int_eq(ctl(&t2, "show graph"), 0);
	cJSON *n;
	int checked = 0;
	cJSON_ArrayForEach(n, cJSON_GetObjectItem(j, "nodes"))
	{
		const char *name = cJSON_GetObjectItem(n, "name")->valuestring;
		double v1, v2, unused;
		ck_assert_msg(text_row(t1, name, 2, 2, &v1, &unused) && text_row(t2, name, 2, 2, &v2, &unused), "%s",
			      name);
		ck_assert_msg(v1 <= num(n, "vectors") && num(n, "vectors") <= v2, "%s vectors", name);
		checked++;
	}
	ck_assert_int_ge(checked, 2);
	ck_assert_int_eq(ctl(&dot, "show graph dot"), 0);
	ck_assert_msg(strstr(dot, "digraph") && strstr(dot, getenv("CLI_INPUT")), "%s", dot);
	char path[160], cmd[400];
	snprintf(path, sizeof(path), "%s/graph.dot", dir);
	FILE *f = fopen(path, "w");
	fputs(dot, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "timeout 20 dot -Tsvg %s -o %s/graph.svg", path, dir);
	ck_assert_int_eq(system(cmd), 0);
	cJSON_Delete(j);
	free(t1);
	free(t2);
	free(dot);
}
END_TEST

/* Does the node at `step` of a record list match CLI_PATH's step? */
static bool step_matches(const char *want_step, const char *node)
{
	char *alt = strdup(want_step);
	bool found = false;
	char *save = NULL;
	for (char *a = strtok_r(alt, "|", &save); a && !found; a = strtok_r(NULL, "|", &save))
		found = !strcmp(a, node);
	free(alt);
	return found;
}

static int expected_steps(char steps[][256])
{
	char path[1024];
	snprintf(path, sizeof(path), "%s", getenv("CLI_PATH"));
	int n = 0;
	char *save = NULL;
	for (char *s = strtok_r(path, ",", &save); s && n < 16; s = strtok_r(NULL, ",", &save))
		snprintf(steps[n++], 256, "%s", s);
	return n;
}

static cJSON *wait_trace(int want)
{
	for (int i = 0; i < 100; i++) {
		cJSON *j = ctl_json("show trace json");
		cJSON *p = cJSON_GetObjectItem(j, "packets");
		int n = cJSON_GetArraySize(p);
		cJSON *last = cJSON_GetArrayItem(p, n - 1);
		/* the last packet is complete once its records stop growing */
		if (n >= want && cJSON_GetArraySize(cJSON_GetObjectItem(last, "records")) > 0) {
			sleep_ms(50);
			cJSON_Delete(j);
			return ctl_json("show trace json");
		}
		cJSON_Delete(j);
		sleep_ms(50);
	}
	ck_abort_msg("fewer than %d packets traced within 5 s", want);
	return NULL;
}

START_TEST(trace_five_packets)
{
	char *out;
	ck_assert_int_eq(ctl(NULL, "clear trace"), 0);
	ck_assert_int_eq(ctl(&out, "trace add %s 5", getenv("CLI_INPUT")), 0);
	free(out);
	cJSON *j = wait_trace(5);
	char steps[16][256];
	int n_steps = expected_steps(steps);
	cJSON *packets = cJSON_GetObjectItem(j, "packets");
	ck_assert_int_eq(cJSON_GetArraySize(packets), 5);
	ck_assert_int_eq(ctl(&out, "show trace"), 0);
	char *cursor = out;
	cJSON *p;
	cJSON_ArrayForEach(p, packets)
	{
		cJSON *recs = cJSON_GetObjectItem(p, "records");
		ck_assert_int_eq(cJSON_GetArraySize(recs), n_steps);
		char head[32];
		snprintf(head, sizeof(head), "Packet %d\n", (int)num(p, "packet"));
		cursor = strstr(cursor, head);
		ck_assert_msg(cursor != NULL, "text lacks '%s'", head);
		for (int k = 0; k < n_steps; k++) {
			cJSON *r = cJSON_GetArrayItem(recs, k);
			const char *node = cJSON_GetObjectItem(r, "node")->valuestring;
			ck_assert_msg(step_matches(steps[k], node), "step %d: %s, want %s", k, node, steps[k]);
			/* the text shows the same node at the same place, then its detail */
			char line[300];
			snprintf(line, sizeof(line), " thread %d %s\n", (int)num(r, "thread"), node);
			cursor = strstr(cursor, line);
			ck_assert_msg(cursor != NULL, "text lacks '%s'", line);
			const char *detail = cJSON_GetObjectItem(r, "detail")->valuestring;
			ck_assert_msg(strstr(cursor, detail), "text lacks detail '%s'", detail);
		}
	}
	ck_assert_ptr_null(strstr(cursor, "Packet 6"));
	free(out);
	cJSON_Delete(j);
}
END_TEST

START_TEST(trace_save_writes_json)
{
	char *out, path[160];
	ck_assert_int_eq(ctl(NULL, "clear trace"), 0);
	ck_assert_int_eq(ctl(NULL, "trace add %s 3", getenv("CLI_INPUT")), 0);
	cJSON_Delete(wait_trace(3));
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	ck_assert_int_eq(ctl(&out, "trace save %s", path), 0);
	ck_assert_msg(strstr(out, "saved 3 packets"), "%s", out);
	free(out);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	cJSON *j = cJSON_Parse(buf);
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "packets")), 3);
	cJSON_Delete(j);
	ck_assert_int_ne(ctl(&out, "trace save /nonexistent/dir/t.json"), 0);
	ck_assert_msg(strstr(out, "cannot write"), "%s", out);
	free(out);
}
END_TEST

/* A bad line prints usage, fails, and leaves the trace as it was. */
START_TEST(bad_input_changes_nothing)
{
	char *out;
	ck_assert_int_eq(ctl(NULL, "clear trace"), 0);
	static const char *const bad[] = { "trace add", "trace add %s", "trace add %s zero", "trace add %s 0",
					   "trace add no-such-node 5" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(ctl(&out, bad[i], getenv("CLI_INPUT")), 1);
		ck_assert_msg(strstr(out, "error"), "%s: %s", bad[i], out);
		free(out);
	}
	ck_assert_int_eq(ctl(&out, "show runtime bogus"), 1);
	ck_assert_msg(strstr(out, "usage: show runtime [verbose] [json]"), "%s", out);
	free(out);
	ck_assert_int_eq(ctl(&out, "show bogus"), 1);
	ck_assert_msg(strstr(out, "show runtime"), "%s", out);
	free(out);
	ck_assert_int_eq(ctl(&out, "no-such-command"), 1);
	free(out);
	sleep_ms(100);
	cJSON *j = ctl_json("show trace json");
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "packets")), 0);
	cJSON_Delete(j);
	ck_assert_int_eq(ctl(NULL, "show version"), 0);
}
END_TEST

static int dial(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

START_TEST(many_connects_and_huge_lines)
{
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(ctl(NULL, "show version"), 0);
	for (int i = 0; i < 100; i++)
		close(dial()); /* telnet-style clients that leave at once */
	char cmd[512];
	/* a 1 MB line typed into an interactive session through sluicectl */
	snprintf(cmd, sizeof(cmd), "head -c 1048576 /dev/zero | tr '\\0' a | timeout 120 %s -s %s > /dev/null",
		 getenv("SLUICECTL"), sock);
	ck_assert_int_eq(system(cmd), 0);
	/* and one run as a one-shot command: 16 words of 64 KiB */
	snprintf(cmd, sizeof(cmd),
		 "out=$(timeout 120 %s -s %s $(head -c 1048576 /dev/zero | tr '\\0' b | fold -w 65536)); "
		 "test $? = 1 && echo \"$out\" | grep -q 'longer than'",
		 getenv("SLUICECTL"), sock);
	ck_assert_int_eq(system(cmd), 0);
	char *out;
	ck_assert_int_eq(ctl(&out, "show version"), 0);
	ck_assert_msg(strstr(out, "sluice"), "%s", out);
	free(out);
}
END_TEST

START_TEST(concurrent_sessions)
{
	int fds[4];
	for (int i = 0; i < 4; i++)
		fds[i] = dial(); /* idle interactive sessions */
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(ctl(NULL, "show runtime"), 0);
	for (int i = 0; i < 4; i++)
		close(fds[i]);
}
END_TEST

START_TEST(unreachable_daemon_exit_2)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "%s -s %s/none.sock show version 2>/dev/null", getenv("SLUICECTL"), dir);
	int st = system(cmd);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 2);
}
END_TEST

static Suite *live_suite(void)
{
	Suite *s = suite_create("cli-live");
	TCase *tc = tcase_create("daemon");
	tcase_add_unchecked_fixture(tc, start_daemon, stop_daemon);
	tcase_set_timeout(tc, 280);
	tcase_add_test(tc, socket_is_0600);
	tcase_add_test(tc, runtime_counters_rise);
	tcase_add_test(tc, runtime_json_matches_text);
	tcase_add_test(tc, errors_json_matches_text);
	tcase_add_test(tc, graph_json_matches_text_and_dot_renders);
	tcase_add_test(tc, trace_five_packets);
	tcase_add_test(tc, trace_save_writes_json);
	tcase_add_test(tc, bad_input_changes_nothing);
	tcase_add_test(tc, many_connects_and_huge_lines);
	tcase_add_test(tc, concurrent_sessions);
	tcase_add_test(tc, unreachable_daemon_exit_2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (!getenv("SLUICECTL") || !getenv("CLI_DAEMON") || !strchr(getenv("CLI_DAEMON"), ':') ||
	    !getenv("CLI_INPUT") || !getenv("CLI_PATH")) {
		fprintf(stderr, "test_cli_live: SLUICECTL, CLI_DAEMON, CLI_INPUT and CLI_PATH must be set\n");
		return EXIT_FAILURE;
	}
	signal(SIGPIPE, SIG_IGN);
	return check_run_suite(live_suite());
}
