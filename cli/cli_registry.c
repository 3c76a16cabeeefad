/* The command registry and sessions: every session builds its own libcli
 * command tree from the registry (libcli's state is per cli_def, and one
 * cli_def must not be shared between threads), and every command runs
 * through one dispatcher that serialises commands, prints usage on bad
 * arguments and records the status for sluicectl.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libcli.h>

#include "cli/cli_private.h"
#include "base/util.h"
#include "sluice_version.h"

static struct {
	pthread_mutex_t lock;
	const struct cli_command_reg **regs; /* sorted by path */
	uint32_t n, cap;
} registry = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* One command at a time across sessions, as VPP runs its CLI on one thread:
 * commands then never race each other on graph state or the barrier. */
static pthread_mutex_t command_lock = PTHREAD_MUTEX_INITIALIZER;

/* Commands running on this thread: `exec FILE` runs commands inside its
 * own, which already hold the lock (cli_exec.c). */
static __thread uint32_t command_depth;

void cli_command_locked(void (*fn)(void *arg), void *arg)
{
	pthread_mutex_lock(&command_lock);
	fn(arg);
	pthread_mutex_unlock(&command_lock);
}

static struct graph *current_graph;

void cli_set_graph(struct graph *g)
{
	__atomic_store_n(&current_graph, g, __ATOMIC_RELEASE);
}

struct graph *cli_current_graph(void)
{
	return __atomic_load_n(&current_graph, __ATOMIC_ACQUIRE);
}

static bool registry_grow(void)
{
	uint32_t cap = registry.cap ? registry.cap * 2 : 64;
	const struct cli_command_reg **r = realloc(registry.regs, cap * sizeof(*r));
	if (!r)
		return false;
	registry.regs = r;
	registry.cap = cap;
	return true;
}

/* Paths registered twice (the plugin loader refuses a plugin that brings
 * one), and the last of them. */
static uint32_t n_twice;
static const char *last_twice;

uint32_t cli_command_twice(const char **last_path)
{
	pthread_mutex_lock(&registry.lock);
	uint32_t n = n_twice;
	if (last_path)
		*last_path = last_twice;
	pthread_mutex_unlock(&registry.lock);
	return n;
}

void cli_command_add(const struct cli_command_reg *reg)
{
	if (!reg->path || !reg->path[0] || !(reg->fn || (reg->alias && reg->alias->target))) {
		base_log("cli", "command without a path or function ignored");
		return;
	}
	pthread_mutex_lock(&registry.lock);
	uint32_t i = 0;
	while (i < registry.n && strcmp(registry.regs[i]->path, reg->path) < 0)
		i++;
	if (i < registry.n && !strcmp(registry.regs[i]->path, reg->path)) {
		base_log("cli", "command '%s' registered twice; keeping the first", reg->path);
		n_twice++;
		last_twice = reg->path;
	} else if (registry.n < registry.cap || registry_grow()) {
		memmove(registry.regs + i + 1, registry.regs + i, (registry.n - i) * sizeof(*registry.regs));
		registry.regs[i] = reg;
		registry.n++;
	}
	pthread_mutex_unlock(&registry.lock);
}

const struct cli_command_reg *cli_registry_find(const char *path)
{
	const struct cli_command_reg *found = NULL;
	pthread_mutex_lock(&registry.lock);
	for (uint32_t i = 0; i < registry.n && !found; i++)
		if (!strcmp(registry.regs[i]->path, path))
			found = registry.regs[i];
	pthread_mutex_unlock(&registry.lock);
	return found;
}

/* ---- output ---- */

static void buffer_append(struct cli_session *s, const char *line)
{
	size_t n = strlen(line);
	if (s->out_len + n + 2 > s->out_cap) {
		size_t cap = MAX(s->out_cap * 2, s->out_len + n + 2);
		char *p = realloc(s->out, cap);
		if (!p)
			return;
		s->out = p;
		s->out_cap = cap;
	}
	memcpy(s->out + s->out_len, line, n);
	s->out_len += n;
	s->out[s->out_len++] = '\n';
	s->out[s->out_len] = 0;
}

