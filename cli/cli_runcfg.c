/* The running configuration: the writers' registry, collections of items,
 * the difference against the baseline, and `show running-config` and
 * `write running-config` (cli/cli_runcfg.h, docs/running-config.md).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_private.h"
#include "cli/cli_runcfg.h"
#include "base/util.h"

#define RUNCFG_MAX_WRITERS 64

struct runcfg_item {
	char *key;
	char *line; /* NULL: an object with no command that makes it */
	char *undo; /* objects: NULL when nothing removes it */
	bool attr;
	bool is_default;
};

struct cli_runcfg {
	struct runcfg_item *items;
	uint32_t n, cap;
	bool failed; /* out of memory while adding */
};

static struct {
	const struct cli_runcfg_writer *w[RUNCFG_MAX_WRITERS];
	uint32_t n;
} writers;

static struct cli_runcfg *baseline;

void cli_runcfg_writer_add(const struct cli_runcfg_writer *w)
{
	if (writers.n == RUNCFG_MAX_WRITERS) {
		base_log("cli", "running-config writer '%s' ignored: more than %d", w->name, RUNCFG_MAX_WRITERS);
		return;
	}
	/* Sorted by order, then name: the same script whatever the link order. */
	uint32_t i = writers.n;
	while (i > 0 && (writers.w[i - 1]->order > w->order ||
			 (writers.w[i - 1]->order == w->order && strcmp(writers.w[i - 1]->name, w->name) > 0))) {
		writers.w[i] = writers.w[i - 1];
		i--;
	}
	writers.w[i] = w;
	writers.n++;
}

/* ---- collections ---- */

struct cli_runcfg *cli_runcfg_create(void)
{
	return calloc(1, sizeof(struct cli_runcfg));
}

void cli_runcfg_free(struct cli_runcfg *rc)
{
	if (!rc)
		return;
	for (uint32_t i = 0; i < rc->n; i++) {
		free(rc->items[i].key);
		free(rc->items[i].line);
		free(rc->items[i].undo);
	}
	free(rc->items);
	free(rc);
}

uint32_t cli_runcfg_count(const struct cli_runcfg *rc)
{
	return rc ? rc->n : 0;
}

static struct runcfg_item *item_new(struct cli_runcfg *rc)
{
	if (rc->n == rc->cap) {
		uint32_t cap = rc->cap ? rc->cap * 2 : 64;
		struct runcfg_item *p = realloc(rc->items, cap * sizeof(*p));
		if (!p) {
			rc->failed = true;
			return NULL;
		}
		rc->items = p;
		rc->cap = cap;
	}
	struct runcfg_item *it = &rc->items[rc->n];
	memset(it, 0, sizeof(*it));
	return it;
}

/* Keep the item when every string it needs was copied. */
static void item_commit(struct cli_runcfg *rc, struct runcfg_item *it, bool ok)
{
	if (ok && it->key) {
		rc->n++;
		return;
	}
	rc->failed = true;
	free(it->key);
	free(it->line);
	free(it->undo);
}

static char *vformat(const char *fmt, va_list ap)
{
	char *s;
	return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

void cli_runcfg_object(struct cli_runcfg *rc, const char *key, const char *undo, const char *fmt, ...)
{
	struct runcfg_item *it = item_new(rc);
	if (!it)
		return;
	bool ok = true;
	it->key = strdup(key);
	if (undo)
		ok = (it->undo = strdup(undo)) != NULL;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		it->line = vformat(fmt, ap);
		va_end(ap);
		ok = ok && it->line;
	}
	item_commit(rc, it, ok);
}

void cli_runcfg_attr(struct cli_runcfg *rc, const char *key, bool is_default, const char *fmt, ...)
{
	struct runcfg_item *it = item_new(rc);
	if (!it)
		return;
	it->key = strdup(key);
	it->attr = true;
	it->is_default = is_default;
	va_list ap;
	va_start(ap, fmt);
	it->line = vformat(fmt, ap);
	va_end(ap);
	item_commit(rc, it, it->line != NULL);
}

void cli_runcfg_fail(struct cli_runcfg *rc)
{
	rc->failed = true;
}

/* ---- the difference ---- */

static int index_cmp(const void *a, const void *b, void *items)
{
	const struct runcfg_item *it = items;
	return strcmp(it[*(const uint32_t *)a].key, it[*(const uint32_t *)b].key);
}

