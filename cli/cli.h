/* The debug CLI: a libcli server on a unix socket (or loopback TCP), the
 * command registry every subsystem fills from its own *_cli.c, and output
 * helpers (aligned text tables, JSON through cJSON, Graphviz DOT).
 *
 * cli/ knows no subsystem: commands register themselves as data, the way
 * nodes do, and receive the graph through their session.
 *
 * Thread-safety: registration is for constructors and start-up. The server
 * runs each session in its own thread (never a datapath thread) and runs at
 * most one command at a time across all sessions and exec files, so command
 * functions need no locking of their own against each other; state that the
 * datapath reads still changes only under graph_barrier_sync/release.
 */
#ifndef SLUICE_CLI_CLI_H
#define SLUICE_CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

struct graph;
struct cli_session; /* one connected client, one exec file, or one cli_exec_line */

/* ---- server ---- */

#define CLI_SOCKET_MODE_DEFAULT 0600
#define CLI_MAX_SESSIONS_DEFAULT 8
#define CLI_IDLE_TIMEOUT_DEFAULT_S 300
/* Longest command line in bytes, newline excluded: the default and the
 * upper bound of cli-max-line, and the limit of exec files. libcli's line
 * editor holds 4095 characters and cuts a longer typed line; one less keeps
 * a cut line distinguishable from a whole one, so it is still refused. */
#define CLI_LINE_MAX 4094
#define CLI_LINE_MIN 64

struct cli_server_config {
	/* A unix socket path ("/run/sluice/cli.sock"), or HOST:PORT for TCP
	 * ("127.0.0.1:5002"; an empty HOST means loopback). Empty: the
	 * build's default socket (meson option cli_socket). A TCP address
	 * that is not loopback needs password_file. */
	char listen[256];
	mode_t socket_mode;      /* unix socket permissions, default 0600 */
	char socket_group[64];   /* unix socket group ("": the process's) */
	uint32_t max_sessions;   /* concurrent sessions; more are told so and closed */
	uint32_t idle_timeout_s; /* close a session silent this long (0: never) */
	uint32_t max_line;       /* longest command line accepted, CLI_LINE_MIN..CLI_LINE_MAX */
	char password_file[256]; /* "": no login; else every session logs in (cli_auth_load) */
	char file_dir[256];      /* "": commands write anywhere; else only under it */
	struct graph *graph;     /* handed to every command */
};

/* Defaults: the build's default socket, mode 0600, 8 sessions, 300 s idle
 * timeout, CLI_LINE_MAX, no login, no file directory, no graph. */
void cli_server_config_default(struct cli_server_config *cfg);

/* Create the socket (and a unix socket's directory), then accept sessions on
 * a thread of its own. Also makes cfg->graph the graph cli_exec_file and
 * cli_exec_line use, and cfg->file_dir their file directory. Returns 0 or a
 * negative errno with the reason in err. Call from the control thread,
 * once. */
int cli_server_start(const struct cli_server_config *cfg, char *err, size_t errlen);

/* Close the listener, end every session, join their threads and remove the
 * unix socket. Safe to call when the server never started. */
void cli_server_stop(void);

/* The server's counters since it started, as `show cli` prints them; any
 * thread, no lock (relaxed loads: the stats segment reads them).
 * sessions_open is accepted - closed: exact when no session is starting or
 * ending. */
struct cli_server_counters {
	uint64_t accepted, refused_busy, logins, login_failures, idle_closed, long_lines, closed;
	uint64_t commands, command_errors; /* commands run, and those that failed */
	uint64_t sessions_open;
};
void cli_server_counters(struct cli_server_counters *c);

/* The graph commands get outside a server (exec files before the server
 * starts, tests). cli_server_start sets it too. */
void cli_set_graph(struct graph *g);

/* Run CLI commands from a file, one per line; blank lines and lines whose
 * first non-blank character is '#' are skipped. Output goes to the log.
 * Stops at the first failing command. Returns 0, or a negative errno with
 * "FILE:LINE: command: reason" in err. Control thread only. */
int cli_exec_file(const char *path, char *err, size_t errlen);

