/* The startup.conf parser: words, braces and strings in, one struct
 * sluice_config out, or one error naming file:line:column, the offending
 * token and what was expected.
 *
 * The text is cut into tokens first (each with its position), then read by
 * a small recursive descent: file = section*, section = NAME '{' body '}',
 * body = (KEY [VALUE] | BLOCKNAME '{' body '}')*. Whether a key takes a
 * value comes from its table, so line breaks carry no meaning, as in VPP.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/conf.h"
#include "app/conf_private.h"

/* ---- tokens ---- */

enum tok_type { TOK_WORD, TOK_STRING, TOK_OPEN, TOK_CLOSE, TOK_EOF };

struct token {
	enum tok_type type;
	uint32_t line, col;
	char *text;
};

struct parser {
	struct token *toks;
	size_t n, cap, i;
	const char *file;
	struct app_conf_msg *err;
	struct sluice_config *cfg;
	uint32_t section_line[APP_MAX_SECTIONS]; /* where each section was written, 0: not */
	uint32_t extra_line[CONF_MAX_EXTRA_SECTIONS]; /* the same for plugins' sections */
	bool only_plugins; /* the first pass: the plugins section, the others skipped */
	bool malformed;    /* the first pass met text the second will refuse */
};

static int fail_at(struct parser *p, uint32_t line, uint32_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail_at(struct parser *p, uint32_t line, uint32_t col, const char *fmt, ...)
{
	va_list ap;
	snprintf(p->err->file, sizeof(p->err->file), "%s", p->file);
	p->err->line = line;
	p->err->col = col;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

#define fail(p, t, ...) fail_at((p), (t)->line, (t)->col, __VA_ARGS__)

/* How a token is named in "found ..." parts of messages. */
static const char *tok_show(const struct token *t, char *buf, size_t len)
{
	if (t->type == TOK_EOF)
		return "end of file";
	snprintf(buf, len, t->type == TOK_STRING ? "'\"%s\"'" : "'%s'", t->text);
	return buf;
}

static int tok_push(struct parser *p, enum tok_type type, uint32_t line, uint32_t col, const char *s, size_t n)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct token *t = realloc(p->toks, cap * sizeof(*t));
		if (!t)
			return fail_at(p, line, col, "out of memory");
		p->toks = t;
		p->cap = cap;
	}
	char *text = strndup(s, n);
	if (!text)
		return fail_at(p, line, col, "out of memory");
	p->toks[p->n++] = (struct token){ .type = type, .line = line, .col = col, .text = text };
	return 0;
}

struct lexer {
	const char *s;
	uint32_t line;
	const char *line_start;
};