/* rc's item indices sorted by key (for bsearch); NULL when out of memory. */
static uint32_t *key_index(const struct cli_runcfg *rc)
{
	uint32_t *ix = malloc((rc->n ? rc->n : 1) * sizeof(*ix));
	if (!ix)
		return NULL;
	for (uint32_t i = 0; i < rc->n; i++)
		ix[i] = i;
	qsort_r(ix, rc->n, sizeof(*ix), index_cmp, rc->items);
	return ix;
}

static const struct runcfg_item *find_key(const struct cli_runcfg *rc, const uint32_t *ix, const char *key)
{
	uint32_t lo = 0, hi = rc ? rc->n : 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(rc->items[ix[mid]].key, key);
		if (!c)
			return &rc->items[ix[mid]];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static void emit(const char *line, void (*fn)(const char *, void *), void *ctx)
{
	if (line)
		fn(line, ctx);
}

int cli_runcfg_diff(const struct cli_runcfg *base, const struct cli_runcfg *now,
		    void (*fn)(const char *line, void *ctx), void *ctx)
{
	static const struct cli_runcfg empty;
	if (!base)
		base = &empty;
	uint32_t *bix = key_index(base), *nix = key_index(now);
	if (!bix || !nix) {
		free(bix);
		free(nix);
		return -ENOMEM;
	}
	/* What the baseline had and is gone: removed, last made first. */
	for (uint32_t i = base->n; i-- > 0;) {
		const struct runcfg_item *b = &base->items[i];
		if (!b->attr && !find_key(now, nix, b->key))
			emit(b->undo, fn, ctx);
	}
	for (uint32_t i = 0; i < now->n; i++) {
		const struct runcfg_item *it = &now->items[i];
		const struct runcfg_item *b = find_key(base, bix, it->key);
		if (b && same(b->line, it->line))
			continue;
		if (!b && it->attr && it->is_default)
			continue;
		if (b && !b->attr)
			emit(b->undo, fn, ctx); /* the object was remade otherwise */
		emit(it->line, fn, ctx);
	}
	free(bix);
	free(nix);
	return 0;
}

void cli_runcfg_lines(const struct cli_runcfg *rc, void (*fn)(const char *line, void *ctx), void *ctx)
{
	for (uint32_t i = 0; i < rc->n; i++) {
		const struct runcfg_item *it = &rc->items[i];
		if (!(it->attr && it->is_default))
			emit(it->line, fn, ctx);
	}
}

/* ---- the daemon's ---- */

struct cli_runcfg *cli_runcfg_collect(struct cli_session *s)
{
	struct cli_runcfg *rc = cli_runcfg_create();
	for (uint32_t i = 0; rc && i < writers.n; i++)
		writers.w[i]->fn(rc, s);
	if (rc && rc->failed) {
		cli_runcfg_free(rc);
		rc = NULL;
	}
	return rc;
}

void cli_runcfg_set_baseline(struct cli_session *s)
{
	struct cli_runcfg *rc = cli_runcfg_collect(s);
	if (!rc)
		base_log("cli", "running-config: out of memory taking the baseline; it stays empty");
	cli_runcfg_free(baseline);
	baseline = rc;
}

/* The lines of the running configuration, as an array of strings. */
struct lines {
	char **v;
	uint32_t n, cap;
	bool failed;
};

static void lines_add(const char *line, void *ctx)
{
	struct lines *l = ctx;
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 64;
		char **p = realloc(l->v, cap * sizeof(*p));
		if (!p) {
			l->failed = true;
			return;
		}
		l->v = p;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strdup(line)))
		l->failed = true;
	else
		l->n++;
}