static void socket_write(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return; /* the client left; the command still completes */
		p += k;
		n -= (size_t)k;
	}
}

/* libcli hands every output line (command output and its own messages)
 * here when the session is not an interactive client. */
static void print_line(struct cli_def *def, const char *line)
{
	struct cli_session *s = cli_get_context(def);
	s->printed = true;
	switch (s->out_mode) {
	case CLI_OUT_SOCKET:
		socket_write(s->fd, line, strlen(line));
		socket_write(s->fd, "\n", 1);
		break;
	case CLI_OUT_BUFFER:
		buffer_append(s, line);
		break;
	case CLI_OUT_LOG:
		base_log("cli", "%s", line);
		break;
	case CLI_OUT_CLIENT:
		break;
	}
}

void cli_printf(struct cli_session *s, const char *fmt, ...)
{
	char *text;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* libcli would print an empty line after a trailing newline */
	if (n > 0 && text[n - 1] == '\n')
		text[n - 1] = 0;
	s->printed = true;
	cli_print(s->def, "%s", text);
	free(text);
}

int cli_fail(struct cli_session *s, int err, const char *fmt, ...)
{
	char *text;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n >= 0) {
		cli_printf(s, "error: %s", text);
		free(text);
	}
	return err;
}

struct graph *cli_graph(struct cli_session *s)
{
	return s->graph;
}

/* ---- arguments ---- */

static bool parse_u32(const char *w, const struct cli_arg *a, uint32_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(w, &end, 0);
	if (errno || end == w || *end || w[0] == '-' || x > UINT32_MAX)
		return false;
	if ((a->min || a->max) && (x < a->min || x > a->max))
		return false;
	*v = (uint32_t)x;
	return true;
}

static const struct cli_arg *find_keyword(const struct cli_arg *args, size_t n, const char *w)
{
	for (size_t i = 0; i < n; i++)
		if ((args[i].kind == CLI_ARG_FLAG || args[i].kind == CLI_ARG_KEY_U32) && !strcmp(args[i].name, w))
			return &args[i];
	return NULL;
}

static int bad_number(struct cli_session *s, const struct cli_arg *a, const char *w)
{
	if (a->min || a->max)
		return cli_fail(s, -EINVAL, "%s: '%s' is not a number in %u..%u", a->name, w, a->min, a->max);
	return cli_fail(s, -EINVAL, "%s: '%s' is not a number", a->name, w);
}

/* Values land in a scratch copy first so that a bad line changes nothing. */
struct parsed {
	bool flag;
	uint32_t u32;
	const char *word;
	bool seen;
};

static int take_word(struct cli_session *s, const struct cli_arg *args, size_t n_args, struct parsed *p,
		     int argc, char **argv, int *i)
{
	const char *w = argv[*i];
	const struct cli_arg *k = find_keyword(args, n_args, w);
	if (k) {
		struct parsed *v = &p[k - args];
		v->seen = true;
		v->flag = true;
		if (k->kind == CLI_ARG_KEY_U32) {
			if (*i + 1 >= argc)
				return cli_fail(s, -EINVAL, "%s needs a number", k->name);
			if (!parse_u32(argv[++*i], k, &v->u32))
				return bad_number(s, k, argv[*i]);
		}
		return 0;
	}
	for (size_t j = 0; j < n_args; j++) {
		if (p[j].seen || (args[j].kind != CLI_ARG_WORD && args[j].kind != CLI_ARG_U32))
			continue;
		p[j].seen = true;
		p[j].word = w;
		if (args[j].kind == CLI_ARG_U32 && !parse_u32(w, &args[j], &p[j].u32))
			return bad_number(s, &args[j], w);
		return 0;
	}
	return cli_fail(s, -EINVAL, "unexpected '%s'", w);
}