/* Run one command line. Its output (what a client would see) is returned in
 * *out (malloc'd, NUL-terminated; the caller frees it) when out is not
 * NULL. Returns 0, or a negative errno when the command failed. */
int cli_exec_line(const char *line, char **out);

/* Run fn(arg) holding the lock every command runs under: what commands
 * change (interfaces, the graph's tables) holds still meanwhile. For
 * control threads that read those tables outside a command (the stats
 * segment's writer). */
void cli_command_locked(void (*fn)(void *arg), void *arg);

/* ---- listening sockets (cli_listen.c) ---- */

/* A listening socket: the CLI's, and any other the daemon serves with the
 * CLI socket's rules (mode, group, a private directory, stale files). */
struct cli_listener {
	int fd; /* -1: none */
	bool unix_socket;
	char path[108]; /* sizeof sockaddr_un.sun_path */
	ino_t ino;      /* our socket's inode: remove the path only while it is ours */
};

/* Listen on c->listen (a unix socket path, made with c->socket_mode and
 * c->socket_group, or HOST:PORT); 0, or a negative errno with the reason in
 * err. */
int cli_listener_open(struct cli_listener *l, const struct cli_server_config *c, char *err, size_t errlen);

/* Close the socket and remove a unix socket's path while it is still ours. */
void cli_listener_close(struct cli_listener *l);

/* ---- access ---- */

/* Whether listen names TCP (HOST:PORT, [HOST]:PORT, :PORT) rather than a
 * unix socket path. */
bool cli_listen_is_tcp(const char *listen);

/* Whether a TCP listen address stays on this host: 127.0.0.0/8, ::1,
 * ::ffff:127.x, "localhost" or an empty host. Other names are not resolved
 * and count as not loopback. */
bool cli_listen_is_loopback(const char *listen);

/* Logins read from a password file: one USER:SECRET per line, '#' comments
 * and blank lines skipped. A SECRET starting with '$' is a crypt(3) hash
 * (`mkpasswd -m yescrypt`, `openssl passwd -6`); anything else is the
 * password itself. The file must be a regular file that others can neither
 * read nor write. */
struct cli_auth;

/* NULL with "PATH: reason" or "PATH:LINE: reason" in err. */
struct cli_auth *cli_auth_load(const char *path, char *err, size_t errlen);

/* Whether user and password match a line of the file. Thread-safe. */
bool cli_auth_check(const struct cli_auth *a, const char *user, const char *password);

/* Wipes the secrets. NULL is fine. */
void cli_auth_free(struct cli_auth *a);

/* Confine the files commands write to dir and below ("" or NULL: anywhere,
 * the default). dir is resolved now and must be a directory. Returns 0 or
 * a negative errno with the reason in err. cli_server_start calls it. */
int cli_set_file_dir(const char *dir, char *err, size_t errlen);

/* For a command about to create or write path: check it against the file
 * directory and put into out the path to open. With a file directory the
 * parent directory of path is resolved (realpath) and must lie under it,
 * and the last component must be a plain name ("..", "." refused) that is
 * not an existing symbolic link or directory; out is the resolved parent
 * joined with that name. Without one, out is path. Returns 0, or prints
 * "error: ..." and returns a negative errno (the command then changes
 * nothing). The check is only as good as the moment it was made: for a
 * file the command writes itself, cli_file_open is the one to use. */
int cli_file_path(struct cli_session *s, const char *path, char *out, size_t outlen);

/* Check path as cli_file_path does and open it for writing in the same
 * step: from the file directory down, every directory is opened without
 * following a symbolic link and so is the file, so a link planted after
 * the check cannot lead outside. The file is created (mode 0666 less the
 * umask) if need be but not truncated: the caller truncates once it is
 * sure to write. A FIFO, a device or a file with other hard links is
 * refused. Without a file directory, path is opened as it is (links
 * followed), still only if it is a plain file. out gets the path opened.
 * Returns the descriptor (close-on-exec), or prints "error: ..." and
 * returns a negative errno. */
int cli_file_open(struct cli_session *s, const char *path, char *out, size_t outlen);

/* cli_file_open, then the file truncated and opened as a stdio stream in
 * *f. Returns 0, or prints why and returns a negative errno. */
int cli_file_fopen(struct cli_session *s, const char *path, char *out, size_t outlen, FILE **f);