static uint32_t lex_col(const struct lexer *lx)
{
	return (uint32_t)(lx->s - lx->line_start) + 1;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/* Skip blanks and comments; counts lines. */
static void lex_skip(struct lexer *lx)
{
	for (;;) {
		if (*lx->s == '\n') {
			lx->line++;
			lx->line_start = ++lx->s;
		} else if (is_space(*lx->s)) {
			lx->s++;
		} else if (*lx->s == '#' || (lx->s[0] == '/' && lx->s[1] == '/')) {
			while (*lx->s && *lx->s != '\n')
				lx->s++;
		} else {
			return;
		}
	}
}

/* A quoted string: \" and \\ are the only escapes; it ends on its line. */
static int lex_string(struct parser *p, struct lexer *lx)
{
	uint32_t col = lex_col(lx);
	char *buf = malloc(strlen(lx->s) + 1);
	size_t n = 0;
	if (!buf)
		return fail_at(p, lx->line, col, "out of memory");
	for (lx->s++; *lx->s != '"'; lx->s++) {
		if (*lx->s == '\n' || !*lx->s) {
			free(buf);
			return fail_at(p, lx->line, col, "unterminated string: expected '\"' before the end of the line");
		}
		if (*lx->s == '\\' && (lx->s[1] == '"' || lx->s[1] == '\\'))
			lx->s++;
		buf[n++] = *lx->s;
	}
	lx->s++;
	int rc = tok_push(p, TOK_STRING, lx->line, col, buf, n);
	free(buf);
	return rc;
}

static int lex(struct parser *p, const char *text)
{
	struct lexer lx = { .s = text, .line = 1, .line_start = text };
	for (lex_skip(&lx); *lx.s; lex_skip(&lx)) {
		uint32_t col = lex_col(&lx);
		int rc;
		if (*lx.s == '{' || *lx.s == '}') {
			rc = tok_push(p, *lx.s == '{' ? TOK_OPEN : TOK_CLOSE, lx.line, col, lx.s, 1);
			lx.s++;
		} else if (*lx.s == '"') {
			rc = lex_string(p, &lx);
		} else {
			const char *start = lx.s;
			while (*lx.s && !is_space(*lx.s) && !strchr("{}\"", *lx.s))
				lx.s++;
			rc = tok_push(p, TOK_WORD, lx.line, col, start, (size_t)(lx.s - start));
		}
		if (rc)
			return rc;
	}
	return tok_push(p, TOK_EOF, lx.line, lex_col(&lx), "", 0);
}

static struct token *peek(struct parser *p)
{
	return &p->toks[p->i];
}

static struct token *next(struct parser *p)
{
	struct token *t = &p->toks[p->i];
	if (t->type != TOK_EOF)
		p->i++;
	return t;
}

/* ---- keys ---- */

/* Where each key of a table was written, for duplicates and for pointing
 * check errors at the value that caused them. */
struct seen {
	const struct conf_key *keys;
	uint64_t set;
	const struct token *at[CONF_MAX_KEYS];
};

/* Append the names of keys to buf, comma-separated. */
static void list_keys(const struct conf_key *keys, char *buf, size_t len)
{
	size_t off = strlen(buf);
	for (const struct conf_key *k = keys; k && k->name && off < len; k++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", k->name);
}

/* t is no key of keys (nor of more, the second table a block may take:
 * an interface's common keys after its driver's): say which are. */
static int unknown_key(struct parser *p, const struct token *t, const char *where, const struct conf_key *keys,
		       const struct conf_key *more, const char *block_what)
{
	char list[CONF_MSG_SIZE] = "", show[CONF_MSG_SIZE];
	list_keys(keys, list, sizeof(list));
	list_keys(more, list, sizeof(list));
	if (t->type != TOK_WORD)
		return fail(p, t, "unexpected %s in %s: expected a key%s%s or '}'", tok_show(t, show, sizeof(show)),
			    where, block_what ? " or a " : "", block_what ? block_what : "");
	if (!list[0])
		return fail(p, t, "unknown key '%s' in %s: expected '}'", t->text, where);
	return fail(p, t, "unknown key '%s' in %s: expected one of %s", t->text, where, list);
}

/* One `key [value]` whose key token was just read. */
static int parse_pair(struct parser *p, const struct token *kt, const struct conf_key *k, struct seen *seen,
		      void *obj)
{
	uint32_t idx = (uint32_t)(k - seen->keys);
	char why[CONF_MSG_SIZE], show[CONF_MSG_SIZE];
	if (idx >= CONF_MAX_KEYS)
		return fail(p, kt, "key '%s' is past the %d keys a table may have", k->name, CONF_MAX_KEYS);
	if (seen->set & (1ull << idx))
		return fail(p, kt, "duplicate key '%s' (first at line %u)", k->name, seen->at[idx]->line);
	const struct token *vt = kt;
	if (k->type != CONF_FLAG) {
		vt = next(p);
		if (vt->type != TOK_WORD && vt->type != TOK_STRING)
			return fail(p, vt, "missing value for '%s': found %s", k->name,
				    tok_show(vt, show, sizeof(show)));
	}
	if (conf_value_parse(k, k->type == CONF_FLAG ? NULL : vt->text, obj, why, sizeof(why)))
		return fail(p, vt, "bad value '%s' for '%s': %s", vt->text, k->name, why);
	seen->set |= 1ull << idx;
	seen->at[idx] = vt;
	return 0;
}

/* Run a table's check and turn its verdict into a positioned message. */
static int run_check(struct parser *p, conf_check_fn_t *check, void *obj, const struct seen *seen,
		     const struct token *owner, const char *where)
{
	struct conf_check chk = { .keys = seen->keys, .set = seen->set };
	if (!check)
		return 0;
	int rc = check(obj, &chk);
	const char *blame = rc ? chk.key : chk.warn_key;
	const struct conf_key *k = blame ? conf_key_find(seen->keys, blame) : NULL;
	const struct token *at = owner;
	if (k && (seen->set & (1ull << (k - seen->keys))))
		at = seen->at[k - seen->keys];
	if (rc)
		return k ? fail(p, at, "'%s%s%s': %s", k->name, at == owner ? "" : " ", at == owner ? "" : at->text, chk.msg)
			 : fail(p, at, "%s: %s", where, chk.msg);
	if (chk.warning[0] && p->cfg->n_warnings < APP_MAX_WARNINGS) {
		struct app_conf_msg *w = &p->cfg->warnings[p->cfg->n_warnings++];
		snprintf(w->file, sizeof(w->file), "%s", p->file);
		w->line = at->line;
		w->col = at->col;
		snprintf(w->msg, sizeof(w->msg), "%s", chk.warning);
	}
	return 0;
}

/* Keys until the closing brace of a block (no nested blocks). */
static int parse_keys(struct parser *p, const struct token *open, const char *where, const struct conf_key *keys,
		      struct seen *seen, void *obj)
{
	for (;;) {
		struct token *t = next(p);
		if (t->type == TOK_CLOSE)
			return 0;
		if (t->type == TOK_EOF)
			return fail(p, open, "unclosed '{' of %s: expected '}' before the end of the file", where);
		const struct conf_key *k = t->type == TOK_WORD ? conf_key_find(keys, t->text) : NULL;
		int rc = k ? parse_pair(p, t, k, seen, obj) : unknown_key(p, t, where, keys, NULL, NULL);
		if (rc)
			return rc;
	}
}

/* ---- blocks ---- */

/* A block name: a word that fits and was not used before in this section. */
static int block_name(struct parser *p, const struct token *nt, const char *what, const char *names, size_t stride,
		      uint32_t n, const uint32_t *lines)
{
	if (strlen(nt->text) >= CONF_NAME_SIZE)
		return fail(p, nt, "%s name '%s' is longer than %d characters", what, nt->text, CONF_NAME_SIZE - 1);
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(names + i * stride, nt->text) == 0)
			return fail(p, nt, "duplicate %s name '%s' (first at line %u)", what, nt->text, lines[i]);
	return 0;
}

static int generic_block(struct parser *p, const struct conf_block *b, uint8_t *sect, const struct token *nt,
			 uint32_t *lines)
{
	uint32_t *count = (uint32_t *)(sect + b->count_offset);
	uint8_t *base = sect + b->array_offset;
	char where[CONF_MSG_SIZE], err[CONF_MSG_SIZE];
	int rc = block_name(p, nt, b->what, (const char *)base + b->name_offset, b->elem_size, *count, lines);
	if (rc)
		return rc;
	uint32_t max = MIN(b->max, APP_MAX_BLOCKS);
	if (*count >= max)
		return fail(p, nt, "too many %ss: at most %u", b->what, max);
	uint8_t *elem = base + (size_t)*count * b->elem_size;
	memset(elem, 0, b->elem_size);
	if (b->init)
		b->init(elem);
	if (conf_defaults(b->keys, elem, err, sizeof(err)))
		return fail(p, nt, "%s", err);
	snprintf((char *)elem + b->name_offset, b->name_size, "%s", nt->text);
	snprintf(where, sizeof(where), "%s '%s'", b->what, nt->text);
	struct seen seen = { .keys = b->keys };
	const struct token *open = next(p);
	rc = parse_keys(p, open, where, b->keys, &seen, elem);
	if (rc == 0)
		rc = run_check(p, b->check, elem, &seen, nt, where);
	lines[(*count)++] = nt->line;
	return rc;
}

/* interfaces { NAME { driver X ... } }: `driver` comes first because it
 * decides which keys (and whether they take values) follow. */
static int interface_block(struct parser *p, struct conf_interfaces *ifs, const struct token *nt, uint32_t *lines)
{
	char where[CONF_MSG_SIZE], show[CONF_MSG_SIZE], names[CONF_MSG_SIZE];
	int rc = block_name(p, nt, "interface", ifs->ifs[0].name, sizeof(ifs->ifs[0]), ifs->n, lines);
	if (rc)
		return rc;
	if (ifs->n == CONF_MAX_INTERFACES)
		return fail(p, nt, "too many interfaces: at most %d", CONF_MAX_INTERFACES);
	const struct token *open = next(p);
	const struct token *kt = next(p);
	if (kt->type != TOK_WORD || strcmp(kt->text, "driver") != 0)
		return fail(p, kt, "interface '%s' needs its driver first: expected 'driver', found %s", nt->text,
			    tok_show(kt, show, sizeof(show)));
	const struct token *dt = next(p);
	if (dt->type != TOK_WORD && dt->type != TOK_STRING)
		return fail(p, dt, "missing value for 'driver': found %s", tok_show(dt, show, sizeof(show)));
	const struct conf_driver *d = conf_driver_find(dt->text);
	if (!d) {
		conf_driver_names(names, sizeof(names));
		return fail(p, dt, "unknown driver '%s' for interface '%s': known drivers: %s", dt->text, nt->text,
			    names);
	}
	struct conf_interface *ifc = &ifs->ifs[ifs->n];
	memset(ifc, 0, sizeof(*ifc));
	snprintf(ifc->name, sizeof(ifc->name), "%s", nt->text);
	ifc->driver = d;
	ifc->line = nt->line;
	if (conf_defaults(d->keys, ifc->driver_conf, show, sizeof(show)) ||
	    conf_defaults(app_interface_keys, ifc, show, sizeof(show)))
		return fail(p, dt, "%s", show);
	snprintf(where, sizeof(where), "interface '%s' (driver %s)", nt->text, d->name);
	/* The driver's keys, and the keys of every interface (app_interface_keys). */
	struct seen seen = { .keys = d->keys }, own = { .keys = app_interface_keys };
	for (rc = 0; rc == 0;) {
		struct token *t = next(p);
		if (t->type == TOK_CLOSE)
			break;
		if (t->type == TOK_EOF)
			return fail(p, open, "unclosed '{' of %s: expected '}' before the end of the file", where);
		const struct conf_key *k = t->type == TOK_WORD ? conf_key_find(d->keys, t->text) : NULL;
		const struct conf_key *ik = t->type == TOK_WORD ? conf_key_find(app_interface_keys, t->text) : NULL;
		rc = k ? parse_pair(p, t, k, &seen, ifc->driver_conf)
		       : ik ? parse_pair(p, t, ik, &own, ifc) : unknown_key(p, t, where, d->keys, app_interface_keys, NULL);
	}
	if (rc == 0)
		rc = run_check(p, d->check, ifc->driver_conf, &seen, nt, where);
	lines[ifs->n++] = nt->line;
	return rc;
}

/* ---- sections ---- */

/* `KEYWORD NAME {` of a keyword block (conf_block.keyword): the name
 * token, or NULL after failing. */
static const struct token *keyword_block_name(struct parser *p, const struct conf_block *b, const struct token *kt)
{
	char show[CONF_MSG_SIZE];
	const struct token *nt = next(p);
	if (nt->type != TOK_WORD && nt->type != TOK_STRING) {
		fail(p, nt, "expected a %s name after '%s', found %s", b->what, kt->text, tok_show(nt, show, sizeof(show)));
		return NULL;
	}
	if (peek(p)->type != TOK_OPEN) {
		fail(p, peek(p), "expected '{' after '%s %s', found %s", kt->text, nt->text,
		     tok_show(peek(p), show, sizeof(show)));
		return NULL;
	}
	return nt;
}

static int parse_section_body(struct parser *p, const struct conf_section *sec, bool interfaces, uint8_t *obj,
			      const struct token *st, const struct token *open)
{
	const char *block_what = interfaces ? "interface" : sec->block ? sec->block->what : NULL;
	const char *keyword = sec->block ? sec->block->keyword : NULL;
	uint32_t lines[APP_MAX_BLOCKS]; /* where each block began, for duplicate names */
	struct seen seen = { .keys = sec->keys };
	char where[CONF_MSG_SIZE];
	snprintf(where, sizeof(where), "section '%s'", sec->name);
	for (;;) {
		struct token *t = next(p);
		int rc;
		if (t->type == TOK_CLOSE)
			return run_check(p, sec->check, obj, &seen, st, where);
		if (t->type == TOK_EOF)
			return fail(p, open, "unclosed '{' of %s: expected '}' before the end of the file", where);
		const struct conf_key *k = t->type == TOK_WORD ? conf_key_find(sec->keys, t->text) : NULL;
		const struct token *nt;
		if (k)
			rc = parse_pair(p, t, k, &seen, obj);
		else if (keyword && t->type == TOK_WORD && strcmp(t->text, keyword) == 0)
			rc = (nt = keyword_block_name(p, sec->block, t)) ? generic_block(p, sec->block, obj, nt, lines)
									 : -EINVAL;
		/* A block's name may be quoted: the printer quotes one that would
		 * not read back as a word (conf_sections.c). */
		else if (block_what && !keyword && (t->type == TOK_WORD || t->type == TOK_STRING) &&
			 peek(p)->type == TOK_OPEN)
			rc = interfaces ? interface_block(p, (struct conf_interfaces *)obj, t, lines)
					: generic_block(p, sec->block, obj, t, lines);
		else
			rc = unknown_key(p, t, where, sec->keys, NULL, block_what);
		if (rc)
			return rc;
	}
}

static void list_sections(char *buf, size_t len)
{
	size_t off = 0;
	for (size_t i = 0; i < app_n_sections && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", app_sections[i].sec->name);
	for (uint32_t i = 0; i < conf_section_count() && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, ", %s", conf_section_get(i)->sec->name);
}

/* A plugin's section (base/conf.h, conf_section_register) called name:
 * its index, or -1. */
static int extra_section_find(const char *name)
{
	for (uint32_t i = 0; i < conf_section_count(); i++)
		if (strcmp(conf_section_get(i)->sec->name, name) == 0)
			return (int)i;
	return -1;
}

/* One section whose name token st was read: the line it was first seen at
 * (duplicates), '{', and its body. */
static int parse_section(struct parser *p, const struct token *st, uint32_t *first_line,
			 const struct conf_section *sec, bool interfaces, uint8_t *obj)
{
	char show[CONF_MSG_SIZE];
	if (*first_line)
		return fail(p, st, "duplicate section '%s' (first at line %u)", st->text, *first_line);
	*first_line = st->line;
	struct token *open = next(p);
	if (open->type != TOK_OPEN)
		return fail(p, open, "expected '{' after '%s', found %s", st->text, tok_show(open, show, sizeof(show)));
	return parse_section_body(p, sec, interfaces, obj, st, open);
}

/* The first pass steps over a section other than plugins: its name, '{'
 * and everything to the matching '}'. False when the text is not so
 * shaped; the second pass then says where and why. */
static bool skip_section(struct parser *p)
{
	if (next(p)->type != TOK_OPEN)
		return false;
	for (uint32_t depth = 1; depth;) {
		const struct token *t = next(p);
		if (t->type == TOK_EOF)
			return false;
		depth += t->type == TOK_OPEN ? 1u : t->type == TOK_CLOSE ? -1u : 0u;
	}
	return true;
}

static int parse_file(struct parser *p)
{
	char show[CONF_MSG_SIZE], list[CONF_MSG_SIZE];
	for (;;) {
		struct token *st = next(p);
		if (st->type == TOK_EOF)
			return 0;
		if (p->only_plugins && (st->type != TOK_WORD || strcmp(st->text, app_plugins_conf_section.name) != 0)) {
			if (st->type != TOK_WORD || !skip_section(p)) {
				p->malformed = true;
				return 0;
			}
			continue;
		}
		const struct app_section *as = st->type == TOK_WORD ? app_section_find(st->text) : NULL;
		int x = st->type == TOK_WORD && !as ? extra_section_find(st->text) : -1;
		int rc;
		if (x >= 0) {
			const struct conf_section_reg *r = conf_section_get((uint32_t)x);
			rc = parse_section(p, st, &p->extra_line[x], r->sec, false, r->obj);
			if (rc)
				return rc;
			continue;
		}
		if (!as) {
			list_sections(list, sizeof(list));
			if (st->type != TOK_WORD)
				return fail(p, st, "unexpected %s: expected a section name (one of %s)",
					    tok_show(st, show, sizeof(show)), list);
			return fail(p, st, "unknown section '%s': expected one of %s", st->text, list);
		}
		size_t si = (size_t)(as - app_sections);
		rc = parse_section(p, st, &p->section_line[si], as->sec, as->interfaces, (uint8_t *)p->cfg + as->offset);
		if (rc)
			return rc;
	}
}

/* ---- entry points ---- */

/* Every section at its defaults; none of them can fail but a table bug. */
static int config_defaults(struct sluice_config *cfg, const char *file, struct app_conf_msg *err)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->file, sizeof(cfg->file), "%s", file);
	for (size_t i = 0; i < app_n_sections; i++) {
		if (conf_defaults(app_sections[i].sec->keys, (uint8_t *)cfg + app_sections[i].offset, err->msg,
				  sizeof(err->msg))) {
			snprintf(err->file, sizeof(err->file), "%s", file);
			return -EINVAL;
		}
	}
	for (uint32_t i = 0; i < conf_section_count(); i++) {
		const struct conf_section_reg *r = conf_section_get(i);
		memset(r->obj, 0, r->sec->size);
		if (conf_defaults(r->sec->keys, r->obj, err->msg, sizeof(err->msg))) {
			snprintf(err->file, sizeof(err->file), "%s", file);
			return -EINVAL;
		}
	}
	return 0;
}