static void store(const struct cli_arg *a, const struct parsed *p)
{
	switch (a->kind) {
	case CLI_ARG_FLAG:
		*(bool *)a->dst = p->flag;
		break;
	case CLI_ARG_KEY_U32:
	case CLI_ARG_U32:
		*(uint32_t *)a->dst = p->u32;
		break;
	case CLI_ARG_WORD:
		*(const char **)a->dst = p->word;
		break;
	}
}

bool cli_take_flag(int *argc, char **argv, const char *flag)
{
	for (int i = 0; i < *argc; i++) {
		if (strcmp(argv[i], flag))
			continue;
		/* Rotated to the end, not dropped: argv is libcli's, which frees
		 * every word it holds. */
		char *w = argv[i];
		memmove(argv + i, argv + i + 1, (size_t)(*argc - i - 1) * sizeof(*argv));
		argv[--*argc] = w;
		return true;
	}
	return false;
}

int cli_args_parse(struct cli_session *s, int argc, char **argv, const struct cli_arg *args, size_t n_args)
{
	struct parsed p[n_args ? n_args : 1];
	memset(p, 0, sizeof(p));
	for (int i = 0; i < argc; i++) {
		int rc = take_word(s, args, n_args, p, argc, argv, &i);
		if (rc)
			return rc;
	}
	for (size_t j = 0; j < n_args; j++) {
		bool positional = args[j].kind == CLI_ARG_WORD || args[j].kind == CLI_ARG_U32;
		if (positional && !p[j].seen)
			return cli_fail(s, -EINVAL, "missing %s", args[j].name);
	}
	for (size_t j = 0; j < n_args; j++)
		if (p[j].seen)
			store(&args[j], &p[j]);
	return 0;
}

int cli_json_arg(struct cli_session *s, int argc, char **argv, bool *json)
{
	const struct cli_arg args[] = { { CLI_ARG_FLAG, "json", json, 0, 0 } };
	return cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
}

int cli_opt_word_arg(struct cli_session *s, int argc, char **argv, const char *what, const char **word)
{
	const struct cli_arg args[] = { { CLI_ARG_WORD, what, word, 0, 0 } };
	*word = NULL;
	return argc ? cli_args_parse(s, argc, argv, args, ARRAY_LEN(args)) : 0;
}

/* ---- dispatch ---- */

static void print_usage(struct cli_session *s, const struct cli_command_reg *reg)
{
	cli_printf(s, "usage: %s", reg->usage ? reg->usage : reg->path);
}

/* A line longer than the session's cap runs nothing. The line is libcli's
 * own copy: its editor cuts typed lines at CLI_LINE_MAX + 1 characters,
 * which is still more than any cap, so a cut line is refused too. */
static bool refuse_long_line(struct cli_session *s)
{
	const struct cli_pipeline *pl = s->def->pipeline;
	size_t n = pl && pl->cmdline ? strlen(pl->cmdline) : 0;
	if (n <= s->max_line)
		return false;
	cli_server_count_long_line();
	cli_printf(s, "error: command line of %s%zu bytes is longer than %u; nothing was run",
		   n > CLI_LINE_MAX ? "at least " : "", n, s->max_line);
	s->status = -EMSGSIZE;
	return true;
}

/* The one libcli callback of every registered command. `command` is the
 * full path libcli matched (abbreviations expanded). */
static int run_reg(struct cli_session *s, const struct cli_command_reg *reg, char **argv, int argc);

static int dispatch(struct cli_def *def, const char *command, char **argv, int argc)
{
	struct cli_session *s = cli_get_context(def);
	if (refuse_long_line(s))
		return CLI_ERROR;
	const struct cli_command_reg *reg = cli_registry_find(command);
	if (!reg) {
		s->status = -ENOENT;
		return CLI_ERROR;
	}
	return run_reg(s, reg, argv, argc);
}

