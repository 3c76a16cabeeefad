/* startup.conf(5), as the build generated it (app/man_conf.c), read back
 * against the parser's tables: every section's, block's, interface's and
 * driver's keys are there under their heading with their default, and
 * nothing else is. The comparison is also run on pages with a key
 * dropped, a key added and a default changed, which it must refuse.
 *
 *   test_man_conf PATH/startup.conf.5
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/conf.h"
#include "app/conf_private.h"
#include "tests/check_run.h"

static const char *page_path;

#define MAX_ENTRIES 1024
#define TEXT_SIZE 256

struct entry {
	char title[TEXT_SIZE], key[TEXT_SIZE], def[TEXT_SIZE]; /* def "" when the page says none */
	bool seen;
};

struct page {
	uint32_t n, n_titles;
	struct entry e[MAX_ENTRIES];
};

/* roff escapes the generator writes, back to text; stops at a font change
 * (\f) or, with stop_space, a space. */
static void unroff(const char *s, char *out, size_t len, bool stop_space)
{
	size_t o = 0;
	while (*s && o + 1 < len) {
		if (s[0] == '\\' && s[1] == '-') {
			out[o++] = '-';
			s += 2;
		} else if (s[0] == '\\' && s[1] == 'e') {
			out[o++] = '\\';
			s += 2;
		} else if (s[0] == '\\' && s[1] == '&') {
			s += 2;
		} else if ((s[0] == '\\' && s[1] == 'f') || (stop_space && *s == ' ') || *s == '\n') {
			break;
		} else {
			out[o++] = *s++;
		}
	}
	out[o] = 0;
}

/* The page's key entries: `.SS "TITLE"`, then per key `.TP`, `.B NAME ...`,
 * ... `Default: \fBVALUE\fP` or `Default: none`. */
static void parse_page(const char *text, struct page *p)
{
	char title[TEXT_SIZE] = "";
	memset(p, 0, sizeof(*p));
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, ".SS \"", 5)) {
			unroff(l + 5, title, sizeof(title), false);
			char *q = strrchr(title, '"');
			if (q)
				*q = 0;
			p->n_titles++;
		} else if (!strncmp(l, ".TP\n.B ", 7) && p->n < MAX_ENTRIES) {
			struct entry *e = &p->e[p->n++];
			snprintf(e->title, sizeof(e->title), "%s", title);
			unroff(l + 7, e->key, sizeof(e->key), true);
			const char *d = strstr(l + 7, "\nDefault: ");
			ck_assert_msg(d, "key %s has no Default line", e->key);
			d += strlen("\nDefault: ");
			if (!strncmp(d, "\\fB", 3))
				unroff(d + 3, e->def, sizeof(e->def), false);
			else
				ck_assert_msg(!strncmp(d, "none", 4), "key %s: Default is neither \\fB...\\fP nor none",
					      e->key);
		}
	}
}

/* One table against its entries; the number of problems, each printed. */
static int compare_table(struct page *p, const char *title, const struct conf_key *keys, const struct conf_block *b)
{
	int bad = 0;
	for (const struct conf_key *k = keys; k && k->name; k++) {
		struct entry *e = NULL;
		for (uint32_t i = 0; i < p->n && !e; i++)
			if (!p->e[i].seen && !strcmp(p->e[i].title, title) && !strcmp(p->e[i].key, k->name))
				e = &p->e[i];
		if (!e) {
			fprintf(stderr, "man: [%s] %s: missing\n", title, k->name);
			bad++;
			continue;
		}
		e->seen = true;
		/* A key's own default is printed as written; without one the
		 * page says what a block's init set, or none. */
		if (k->def ? strcmp(e->def, k->def) != 0 : (!b || !b->init) && e->def[0]) {
			fprintf(stderr, "man: [%s] %s: default '%s', the table says '%s'\n", title, k->name, e->def,
				k->def ? k->def : "(none)");
			bad++;
		}
	}
	return bad;
}

