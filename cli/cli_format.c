/* Output helpers: aligned text tables, JSON printing, Graphviz DOT text.
 * Out of memory never crashes a command: the helpers remember the failure
 * and the final text comes back NULL (printed as an error line).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_private.h"
#include "base/util.h"

/* A growing string. */
struct strbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sb_append(struct strbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = MAX(b->cap * 2, b->len + n + 1);
		cap = MAX(cap, (size_t)256);
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void sb_puts(struct strbuf *b, const char *s)
{
	sb_append(b, s, strlen(s));
}

static void sb_pad(struct strbuf *b, size_t n)
{
	while (n--)
		sb_append(b, " ", 1);
}

/* The text, or NULL after a failure; the buffer is spent either way. */
static char *sb_take(struct strbuf *b)
{
	if (b->oom) {
		free(b->p);
		return NULL;
	}
	return b->p ? b->p : strdup("");
}

/* ---- tables ---- */

struct cli_table {
	uint32_t n_cols;
	uint32_t n_cells;
	uint32_t cap;
	bool oom;
	char **cells; /* row-major, header excluded */
	struct cli_table_col cols[];
};

struct cli_table *cli_table_create(const struct cli_table_col *cols, uint32_t n_cols)
{
	if (!n_cols)
		return NULL;
	struct cli_table *t = calloc(1, sizeof(*t) + n_cols * sizeof(cols[0]));
	if (!t)
		return NULL;
	t->n_cols = n_cols;
	memcpy(t->cols, cols, n_cols * sizeof(cols[0]));
	return t;
}

void cli_table_cell(struct cli_table *t, const char *fmt, ...)
{
	if (!t || t->oom)
		return;
	if (t->n_cells == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		char **c = realloc(t->cells, cap * sizeof(*c));
		if (!c) {
			t->oom = true;
			return;
		}
		t->cells = c;
		t->cap = cap;
	}
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&t->cells[t->n_cells], fmt, ap);
	va_end(ap);
	if (n < 0)
		t->oom = true;
	else
		t->n_cells++;
}

static const char *cell(const struct cli_table *t, uint32_t row, uint32_t col)
{
	if (!row)
		return t->cols[col].name;
	uint32_t i = (row - 1) * t->n_cols + col;
	return i < t->n_cells ? t->cells[i] : "";
}

static void format_row(const struct cli_table *t, const size_t *width, uint32_t row, struct strbuf *b)
{
	size_t pending = 0; /* spaces owed before the next text, so none trail */
	for (uint32_t c = 0; c < t->n_cols; c++) {
		const char *text = cell(t, row, c);
		size_t n = strlen(text);
		size_t gap = width[c] - n;
		if (t->cols[c].right) {
			pending += gap;
			gap = 0;
		}
		if (n) {
			sb_pad(b, pending);
			sb_puts(b, text);
			pending = 0;
		}
		pending += gap + (c + 1 < t->n_cols ? 2 : 0);
	}
}

char *cli_table_format(const struct cli_table *t)
{
	if (!t || t->oom)
		return NULL;
	size_t width[t->n_cols];
	uint32_t n_rows = 1 + (t->n_cells + t->n_cols - 1) / t->n_cols;
	for (uint32_t c = 0; c < t->n_cols; c++) {
		width[c] = 0;
		for (uint32_t r = 0; r < n_rows; r++)
			width[c] = MAX(width[c], strlen(cell(t, r, c)));
	}
	struct strbuf b = { 0 };
	for (uint32_t r = 0; r < n_rows; r++) {
		if (r)
			sb_puts(&b, "\n");
		format_row(t, width, r, &b);
	}
	return sb_take(&b);
}

void cli_table_free(struct cli_table *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->n_cells; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

void cli_table_print(struct cli_session *s, struct cli_table *t)
{
	char *text = cli_table_format(t);
	if (text)
		cli_printf(s, "%s", text);
	else
		cli_printf(s, "error: out of memory formatting a table");
	free(text);
	cli_table_free(t);
}

/* ---- JSON ---- */

void cli_json_print(struct cli_session *s, cJSON *root)
{
	char *text = root ? cJSON_Print(root) : NULL;
	if (text)
		cli_printf(s, "%s", text);
	else
		cli_printf(s, "error: out of memory formatting JSON");
	free(text);
	cJSON_Delete(root);
}

/* ---- DOT ---- */

struct cli_dot {
	struct strbuf b;
};

/* A DOT double-quoted string: quotes and backslashes escaped, line breaks
 * as DOT's own "\n". */
static void dot_quoted(struct strbuf *b, const char *s)
{
	sb_puts(b, "\"");
	for (; *s; s++) {
		if (*s == '\n')
			sb_puts(b, "\\n");
		else if (*s == '"' || *s == '\\') {
			sb_append(b, "\\", 1);
			sb_append(b, s, 1);
		} else
			sb_append(b, s, 1);
	}
	sb_puts(b, "\"");
}

static void dot_attrs(struct strbuf *b, const char *label, const char *attrs)
{
	if (!label && !attrs)
		return;
	sb_puts(b, " [");
	if (label) {
		sb_puts(b, "label=");
		dot_quoted(b, label);
	}
	if (label && attrs)
		sb_puts(b, ", ");
	if (attrs)
		sb_puts(b, attrs);
	sb_puts(b, "]");
}

struct cli_dot *cli_dot_create(const char *graph_name)
{
	struct cli_dot *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	sb_puts(&d->b, "digraph ");
	dot_quoted(&d->b, graph_name);
	sb_puts(&d->b, " {\n");
	return d;
}

void cli_dot_statement(struct cli_dot *d, const char *stmt)
{
	if (!d)
		return;
	sb_puts(&d->b, "  ");
	sb_puts(&d->b, stmt);
	sb_puts(&d->b, ";\n");
}

void cli_dot_node(struct cli_dot *d, const char *id, const char *label, const char *attrs)
{
	if (!d)
		return;
	sb_puts(&d->b, "  ");
	dot_quoted(&d->b, id);
	dot_attrs(&d->b, label, attrs);
	sb_puts(&d->b, ";\n");
}

void cli_dot_edge(struct cli_dot *d, const char *from, const char *to, const char *label, const char *attrs)
{
	if (!d)
		return;
	sb_puts(&d->b, "  ");
	dot_quoted(&d->b, from);
	sb_puts(&d->b, " -> ");
	dot_quoted(&d->b, to);
	dot_attrs(&d->b, label, attrs);
	sb_puts(&d->b, ";\n");
}

char *cli_dot_finish(struct cli_dot *d)
{
	if (!d)
		return NULL;
	sb_puts(&d->b, "}");
	char *text = sb_take(&d->b);
	free(d);
	return text;
}