static int run_reg(struct cli_session *s, const struct cli_command_reg *reg, char **argv, int argc)
{
	/* libcli passes a trailing '?' through when a command has no
	 * sub-words left: that is a request for help, not an argument. */
	if (argc && !strcmp(argv[argc - 1], "?")) {
		print_usage(s, reg);
		cli_printf(s, "  %s", reg->help ? reg->help : "");
		s->status = 0;
		return CLI_OK;
	}
	const struct cli_command_reg *run = reg;
	char **words = argv, **translated = NULL;
	if (reg->alias) {
		int rc = cli_alias_translate(reg->alias, argc, argv, &run, &argc, &translated);
		if (rc) {
			s->status = cli_fail(s, rc, "'%s' is VPP's name for '%s', %s", reg->path, reg->alias->target,
					     rc == -ENOENT ? "which this build does not have" : "out of memory");
			return CLI_ERROR;
		}
		words = translated;
	}
	if (command_depth++ == 0)
		pthread_mutex_lock(&command_lock);
	uint64_t start = cpu_ticks();
	int rc = run->fn(s, argc, words);
	cli_elog_command(reg->path, start, rc); /* event log: command and duration (cli_elog.c) */
	cli_server_count_command(rc);
	if (--command_depth == 0)
		pthread_mutex_unlock(&command_lock);
	free(translated);
	if (rc == -EINVAL) {
		print_usage(s, reg);
		if (run != reg)
			cli_printf(s, "  (runs as: %s)", run->usage ? run->usage : run->path);
	}
	s->status = rc < 0 ? rc : 0;
	return rc < 0 ? CLI_ERROR : CLI_OK;
}

/* Whether path's word after prefix (n bytes, or the first word when n is
 * 0) begins with word ("" or NULL: any). */
static bool next_word_begins(const char *path, size_t n, const char *word)
{
	if (!word || !*word)
		return true;
	const char *w = path + (n ? n + 1 : 0);
	return !strncmp(w, word, strlen(word));
}

/* Print the registered commands under a prefix ("" for all) whose next
 * word begins with word (NULL: any). Returns how many. */
static uint32_t list_commands_matching(struct cli_session *s, const char *prefix, const char *word)
{
	size_t n = strlen(prefix);
	uint32_t shown = 0;
	pthread_mutex_lock(&registry.lock);
	struct cli_table *t = cli_table_create((const struct cli_table_col[]){ { "Command", false }, { "Help", false } }, 2);
	for (uint32_t i = 0; t && i < registry.n; i++) {
		const struct cli_command_reg *r = registry.regs[i];
		if (strncmp(r->path, prefix, n) || (n && r->path[n] != ' ') || !next_word_begins(r->path, n, word))
			continue;
		shown++;
		cli_table_cell(t, "%s", r->usage ? r->usage : r->path);
		cli_table_cell(t, "%s", r->help ? r->help : "");
	}
	pthread_mutex_unlock(&registry.lock);
	cli_table_print(s, t);
	return shown;
}

static void list_commands(struct cli_session *s, const char *prefix)
{
	list_commands_matching(s, prefix, NULL);
}

/* The distinct words under prefix that begin with word: more than one
 * means the word is an ambiguous abbreviation. */
static uint32_t words_beginning(const char *prefix, const char *word)
{
	size_t n = strlen(prefix), wl = strlen(word);
	uint32_t count = 0;
	const char *last = NULL;
	size_t last_len = 0;
	pthread_mutex_lock(&registry.lock);
	for (uint32_t i = 0; i < registry.n; i++) {
		const char *p = registry.regs[i]->path;
		if (strncmp(p, prefix, n) || p[n] != ' ' || strncmp(p + n + 1, word, wl))
			continue;
		const char *w = p + n + 1;
		size_t len = strcspn(w, " ");
		if (!last || len != last_len || strncmp(w, last, len))
			count++;
		last = w;
		last_len = len;
	}
	pthread_mutex_unlock(&registry.lock);
	return count;
}