/* Sections whose check matters even when the file leaves them out (a
 * default main core must exist too). */
static int check_unwritten(struct parser *p)
{
	for (size_t i = 0; i < app_n_sections; i++) {
		const struct conf_section *sec = app_sections[i].sec;
		if (p->section_line[i])
			continue;
		struct seen seen = { .keys = sec->keys };
		struct token none = { .line = 0, .col = 0 };
		int rc = run_check(p, sec->check, (uint8_t *)p->cfg + app_sections[i].offset, &seen, &none,
				   sec->name);
		if (rc)
			return rc;
	}
	for (uint32_t i = 0; i < conf_section_count(); i++) {
		const struct conf_section_reg *r = conf_section_get(i);
		struct seen seen = { .keys = r->sec->keys };
		struct token none = { .line = 0, .col = 0 };
		int rc = p->extra_line[i] ? 0 : run_check(p, r->sec->check, r->obj, &seen, &none, r->sec->name);
		if (rc)
			return rc;
	}
	return 0;
}

static app_plugin_loader_fn_t *plugin_loader;

void sluice_config_set_plugin_loader(app_plugin_loader_fn_t *fn)
{
	plugin_loader = fn;
}

/* The first pass: the plugins section alone, then the loader, so that the
 * second pass knows the sections the plugins added. A refusal is blamed
 * on the plugins section. */