/* ---- registration ---- */

/* A command's function. argv holds the words after the command's path.
 * Return 0, or a negative errno after printing why; -EINVAL also prints the
 * command's usage, so bad arguments need only say what was wrong. */
typedef int(cli_command_fn_t)(struct cli_session *s, int argc, char **argv);

struct cli_alias;

struct cli_command_reg {
	const char *path;  /* words, VPP spelling: "show runtime" */
	const char *usage; /* "show runtime [verbose] [json]" */
	const char *help;  /* one line for `?` and `help` */
	cli_command_fn_t *fn;
	const struct cli_alias *alias; /* CLI_ALIAS: fn is NULL and the line runs another command */
};

/* Add a command to the registry (constructors, or before the server starts).
 * A path registered twice keeps the first; the second is logged. */
void cli_command_add(const struct cli_command_reg *reg);

/* How many registrations named a path registered before (each kept the
 * first), and in *last_path (when not NULL) the last such path. */
uint32_t cli_command_twice(const char **last_path);

/* Call fn for every registered command, in path order, with the registry
 * locked (fn must not add commands). `help json` lists them this way. */
void cli_command_foreach(void (*fn)(const struct cli_command_reg *reg, void *ctx), void *ctx);

/* Link a `static const struct cli_command_reg` into the registry. Objects
 * holding commands are linked whole so that the constructor survives. */
#define CLI_COMMAND_REGISTER(reg)                                                              \
	static void __attribute__((constructor)) cli_command_register_##reg(void)              \
	{                                                                                      \
		cli_command_add(&(reg));                                                       \
	}

/* Declare and register a command in one line, the one way every folder's
 * *_cli.c does it:
 *   CLI_COMMAND(show_foo_cmd, "show foo", "show foo [json]", "Foo's state", show_foo)
 */
#define CLI_COMMAND(id, path_, usage_, help_, fn_)                                             \
	static const struct cli_command_reg id = {                                             \
		.path = path_, .usage = usage_, .help = help_, .fn = fn_ };                    \
	CLI_COMMAND_REGISTER(id)

/* ---- aliases (cli_alias.c) ---- */

/* Another name for a registered command: VPP's spelling where sluice's
 * differs ("show hardware-interfaces" for "show hardware"). The alias is a
 * command of its own in the tree (help, completion, abbreviation) whose
 * line is translated and run by the target's function:
 *   target: the command line it becomes, a registered path followed by
 *     fixed words put before the alias's own ("show graph dot");
 *   words: how the alias's words translate, "VPP=sluice" pairs separated
 *     by spaces ("intfc=interface verbose="; an empty right side drops the
 *     word); words not listed pass as they are, in order.
 * Usage errors print the alias's usage and the target's. An alias of a
 * path this build lacks fails with -ENOENT when run. docs/vpp-cli.md lists
 * every alias. */
struct cli_alias {
	const char *target;
	const char *words; /* NULL: every word passes */
};

/* Translate an alias's words into its target's: *target gets the longest
 * registered command path that begins a->target, *argv_out the rest of
 * a->target's words followed by the alias's words as a->words translates
 * them (*argc_out in all). *argv_out is one malloc'd block, freed with
 * free(): its words point into it or into argv. Returns 0, -ENOENT (no
 * registered command begins a->target: this build lacks it) or -ENOMEM.
 * The dispatcher's step, public for tests. */
int cli_alias_translate(const struct cli_alias *a, int argc, char *const *argv,
			const struct cli_command_reg **target, int *argc_out, char ***argv_out);

/* Declare and register an alias, beside its target's CLI_COMMAND:
 *   CLI_ALIAS(show_hw_alias, "show hardware-interfaces", "show hardware-interfaces [NAME] [json]",
 *             "show hardware", "brief= verbose= detail=")
 */
