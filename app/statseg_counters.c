/* Counters registered by subsystems and plugins (app/statseg.h,
 * "counters of a subsystem or a plugin"): the table of providers, the rows
 * each one gave in this pass, and their entries in the directory.
 *
 * The rows are collected once per pass, in statseg_counters_shape, into a
 * snapshot the layout, the names and the values all come from: a row that
 * appears in the datapath between two of those steps waits for the next
 * pass instead of shifting the rows under a laid-out directory. Changing
 * names (same number of rows, other flows) bump a generation that is part
 * of the shape, so the directory is rebuilt with them. */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/statseg.h"
#include "app/statseg_private.h"

struct statseg_rows {
	uint32_t n_columns, n, cap;
	char (*names)[STATSEG_LABEL_SIZE];
	uint64_t *values; /* n_columns per row */
};

static struct provider {
	const struct statseg_counters *c;
	struct statseg_rows cur;                /* this pass's rows */
	char (*prev)[STATSEG_LABEL_SIZE];       /* the names the generation was counted for */
	uint32_t n_prev, cap_prev;
	uint64_t gen;
} providers[STATSEG_COUNTERS_MAX];
static uint32_t n_providers;
static uint32_t n_refused;
static atomic_bool frozen; /* the segment's thread runs: it reads the table unlocked */
static char refused_why[160];

/* The writer's own top-level names. */
static const char *const builtin[] = { "sys", "timers", "if", "node", "err", "buffer", "dist", "sched", "cli", "log", "lcp" };

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A word: [a-z0-9_-]+, shorter than max. */
static bool word_ok(const char *s, size_t n, size_t max)
{
	if (n == 0 || n >= max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

/* '/'-separated words, one at least, no empty one. */
static bool prefix_ok(const char *p)
{
	if (!p || p[0] != '/' || strlen(p) >= 100)
		return false;
	for (const char *s = p + 1;;) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (!word_ok(s, n, 100))
			return false;
		if (!e)
			return true;
		s = e + 1;
	}
}

/* a equals b, or one is inside the other (at a '/'). */
static bool overlaps(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b), n = na < nb ? na : nb;
	return strncmp(a, b, n) == 0 && (na == nb || (na > nb ? a : b)[n] == '/');
}

static int check(const struct statseg_counters *c, char *err, size_t errlen)
{
	if (!c || !prefix_ok(c->prefix))
		return fail(err, errlen, "statseg counters: prefix '%s' is not /WORD[/WORD...] of [a-z0-9_-] under 100 bytes",
			    c && c->prefix ? c->prefix : "(null)");
	for (size_t i = 0; i < ARRAY_LEN(builtin); i++) {
		char b[16];
		snprintf(b, sizeof(b), "/%s", builtin[i]);
		if (overlaps(c->prefix, b))
			return fail(err, errlen, "statseg counters: prefix '%s' is inside the built-in '%s'", c->prefix, b);
	}
	if (!c->row_dim || !word_ok(c->row_dim, strlen(c->row_dim), STATSEG_DIM_NAME_SIZE))
		return fail(err, errlen, "statseg counters %s: row dimension '%s' is not [a-z0-9_-] under %d bytes",
			    c->prefix, c->row_dim ? c->row_dim : "(null)", STATSEG_DIM_NAME_SIZE);
	if (c->n_columns < 1 || c->n_columns > STATSEG_COUNTERS_MAX_COLUMNS || !c->columns)
		return fail(err, errlen, "statseg counters %s: %u columns, 1 to %d expected", c->prefix, c->n_columns,
			    STATSEG_COUNTERS_MAX_COLUMNS);
	for (uint32_t i = 0; i < c->n_columns; i++) {
		const char *col = c->columns[i];
		if (!col || !word_ok(col, strlen(col), 24) || !strcmp(col, "names"))
			return fail(err, errlen, "statseg counters %s: column '%s' is not [a-z0-9_-] under 24 bytes, or 'names'",
				    c->prefix, col ? col : "(null)");
		for (uint32_t j = 0; j < i; j++)
			if (!strcmp(c->columns[j], col))
				return fail(err, errlen, "statseg counters %s: column '%s' twice", c->prefix, col);
	}
	if (!c->collect)
		return fail(err, errlen, "statseg counters %s: no collect function", c->prefix);
	for (uint32_t i = 0; i < n_providers; i++)
		if (overlaps(c->prefix, providers[i].c->prefix))
			return fail(err, errlen, "statseg counters: prefix '%s' overlaps '%s', registered already", c->prefix,
				    providers[i].c->prefix);
	return 0;
}

int statseg_counters_register(const struct statseg_counters *c, char *err, size_t errlen)
{
	if (atomic_load(&frozen)) {
		snprintf(err, errlen, "statseg counters %s: registered after the stats segment started",
			 c && c->prefix ? c->prefix : "(null)");
		return -EBUSY;
	}
	int rc = check(c, err, errlen);
	if (rc)
		return rc;
	if (n_providers == STATSEG_COUNTERS_MAX) {
		snprintf(err, errlen, "statseg counters %s: the table of %d providers is full", c->prefix,
			 STATSEG_COUNTERS_MAX);
		return -ENOSPC;
	}
	providers[n_providers++] = (struct provider){ .c = c, .cur.n_columns = c->n_columns };
	return 0;
}

