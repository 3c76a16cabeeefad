/* The hardening corpus (tests/data/corpus/manifest.txt, written by gen.py):
 * every case goes through a fresh one-thread graph with an IPv4-configured
 * interface pair (tests/fuzz/pkt_graph.h), and must leave exactly the error
 * counters and tx counts the manifest names (every other counter zero),
 * and no buffer in use once the graph is gone.
 *
 * The manifest's path comes in CORPUS_MANIFEST. One Check loop test per
 * case: a failure names the case. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "tests/check_run.h"
#include "tests/fuzz/pkt_graph.h"

#define MAX_CASES 256
#define MAX_FRAMES 16
#define MAX_EXPECT 8

struct frame_in {
	uint32_t port;
	uint32_t len;
	uint8_t *bytes;
};

struct expect {
	char node[64];
	char string[128];
	uint64_t count;
};

struct corpus_case {
	char part[16];
	char name[64];
	char why[160];
	uint32_t n_frames, n_expect;
	struct frame_in frames[MAX_FRAMES];
	struct expect expect[MAX_EXPECT];
	uint64_t tx[PKT_N_PORTS];
};

static struct corpus_case *cases;
static uint32_t n_cases;

/* ---- the manifest ---- */

/* Read before any test runs: a bad manifest ends the program. */
#define MUST(cond, ...)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "manifest: " __VA_ARGS__);                                 \
			fputc('\n', stderr);                                                       \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static void parse_frame(struct corpus_case *c, const char *rest, uint32_t lineno)
{
	MUST(c->n_frames < MAX_FRAMES, "line %u: too many frames", lineno);
	struct frame_in *f = &c->frames[c->n_frames++];
	static const char ports[] = "abcx";
	const char *p = strchr(ports, rest[0]);
	MUST(p && rest[0] && (rest[1] == ' ' || rest[1] == 0), "line %u: port", lineno);
	f->port = (uint32_t)(p - ports);
	const char *hex = rest[1] ? rest + 2 : rest + 1;
	size_t n = strlen(hex);
	MUST(n % 2 == 0, "line %u: odd hex", lineno);
	f->len = (uint32_t)(n / 2);
	f->bytes = malloc(f->len + 1);
	for (uint32_t i = 0; i < f->len; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		MUST(hi >= 0 && lo >= 0, "line %u: bad hex", lineno);
		f->bytes[i] = (uint8_t)(hi << 4 | lo);
	}
}

static void load_manifest(void)
{
	const char *path = getenv("CORPUS_MANIFEST");
	MUST(path, "CORPUS_MANIFEST is not set");
	FILE *fp = fopen(path, "r");
	MUST(fp, "%s: %s", path, strerror(errno));
	cases = calloc(MAX_CASES, sizeof(*cases));
	size_t cap = 0;
	char *line = NULL;
	uint32_t lineno = 0;
	struct corpus_case *c = NULL;
	while (getline(&line, &cap, fp) > 0) {
		lineno++;
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		char *rest = strchr(line, ' ');
		rest = rest ? rest + 1 : line + strlen(line);
		if (!strncmp(line, "case ", 5)) {
			MUST(!c && n_cases < MAX_CASES, "line %u: case inside a case", lineno);
			c = &cases[n_cases];
			MUST(sscanf(rest, "%15s %63s", c->part, c->name) == 2, "line %u: case PART NAME", lineno);
		} else if (!c) {
			MUST(0, "line %u: outside a case", lineno);
		} else if (!strncmp(line, "why ", 4)) {
			snprintf(c->why, sizeof(c->why), "%s", rest);
		} else if (!strncmp(line, "frame ", 6)) {
			parse_frame(c, rest, lineno);
		} else if (!strncmp(line, "expect ", 7)) {
			MUST(c->n_expect < MAX_EXPECT, "line %u: too many expects", lineno);
			struct expect *e = &c->expect[c->n_expect++];
			unsigned long long n;
			int used = 0;
			MUST(sscanf(rest, "%63s %llu %n", e->node, &n, &used) == 2 && used,
				      "line %u: expect NODE COUNT STRING", lineno);
			e->count = n;
			snprintf(e->string, sizeof(e->string), "%s", rest + used);
		} else if (!strncmp(line, "tx ", 3)) {
			unsigned long long a, b, cc;
			MUST(sscanf(rest, "%llu %llu %llu", &a, &b, &cc) == 3, "line %u: tx A B C", lineno);
			c->tx[0] = a, c->tx[1] = b, c->tx[2] = cc;
		} else if (!strcmp(line, "end")) {
			n_cases++;
			c = NULL;
		} else {
			MUST(0, "line %u: unknown line", lineno);
		}
	}
	free(line);
	fclose(fp);
	MUST(!c, "the last case has no end");
}