/* libcli gives an abbreviation to the first sibling it matches, and the
 * registry adds paths in sorted order. Where that would take a word VPP's
 * users abbreviate to mean another, the newer word needs more letters:
 * VPP's `sh run` is show runtime, not show running-config. */
static const struct {
	const char *group, *word;
	unsigned min_len;
} abbrev_floor[] = {
	{ "show", "running-config", 4 }, /* "runn"; "ru", "run", "runt" stay runtime's */
};


/* The registered word under group that word abbreviates once the floors
 * are applied (path of a leaf command), or NULL when none or several do.
 * libcli's interactive loop recomputes every word's shortest abbreviation
 * when it starts (cli_build_shortest), which undoes the floors: a prefix two
 * siblings share then matches neither, and the group's callback gets it. */
static const struct cli_command_reg *floor_resolve(const char *group, const char *word)
{
	size_t gl = strlen(group), wl = strlen(word);
	char cand[64] = "", next[64], path[CLI_LINE_MAX];
	pthread_mutex_lock(&registry.lock);
	for (uint32_t i = 0; i < registry.n; i++) {
		const char *p = registry.regs[i]->path;
		if (strncmp(p, group, gl) || p[gl] != ' ' || strncmp(p + gl + 1, word, wl))
			continue;
		snprintf(next, sizeof(next), "%.*s", (int)strcspn(p + gl + 1, " "), p + gl + 1);
		bool floored = false;
		for (size_t k = 0; k < ARRAY_LEN(abbrev_floor); k++)
			floored |= !strcmp(abbrev_floor[k].group, group) && !strcmp(abbrev_floor[k].word, next) &&
				   wl < abbrev_floor[k].min_len;
		if (floored || !strcmp(cand, next))
			continue;
		if (cand[0]) { /* a second word: still ambiguous */
			cand[0] = 0;
			break;
		}
		snprintf(cand, sizeof(cand), "%s", next);
	}
	pthread_mutex_unlock(&registry.lock);
	if (!cand[0])
		return NULL;
	snprintf(path, sizeof(path), "%s %s", group, cand);
	return cli_registry_find(path);
}

/* Callback of a word that only groups others ("show", "trace"): alone or
 * followed by an unknown word it lists what may follow, and fails. */
static int group(struct cli_def *def, const char *command, char **argv, int argc)
{
	struct cli_session *s = cli_get_context(def);
	if (refuse_long_line(s))
		return CLI_ERROR;
	const struct cli_command_reg *reg = argc && strcmp(argv[0], "?") ? floor_resolve(command, argv[0]) : NULL;
	if (reg)
		return run_reg(s, reg, argv + 1, argc - 1);
	if (argc && strcmp(argv[0], "?") && words_beginning(command, argv[0]) > 1) {
		/* An abbreviation that fits several words (VPP refuses it too). */
		cli_printf(s, "error: '%s %s' is ambiguous; type more of it", command, argv[0]);
		list_commands_matching(s, command, argv[0]);
		s->status = -EINVAL;
		return CLI_ERROR;
	}
	if (argc && strcmp(argv[0], "?"))
		cli_printf(s, "error: unknown command '%s %s'", command, argv[0]);
	else if (!argc)
		cli_printf(s, "error: '%s' needs more words", command);
	list_commands(s, command);
	s->status = argc && !strcmp(argv[0], "?") ? 0 : -EINVAL;
	return s->status ? CLI_ERROR : CLI_OK;
}

void cli_command_foreach(void (*fn)(const struct cli_command_reg *reg, void *ctx), void *ctx)
{
	pthread_mutex_lock(&registry.lock);
	for (uint32_t i = 0; i < registry.n; i++)
		fn(registry.regs[i], ctx);
	pthread_mutex_unlock(&registry.lock);
}