#define CLI_ALIAS(id, path_, usage_, target_, words_)                                          \
	static const struct cli_alias id##_alias = { .target = target_, .words = words_ };   \
	static const struct cli_command_reg id = { .path = path_,                              \
						   .usage = usage_,                            \
						   .help = "VPP's name for '" target_ "'",     \
						   .alias = &id##_alias };                     \
	CLI_COMMAND_REGISTER(id)

/* ---- inside a command ---- */

/* The graph this session works on (NULL when none was set). */
struct graph *cli_graph(struct cli_session *s);

/* Print text; each call ends with a line break (a trailing '\n' is not
 * needed, embedded ones split lines). */
void cli_printf(struct cli_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print "error: <message>" and return err (a negative errno), so that a
 * command can `return cli_fail(s, -ENOENT, "no node %s", name);`. */
int cli_fail(struct cli_session *s, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Argument parsing by a small table: keywords in any order, positional
 * words in table order. Unknown words, missing positionals and bad numbers
 * print the reason and return -EINVAL (the caller returns it, which prints
 * usage); nothing is changed in that case beyond the outputs. */
enum cli_arg_kind {
	CLI_ARG_FLAG,    /* keyword alone: bool *dst set true */
	CLI_ARG_KEY_U32, /* keyword then a number: uint32_t *dst */
	CLI_ARG_WORD,    /* positional word: const char **dst */
	CLI_ARG_U32,     /* positional number: uint32_t *dst */
};

struct cli_arg {
	enum cli_arg_kind kind;
	const char *name; /* keyword, or the positional's name in messages */
	void *dst;
	uint32_t min, max; /* numbers: accepted range (both 0: any u32) */
};

int cli_args_parse(struct cli_session *s, int argc, char **argv, const struct cli_arg *args, size_t n_args);

/* The arguments of a command whose only word is an optional `json`: sets
 * *json, or prints usage and returns -EINVAL on anything else. */
int cli_json_arg(struct cli_session *s, int argc, char **argv, bool *json);

/* The arguments left to a command whose one positional word is optional
 * (`show nic [NAME] [json]`, once cli_take_flag took the flags): sets
 * *word to it, or to NULL when there is none; more, or a bad word, print
 * the reason and return -EINVAL as cli_args_parse does. what names the
 * word in messages. */
int cli_opt_word_arg(struct cli_session *s, int argc, char **argv, const char *what, const char **word);

/* Take the word flag out of argv wherever it stands (the first one; the
 * rest close up) and say whether it was there: how a command whose positional
 * words are optional accepts `json` before or after them. The word is
 * moved past the new *argc, not freed. */
bool cli_take_flag(int *argc, char **argv, const char *flag);

/* ---- output helpers ---- */

/* Text tables whose columns line up. Cells are added left to right, rows
 * wrap after the last column. */
struct cli_table_col {
	const char *name;
	bool right; /* right-align (numbers) */
};

struct cli_table;

/* NULL when out of memory. */
struct cli_table *cli_table_create(const struct cli_table_col *cols, uint32_t n_cols);
void cli_table_cell(struct cli_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The table as text, header first, lines joined by '\n' with no trailing
 * spaces; malloc'd, NULL when out of memory. */
char *cli_table_format(const struct cli_table *t);
/* Print and free the table. */
void cli_table_print(struct cli_session *s, struct cli_table *t);
void cli_table_free(struct cli_table *t);

/* Print a JSON document (indented) and delete it. Every `show` command
 * takes `json` (README "JSON output"): an object whose key names the
 * collection, arrays of objects with snake_case keys, numbers as numbers,
 * units in key names (`_ns`, `_bytes`). */
void cli_json_print(struct cli_session *s, cJSON *root);

/* Graphviz DOT text built node by node. Ids and labels are quoted and
 * escaped here; a '\n' in a label becomes a line break in the drawing. */
struct cli_dot;

struct cli_dot *cli_dot_create(const char *graph_name);
/* A raw statement, for graph-wide attributes: "rankdir=LR",
 * "node [shape=box]". */
void cli_dot_statement(struct cli_dot *d, const char *stmt);
/* attrs: extra raw DOT attributes ("shape=box, color=gray") or NULL. */
void cli_dot_node(struct cli_dot *d, const char *id, const char *label, const char *attrs);
void cli_dot_edge(struct cli_dot *d, const char *from, const char *to, const char *label, const char *attrs);
/* Close the graph and return its text (malloc'd; NULL when out of memory);
 * frees d. */
char *cli_dot_finish(struct cli_dot *d);

#endif
