/* What cli/ shares between its files and with sluicectl: the wire protocol
 * and the session layout. Nothing here is for subsystems.
 *
 * Wire protocol. A client may open with one hello line:
 *   "SLUICECTL/1 exec\n" then one command line ending in '\n': the server
 *     runs it, sends its output ('\n'-terminated lines), then a NUL byte, the
 *     decimal status (0, or the positive errno of the failure) and '\n', and
 *     closes. This is how `sluicectl CMD` learns that a command failed.
 *   "SLUICECTL/1 interactive\n": a libcli session without telnet option
 *     negotiation, for sluicectl's raw terminal relay. When libcli's own
 *     login prompt refuses a third time, the session ends like a refused
 *     login below (the NUL, the status, the close).
 *   "SLUICECTL/1 exec+auth\n" or "SLUICECTL/1 interactive+auth\n", then a
 *     user line and a password line ('\n'-terminated, at most
 *     CLI_AUTH_LINE_MAX bytes each): the same after a login, for a server
 *     with a password file (one without ignores the two lines). A refused
 *     login gets "error: ..." and status EACCES (NUL, decimal, '\n', as
 *     above, after either hello), then the close.
 * A client that sends nothing within CLI_HELLO_WAIT_MS, or something else,
 * gets a telnet-style libcli session (nc -U, socat, telnet to the TCP port);
 * what it sent is left for libcli to read. With a password file, libcli asks
 * for the user and password first.
 */
#ifndef SLUICE_CLI_CLI_PRIVATE_H
#define SLUICE_CLI_CLI_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/un.h>

#define CLI_HELLO_EXEC "SLUICECTL/1 exec\n"
#define CLI_HELLO_INTERACTIVE "SLUICECTL/1 interactive\n"
#define CLI_HELLO_EXEC_AUTH "SLUICECTL/1 exec+auth\n"
#define CLI_HELLO_INTERACTIVE_AUTH "SLUICECTL/1 interactive+auth\n"
#define CLI_AUTH_LINE_MAX 600
#define CLI_HELLO_WAIT_MS 200
#define CLI_STATUS_MARK '\0'

#ifndef SLUICECTL

#include "cli/cli.h"

struct cli_def;

/* Where a session's output goes. */
enum cli_out {
	CLI_OUT_CLIENT, /* libcli's own client stream (interactive sessions) */
	CLI_OUT_SOCKET, /* one-shot: lines written to fd */
	CLI_OUT_BUFFER, /* cli_exec_line: collected in out */
	CLI_OUT_LOG,    /* exec files: one log line each */
};

struct cli_session {
	struct cli_def *def; /* libcli's per-session state and command tree */
	struct graph *graph;
	enum cli_out out_mode;
	int fd;
	int status;   /* negative errno of the last command run, 0 when it worked */
	uint32_t max_line; /* longer command lines are refused */
	bool printed; /* the last command printed something */
	char *out;
	size_t out_len, out_cap;
};

/* Create a session with the registry's command tree; NULL when out of
 * memory. */
struct cli_session *cli_session_create(struct graph *g, enum cli_out mode, int fd);
void cli_session_destroy(struct cli_session *s);

/* Run one line in a session; returns 0 or a negative errno. */
int cli_session_run(struct cli_session *s, const char *line);

/* The registered command whose path is path exactly, or NULL. */
const struct cli_command_reg *cli_registry_find(const char *path);

/* The graph new sessions get. */
struct graph *cli_current_graph(void);

/* HOST:PORT, [HOST]:PORT or :PORT (loopback) split; host gets "127.0.0.1"
 * for an empty host. */
void cli_split_host_port(const char *listen, char *host, size_t hostlen, const char **port);

/* Count a command line refused for its length (for `show cli`). */
void cli_server_count_long_line(void);

/* Count a command run (rc: its result; negative counts as an error too),
 * for `show cli` and the stats segment. Under the command lock. */
void cli_server_count_command(int rc);

/* ---- the server's parts (cli_server.c, cli_listen.c, cli_wire.c) ---- */

/* snprintf(err, errlen, fmt, what, strerror(-rc)); returns rc. fmt takes
 * two %s: what, then the reason. */
int cli_errf(char *err, size_t errlen, int rc, const char *fmt, const char *what);

/* What a client's first line says it is (cli_wire.c). */
enum cli_hello { CLI_HELLO_KIND_NONE, CLI_HELLO_KIND_EXEC, CLI_HELLO_KIND_INTERACTIVE };

/* Peek at what the client sends first, for at most CLI_HELLO_WAIT_MS;
 * consume it only when it is one of our hellos. *login: the hello says
 * that a user and a password line follow. */
enum cli_hello cli_wire_read_hello(int fd, bool *login);

/* Read one line of at most max bytes into line (max + 1 bytes), consuming
 * nothing past its '\n': what follows may be libcli's to read. Returns 0,
 * -EMSGSIZE for a longer line (its rest skipped), or -ECONNABORTED when the
 * client left or stalled (SO_RCVTIMEO). */
int cli_wire_read_line(int fd, char *line, size_t max);

/* Send text, or the status trailer (CLI_STATUS_MARK, -rc in decimal,
 * '\n'); a client that left is ignored. */
void cli_wire_send_text(int fd, const char *text);
void cli_wire_send_status(int fd, int rc);

/* cli_exec.c: run the command lines of f (path: its name in messages) in
 * s, one per line; blank lines and '#' comments skipped; after(s, ctx), when
 * not NULL, after each command. Stops at the first failure: returns its
 * negative errno with "PATH:LINE: command: reason" in err. r says how many
 * commands worked and the failing line. Lines of the file are at most
 * CLI_LINE_MAX bytes (-EMSGSIZE). */
struct cli_exec_result {
	unsigned n_applied; /* commands that worked */
	unsigned fail_line; /* 0: none failed */
};
int cli_exec_stream(FILE *f, const char *path, struct cli_session *s, void (*after)(struct cli_session *, void *),
		    void *ctx, struct cli_exec_result *r, char *err, size_t errlen);

/* cli_runcfg.c: keep the writers' items now as the running
 * configuration's baseline (cli_server_start, before it listens). */
void cli_runcfg_baseline_at_start(struct graph *g);

/* cli_elog.c: log a command that began at start (cpu_ticks()) and ended
 * with rc in the event log. */
void cli_elog_command(const char *path, uint64_t start, int rc);

#endif
#endif