/* ---- running a case ---- */

static const struct expect *expected(const struct corpus_case *c, const char *node, const char *string)
{
	for (uint32_t i = 0; i < c->n_expect; i++)
		if (!strcmp(c->expect[i].node, node) && !strcmp(c->expect[i].string, string))
			return &c->expect[i];
	return NULL;
}

START_TEST(corpus_case)
{
	const struct corpus_case *c = &cases[_i];
	char err[256];
	ck_assert_msg(pkt_graph_init(err, sizeof(err)) == 0, "%s", err);
	struct graph *g = pkt_graph();
	for (uint32_t i = 0; i < c->n_frames; i++)
		ck_assert_int_eq(pkt_graph_inject(c->frames[i].port, c->frames[i].bytes, c->frames[i].len), 0);
	pkt_graph_run();

	/* Every counter: the expected ones at their value, the rest zero. */
	uint32_t n_seen = 0;
	for (uint32_t e = 0; e < graph_n_errors(g); e++) {
		uint32_t node;
		const char *string;
		ck_assert_int_eq(graph_error_info(g, e, &node, &string), 0);
		const char *name = graph_node_reg(g, node)->name;
		uint64_t n = graph_error_count(g, e);
		const struct expect *x = expected(c, name, string);
		ck_assert_msg(n == (x ? x->count : 0), "%s %s (%s): %s \"%s\" is %llu, want %llu", c->part, c->name,
			      c->why, name, string, (unsigned long long)n, (unsigned long long)(x ? x->count : 0));
		n_seen += x != NULL;
	}
	ck_assert_msg(n_seen == c->n_expect, "%s %s: an expected counter does not exist in the graph", c->part,
		      c->name);
	for (uint32_t p = 0; p < PKT_N_PORTS; p++)
		ck_assert_msg(pkt_graph_tx(p) == c->tx[p], "%s %s (%s): tx on port %c %llu, want %llu", c->part,
			      c->name, c->why, "abc"[p], (unsigned long long)pkt_graph_tx(p),
			      (unsigned long long)c->tx[p]);
	ck_assert_msg(pkt_graph_fini() == 0, "%s %s: buffers still in use after the case", c->part, c->name);
}
END_TEST

/* Both parts are there, and the corpus is the size the issue asks for. */
START_TEST(corpus_shape)
{
	uint32_t n_malformed = 0, n_special = 0;
	for (uint32_t i = 0; i < n_cases; i++) {
		n_malformed += !strcmp(cases[i].part, "malformed");
		n_special += !strcmp(cases[i].part, "special");
		ck_assert_msg(cases[i].n_frames > 0, "%s: no frame", cases[i].name);
	}
	ck_assert_uint_eq(n_malformed + n_special, n_cases);
	ck_assert_uint_ge(n_malformed, 30);
	ck_assert_uint_ge(n_special, 30);
}
END_TEST

int main(void)
{
	load_manifest();
	Suite *s = suite_create("corpus");
	TCase *tc = tcase_create("corpus");
	tcase_add_test(tc, corpus_shape);
	tcase_add_loop_test(tc, corpus_case, 0, (int)n_cases);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