static void command_json(const struct cli_command_reg *r, void *ctx)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "path", r->path);
	cJSON_AddStringToObject(o, "usage", r->usage ? r->usage : r->path);
	cJSON_AddStringToObject(o, "help", r->help ? r->help : "");
	cJSON_AddItemToArray(ctx, o);
}

/*
 * sluice> help
 * Command                          Help
 * clear errors                     Zero every error counter
 * ...
 * Words may be abbreviated; '?' lists what may follow, TAB completes.
 * sluice> help json
 * {"commands": [{"path": "clear errors", "usage": "clear errors", "help": "Zero every error counter"}, ...]}
 */
static int help(struct cli_def *def, const char *command, char **argv, int argc)
{
	(void)command;
	struct cli_session *s = cli_get_context(def);
	if (refuse_long_line(s))
		return CLI_ERROR;
	if (argc == 1 && !strcmp(argv[0], "json")) {
		cJSON *root = cJSON_CreateObject();
		cli_command_foreach(command_json, cJSON_AddArrayToObject(root, "commands"));
		cli_json_print(s, root);
		s->status = 0;
		return CLI_OK;
	}
	list_commands(s, "");
	cli_printf(s, "Words may be abbreviated; '?' lists what may follow, TAB completes.");
	s->status = 0;
	return CLI_OK;
}

static struct cli_command *find_child(struct cli_def *def, struct cli_command *parent, const char *word)
{
	struct cli_command *c = parent ? parent->children : def->commands;
	for (; c; c = c->next)
		if (c->command_type == CLI_REGULAR_COMMAND && !strcmp(c->command, word))
			return c;
	return NULL;
}

/* Make a leaf out of a word first created as a group. */
static bool make_leaf(struct cli_command *c, const char *help_text)
{
	char *h = strdup(help_text);
	if (!h)
		return false;
	free(c->help);
	c->help = h;
	c->callback = dispatch;
	return true;
}

static bool add_path(struct cli_def *def, const struct cli_command_reg *reg)
{
	char words[CLI_LINE_MAX];
	snprintf(words, sizeof(words), "%s", reg->path);
	struct cli_command *parent = NULL;
	char *save = NULL;
	for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		bool last = !save || !*save;
		const char *help_text = last ? (reg->help ? reg->help : "") : "";
		struct cli_command *c = find_child(def, parent, w);
		if (c && last && c->callback != dispatch && !make_leaf(c, help_text))
			return false;
		if (!c)
			c = cli_register_command(def, parent, w, last ? dispatch : group, PRIVILEGE_UNPRIVILEGED,
						 MODE_EXEC, help_text);
		if (!c)
			return false;
		parent = c;
	}
	return true;
}

/* libcli's built-ins that mean nothing here (privilege levels, config
 * mode) go; quit, exit and history stay; help is ours. */
static void trim_builtins(struct cli_def *def)
{
	static const char *const drop[] = { "help", "enable", "disable", "configure", "logout" };
	for (size_t i = 0; i < ARRAY_LEN(drop); i++)
		cli_unregister_command(def, drop[i]);
	cli_register_command(def, NULL, "help", help, PRIVILEGE_UNPRIVILEGED, MODE_EXEC,
			     "List every command with its usage");
}

/* libcli 1.10's match filters (include, exclude, grep, egrep) tell which
 * they are from the word as typed: an abbreviation ("| inc x") falls to the
 * regex branch without its flag, so it filters out every line and never
 * frees the compiled pattern (about 600 bytes a command; found by fuzz_cli).
 * libcli has matched the word to its filter by then, so the word is written
 * out in full (a heap string of the pipeline's, which libcli frees) before
 * its init reads it. */
static int (*libcli_match_init)(struct cli_def *, int, char **, struct cli_filter *);

static int match_init_full_name(struct cli_def *def, int argc, char **argv, struct cli_filter *filt)
{
	const struct cli_pipeline_stage *st = def->pipeline ? def->pipeline->current_stage : NULL;
	if (st && st->command && argc > 0 && argv == st->words && strcmp(argv[0], st->command->command)) {
		char *full = strdup(st->command->command);
		if (!full)
			return CLI_ERROR;
		free(argv[0]);
		argv[0] = full;
	}
	return libcli_match_init(def, argc, argv, filt);
}