static int load_plugins(struct parser *p)
{
	const struct app_section *as = app_section_find(app_plugins_conf_section.name);
	size_t si = (size_t)(as - app_sections);
	p->only_plugins = true;
	int rc = parse_file(p);
	p->only_plugins = false;
	p->i = 0;
	if (rc || p->malformed)
		return rc; /* a malformed file loads nothing: the second pass says why */
	uint32_t line = p->section_line[si];
	p->section_line[si] = 0;
	rc = plugin_loader(&p->cfg->plugins, p->err->msg, sizeof(p->err->msg));
	if (rc) {
		snprintf(p->err->file, sizeof(p->err->file), "%s", p->file);
		p->err->line = line;
		p->err->col = line ? 1 : 0;
		return rc;
	}
	return config_defaults(p->cfg, p->file, p->err);
}

int sluice_config_parse(struct sluice_config *cfg, const char *file, const char *text, struct app_conf_msg *err)
{
	struct parser p = { .file = file, .err = err, .cfg = cfg };
	memset(err, 0, sizeof(*err));
	int rc = config_defaults(cfg, file, err);
	if (rc == 0)
		rc = lex(&p, text);
	if (rc == 0 && plugin_loader)
		rc = load_plugins(&p);
	if (rc == 0)
		rc = parse_file(&p);
	/* Sections present were checked where they closed; the others are
	 * checked at their defaults. */
	if (rc == 0)
		rc = check_unwritten(&p);
	for (size_t i = 0; i < p.n; i++)
		free(p.toks[i].text);
	free(p.toks);
	return rc;
}

int sluice_config_load(struct sluice_config *cfg, const char *path, struct app_conf_msg *err)
{
	FILE *f = fopen(path, "r");
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", path);
	if (!f) {
		snprintf(err->msg, sizeof(err->msg), "cannot open: %s", strerror(errno));
		return -errno;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	char chunk[4096];
	size_t n;
	while (mem && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, mem);
	bool bad = ferror(f) || !mem;
	fclose(f);
	if (mem)
		fclose(mem);
	if (bad) {
		free(text);
		snprintf(err->msg, sizeof(err->msg), "cannot read: %s", strerror(EIO));
		return -EIO;
	}
	int rc = sluice_config_parse(cfg, path, text, err);
	free(text);
	return rc;
}

int app_conf_msg_format(const struct app_conf_msg *m, const char *kind, char *buf, size_t len)
{
	if (m->line == 0)
		return snprintf(buf, len, "%s: %s: %s", m->file, kind, m->msg);
	return snprintf(buf, len, "%s:%u:%u: %s: %s", m->file, m->line, m->col, kind, m->msg);
}