static void lines_free(struct lines *l)
{
	for (uint32_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* all: every item's line, not only what changed since the baseline. */
static int running_lines(struct cli_session *s, bool all, struct lines *l)
{
	memset(l, 0, sizeof(*l));
	struct cli_runcfg *now = cli_runcfg_collect(s);
	int rc = now ? 0 : -ENOMEM;
	if (!rc && all)
		cli_runcfg_lines(now, lines_add, l);
	else if (!rc)
		rc = cli_runcfg_diff(baseline, now, lines_add, l);
	cli_runcfg_free(now);
	if (!rc && l->failed)
		rc = -ENOMEM;
	if (rc) {
		lines_free(l);
		return cli_fail(s, rc, "out of memory");
	}
	return 0;
}

#define RUNCFG_HEADER                                                                          \
	"# sluice running-config: what was configured since start, to run on top of the same "   \
	"startup.conf (unix { exec FILE } or exec FILE)"

/*
 * sluice> show running-config
 * # sluice running-config: ...
 * create interface nul1 driver null
 * set interface state nul1 up
 * set interface ip address nul1 10.1.0.1/24
 * ip route add 10.9.0.0/16 via 10.1.0.2 nul1
 * sluice> show running-config json
 * {"running_config": ["create interface nul1 driver null", ...]}
 */
static int show_running_config(struct cli_session *s, int argc, char **argv)
{
	bool json = cli_take_flag(&argc, argv, "json");
	bool all = cli_take_flag(&argc, argv, "all");
	if (argc)
		return cli_fail(s, -EINVAL, "unexpected '%s'", argv[0]);
	struct lines l;
	int rc = running_lines(s, all, &l);
	if (rc)
		return rc;
	if (json) {
		cJSON *root = cJSON_CreateObject();
		cJSON *a = cJSON_AddArrayToObject(root, "running_config");
		for (uint32_t i = 0; i < l.n; i++)
			cJSON_AddItemToArray(a, cJSON_CreateString(l.v[i]));
		cli_json_print(s, root);
	} else {
		cli_printf(s, "%s", all ? "# sluice configuration: every item, startup.conf's included" : RUNCFG_HEADER);
		for (uint32_t i = 0; i < l.n; i++)
			cli_printf(s, "%s", l.v[i]);
	}
	lines_free(&l);
	return 0;
}

CLI_COMMAND(show_running_config_cmd, "show running-config", "show running-config [all] [json]",
	    "What was configured since start, as a CLI script that replays it (all: the whole state)",
	    show_running_config)

/* Write the lines to path through a temporary file in the same directory,
 * renamed over it once complete: a reader (or a restart) never sees half
 * a file. */
static int write_atomically(struct cli_session *s, const char *path, const struct lines *l)
{
	char final[PATH_MAX], tmp_name[PATH_MAX], tmp[PATH_MAX];
	int rc = cli_file_path(s, path, final, sizeof(final));
	if (rc)
		return rc;
	if (snprintf(tmp_name, sizeof(tmp_name), "%s.tmp.%d", final, (int)getpid()) >= (int)sizeof(tmp_name))
		return cli_fail(s, -ENAMETOOLONG, "%s: name too long", path);
	FILE *f;
	rc = cli_file_fopen(s, tmp_name, tmp, sizeof(tmp), &f);
	if (rc)
		return rc;
	fprintf(f, "%s\n", RUNCFG_HEADER);
	for (uint32_t i = 0; i < l->n; i++)
		fprintf(f, "%s\n", l->v[i]);
	bool ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
	int err = errno;
	ok = fclose(f) == 0 && ok;
	if (ok && rename(tmp, final) == 0)
		return 0;
	err = ok ? errno : err;
	unlink(tmp);
	return cli_fail(s, -err, "%s: %s", path, strerror(err));
}

/*
 * sluice> write running-config /var/lib/sluice/running.conf
 * 4 line(s) written to /var/lib/sluice/running.conf
 */
static int write_running_config(struct cli_session *s, int argc, char **argv)
{
	const char *path = NULL;
	const struct cli_arg args[] = { { CLI_ARG_WORD, "FILE", &path, 0, 0 } };
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	if (rc)
		return rc;
	struct lines l;
	if ((rc = running_lines(s, false, &l)))
		return rc;
	rc = write_atomically(s, path, &l);
	if (!rc)
		cli_printf(s, "%u line(s) written to %s", l.n, path);
	lines_free(&l);
	return rc;
}

CLI_COMMAND(write_running_config_cmd, "write running-config", "write running-config FILE",
	    "Save show running-config's script to FILE (under cli-file-dir), atomically", write_running_config)

static void baseline_locked(void *arg)
{
	struct cli_session *s = cli_session_create(arg, CLI_OUT_LOG, -1);
	if (!s) {
		base_log("cli", "running-config: out of memory taking the baseline; it stays empty");
		return;
	}
	cli_runcfg_set_baseline(s);
	cli_session_destroy(s);
}

void cli_runcfg_baseline_at_start(struct graph *g)
{
	cli_command_locked(baseline_locked, g);
}