void statseg_counters_register_ctor(const struct statseg_counters *c)
{
	if (statseg_counters_register(c, refused_why, sizeof(refused_why)))
		n_refused++;
}

void statseg_counters_freeze(bool on)
{
	atomic_store(&frozen, on);
}

uint32_t statseg_counters_refused(const char **why)
{
	if (why)
		*why = refused_why;
	return n_refused;
}

int statseg_rows_add(struct statseg_rows *r, const char *name, const uint64_t *values)
{
	if (r->n == r->cap) {
		uint32_t cap = r->cap ? 2 * r->cap : 64;
		void *n = realloc(r->names, cap * sizeof(*r->names));
		if (n)
			r->names = n;
		void *v = realloc(r->values, (size_t)cap * r->n_columns * sizeof(*r->values));
		if (v)
			r->values = v;
		if (!n || !v)
			return -ENOMEM;
		r->cap = cap;
	}
	memset(r->names[r->n], 0, sizeof(r->names[r->n]));
	snprintf(r->names[r->n], sizeof(r->names[r->n]), "%s", name);
	memcpy(&r->values[(size_t)r->n * r->n_columns], values, r->n_columns * sizeof(*values));
	r->n++;
	return 0;
}

/* A new generation when the names differ from those of the last one. */
static void note_names(struct provider *p)
{
	if (p->cur.n == p->n_prev && (!p->cur.n || !memcmp(p->cur.names, p->prev, p->cur.n * sizeof(*p->prev))))
		return;
	p->gen++;
	if (p->cur.n > p->cap_prev) {
		void *n = realloc(p->prev, p->cur.n * sizeof(*p->prev));
		if (!n) {
			p->n_prev = 0; /* compared as changed next time too */
			return;
		}
		p->prev = n;
		p->cap_prev = p->cur.n;
	}
	if (p->cur.n)
		memcpy(p->prev, p->cur.names, p->cur.n * sizeof(*p->prev));
	p->n_prev = p->cur.n;
}

void statseg_counters_shape(struct graph *g, struct statseg_counters_shape *s)
{
	memset(s, 0, sizeof(*s));
	s->n = n_providers;
	for (uint32_t i = 0; i < n_providers; i++) {
		struct provider *p = &providers[i];
		p->cur.n = 0;
		p->c->collect(g, &p->cur);
		note_names(p);
		s->n_rows[i] = p->cur.n;
		s->gen[i] = p->gen;
	}
}

void statseg_counters_layout(struct statseg_writer *w, const struct statseg_counters_shape *s)
{
	struct entries *e = &w->e;
	char name[STATSEG_NAME_SIZE];
	for (uint32_t i = 0; i < STATSEG_COUNTERS_MAX; i++) {
		e->ctr_names[i] = NONE;
		for (uint32_t k = 0; k < STATSEG_COUNTERS_MAX_COLUMNS; k++)
			e->ctr[i][k] = NONE;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		const struct statseg_counters *c = providers[i].c;
		if (!s->n_rows[i])
			continue;
		snprintf(name, sizeof(name), "%s/names", c->prefix);
		e->ctr_names[i] = statseg_add(w, name, STATSEG_NAME_VECTOR, (struct dim){ c->row_dim, s->n_rows[i], NONE }, ONE);
		struct dim d = { c->row_dim, s->n_rows[i], e->ctr_names[i] };
		for (uint32_t k = 0; k < c->n_columns; k++) {
			snprintf(name, sizeof(name), "%s/%s", c->prefix, c->columns[k]);
			e->ctr[i][k] = statseg_add(w, name, c->gauges ? STATSEG_GAUGE_VECTOR : STATSEG_COUNTER_VECTOR, d, ONE);
		}
	}
}

void statseg_counters_names(struct statseg_writer *w, const struct statseg_counters_shape *s)
{
	for (uint32_t i = 0; i < s->n; i++)
		for (uint32_t r = 0; r < s->n_rows[i]; r++)
			statseg_put_label(w, w->e.ctr_names[i], r, providers[i].cur.names[r]);
}

/* The rows this pass collected: the shape's, or the directory is rebuilt
 * before this runs. */
void statseg_counters_fill(struct statseg_writer *w, const struct statseg_counters_shape *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		const struct provider *p = &providers[i];
		for (uint32_t r = 0; r < s->n_rows[i] && r < p->cur.n; r++)
			for (uint32_t k = 0; k < p->c->n_columns; k++)
				statseg_put_elem(w, w->e.ctr[i][k], r, 0, 0, p->cur.values[(size_t)r * p->c->n_columns + k]);
	}
}