static int compare(struct page *p)
{
	int bad = 0;
	uint32_t n_titles = 0;
	char title[TEXT_SIZE];
	for (size_t i = 0; i < app_n_sections; i++) {
		const struct conf_section *s = app_sections[i].sec;
		bad += compare_table(p, s->name, s->keys, NULL);
		n_titles++;
		if (app_sections[i].interfaces) {
			bad += compare_table(p, "interfaces NAME { }", app_interface_keys, NULL);
			n_titles++;
			for (uint32_t d = 0; d < conf_driver_count(); d++) {
				snprintf(title, sizeof(title), "interfaces NAME { driver %s }", conf_driver_get(d)->name);
				bad += compare_table(p, title, conf_driver_get(d)->keys, NULL);
				n_titles++;
			}
		} else if (s->block) {
			snprintf(title, sizeof(title), "%s NAME { }", s->name);
			bad += compare_table(p, title, s->block->keys, s->block);
			n_titles++;
		}
	}
	for (uint32_t i = 0; i < p->n; i++)
		if (!p->e[i].seen) {
			fprintf(stderr, "man: [%s] %s: not in the tables\n", p->e[i].title, p->e[i].key);
			bad++;
		}
	if (p->n_titles != n_titles) {
		fprintf(stderr, "man: %u headings, the tables make %u\n", p->n_titles, n_titles);
		bad++;
	}
	return bad;
}

static char *read_page(void)
{
	FILE *f = fopen(page_path, "r");
	ck_assert_msg(f, "cannot open %s", page_path);
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	ck_assert_uint_lt(n, sizeof(buf) - 1);
	buf[n] = 0;
	return strdup(buf);
}

static int compare_text(const char *text)
{
	static struct page p;
	parse_page(text, &p);
	return compare(&p);
}

/* text with the first occurrence of from replaced by to (malloc'd). */
static char *edit(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	ck_assert_msg(at, "'%s' not in the page", from);
	size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
	char *out = malloc(n);
	snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	return out;
}

START_TEST(test_page_matches_tables)
{
	char *text = read_page();
	static struct page p;
	parse_page(text, &p);
	/* Every table has keys: the page cannot be this small and right. */
	ck_assert_uint_gt(p.n, 50);
	ck_assert_int_eq(compare(&p), 0);
	/* A few by name, as a person would look them up. */
	ck_assert_ptr_nonnull(strstr(text, ".SS \"unix\"\n"));
	ck_assert_ptr_nonnull(strstr(text, ".B cli\\-mode \\fIMODE\\fP\n"));
	ck_assert_ptr_nonnull(strstr(text, ".SS \"interfaces NAME { driver null }\"\n"));
	free(text);
}
END_TEST

/* The comparison itself refuses a page that drifted. */
START_TEST(test_drift_is_refused)
{
	char *text = read_page();
	char *dropped = edit(text, ".TP\n.B cli\\-mode", ".PP\n.B cli\\-mode");
	char *added = edit(text, ".SS \"buffers\"\n", ".SS \"buffers\"\n.TP\n.B no\\-such\\-key\nx.\n.br\nDefault: none.\n");
	char *changed = edit(text, "Default: \\fB0600\\fP", "Default: \\fB0644\\fP");
	char *heading = edit(text, ".SS \"buffers\"\n", ".SS \"buffers\"\n.SS \"extra\"\n");
	ck_assert_int_eq(compare_text(dropped), 1);
	ck_assert_int_eq(compare_text(added), 1);
	ck_assert_int_eq(compare_text(changed), 1);
	ck_assert_int_gt(compare_text(heading), 0);
	free(dropped);
	free(added);
	free(changed);
	free(heading);
	free(text);
}
END_TEST

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_man_conf startup.conf.5\n");
		return 2;
	}
	page_path = argv[1];
	Suite *s = suite_create("man_conf");
	TCase *tc = tcase_create("page");
	tcase_add_test(tc, test_page_matches_tables);
	tcase_add_test(tc, test_drift_is_refused);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