static void wrap_match_filters(struct cli_def *def)
{
	static const char *const names[] = { "include", "exclude", "grep", "egrep" };
	for (struct cli_command *c = def->commands; c; c = c->next) {
		if (c->command_type != CLI_FILTER_COMMAND || !c->init || c->init == match_init_full_name)
			continue;
		for (size_t i = 0; i < ARRAY_LEN(names); i++) {
			if (strcmp(c->command, names[i]))
				continue;
			libcli_match_init = c->init; /* one libcli, one function */
			c->init = match_init_full_name;
		}
	}
}

static void set_abbrev_floors(struct cli_def *def)
{
	for (size_t i = 0; i < ARRAY_LEN(abbrev_floor); i++) {
		struct cli_command *g = find_child(def, NULL, abbrev_floor[i].group);
		struct cli_command *c = g ? find_child(def, g, abbrev_floor[i].word) : NULL;
		if (c)
			c->unique_len = abbrev_floor[i].min_len;
	}
}

static bool build_tree(struct cli_def *def)
{
	bool ok = true;
	trim_builtins(def);
	wrap_match_filters(def);
	pthread_mutex_lock(&registry.lock);
	for (uint32_t i = 0; i < registry.n && ok; i++)
		ok = add_path(def, registry.regs[i]);
	pthread_mutex_unlock(&registry.lock);
	if (ok)
		set_abbrev_floors(def);
	return ok;
}

/* Abbreviations as VPP takes them: a word names the command it is a prefix
 * of when no other command at that place shares that prefix, and a word
 * typed whole names its command even when it begins another ("hardware"
 * beside "hardware-interfaces" would, "sh hard" does not). libcli computes
 * each command's shortest unique prefix when an interactive session starts
 * (cli_loop) or its mode changes; a session that never loops (one-shot
 * sluicectl, exec files, cli_exec_line) would otherwise take the first
 * command a prefix fits, in alphabetical order, so the same line could mean
 * one command typed and another passed to sluicectl. Entering and leaving
 * config mode is libcli's public way to have it computed. */
static void unique_prefixes(struct cli_def *def)
{
	cli_set_configmode(def, MODE_CONFIG, NULL);
	cli_set_configmode(def, MODE_EXEC, NULL);
}

struct cli_session *cli_session_create(struct graph *g, enum cli_out mode, int fd)
{
	struct cli_session *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->graph = g;
	s->out_mode = mode;
	s->fd = fd;
	s->max_line = CLI_LINE_MAX;
	s->def = cli_init();
	if (!s->def || !build_tree(s->def)) {
		cli_session_destroy(s);
		return NULL;
	}
	cli_set_context(s->def, s);
	if (mode != CLI_OUT_CLIENT)
		unique_prefixes(s->def);
	cli_set_hostname(s->def, "sluice");
	cli_set_banner(s->def, "sluice " SLUICE_VERSION " debug CLI: 'help' lists commands, '?' shows what may follow");
	if (mode != CLI_OUT_CLIENT)
		cli_print_callback(s->def, print_line);
	return s;
}

void cli_session_destroy(struct cli_session *s)
{
	if (!s)
		return;
	if (s->def)
		cli_done(s->def);
	free(s->out);
	free(s);
}

int cli_session_run(struct cli_session *s, const char *line)
{
	s->status = -EINVAL; /* stays so when libcli rejects the line itself */
	s->printed = false;
	int rc = cli_run_command(s->def, line);
	if (rc == CLI_QUIT)
		return 0;
	if (rc != CLI_OK && !s->printed)
		cli_printf(s, "error: invalid command; 'help' lists commands");
	return rc == CLI_OK ? 0 : s->status;
}
