/* The CLI server: one listening socket (unix, or TCP on loopback by
 * default), an accept thread, and one thread per session, none of them a
 * datapath thread. Sessions are a fixed table (cli-max-sessions) so that
 * stopping the server can wake and join every one of them.
 *
 * The listening socket is cli_listen.c's; reading hellos and bounded lines
 * is cli_wire.c's. This file holds the sessions (one-shot, interactive,
 * login), the accept loop, `show cli`, and the exec files and lines that
 * run commands without a socket.
 *
 * What a client can make the server hold is bounded: a command line is at
 * most cli-max-line bytes (libcli's editor has a fixed buffer; one-shot
 * lines are read into one of that size), a silent session closes after
 * cli-idle-timeout, a client that stops reading loses its output after
 * SEND_TIMEOUT_S instead of holding the command lock, and a connection past
 * cli-max-sessions is told so and closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libcli.h>

#include "cli/cli_private.h"
#include "base/util.h"
#include "sluice_version.h"

#define ONESHOT_TIMEOUT_S 10 /* a one-shot client must send its line within this */
#define SEND_TIMEOUT_S 10
#define LOGIN_FAIL_DELAY_NS 1000000000ull /* after each refused login: slows guessing */
#define LOGIN_MAX_TRIES 3                 /* per libcli session, then it is closed */

struct slot {
	pthread_t thread;
	int fd;        /* -1 once the session closed it */
	bool used;     /* a thread was started and not yet joined */
	bool finished; /* the thread is about to return */
	uint32_t n_login_failures;
	bool sluicectl; /* a sluicectl hello: a refusal ends with a status */
};

/* For `show cli`; updated with atomics by every session thread. */
struct server_counts {
	uint64_t accepted, refused_busy, logins, login_failures, idle_closed, long_lines, closed;
	uint64_t commands, command_errors; /* commands run (sessions and exec files), and those that failed */
};

static struct {
	bool running;
	struct cli_listener listener;
	int wake[2]; /* a byte here stops the accept thread */
	pthread_t accept_thread;
	struct cli_server_config cfg; /* as started, defaults filled in */
	struct cli_auth *auth;        /* NULL: no login */
	pthread_mutex_t lock;         /* guards slots[].fd, used, finished */
	struct slot *slots;
	struct server_counts n;
} srv = { .listener = { .fd = -1 }, .wake = { -1, -1 }, .lock = PTHREAD_MUTEX_INITIALIZER };

/* The session the running thread serves, for libcli's context-free login
 * callback. */
static __thread struct slot *current_slot;

static void count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

void cli_server_count_long_line(void)
{
	count(&srv.n.long_lines);
}

void cli_server_count_command(int rc)
{
	count(&srv.n.commands);
	if (rc < 0)
		count(&srv.n.command_errors);
}

void cli_server_config_default(struct cli_server_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->listen, sizeof(cfg->listen), "%s", SLUICE_DEFAULT_CLI_SOCKET);
	cfg->socket_mode = CLI_SOCKET_MODE_DEFAULT;
	cfg->max_sessions = CLI_MAX_SESSIONS_DEFAULT;
	cfg->idle_timeout_s = CLI_IDLE_TIMEOUT_DEFAULT_S;
	cfg->max_line = CLI_LINE_MAX;
}

int cli_errf(char *err, size_t errlen, int rc, const char *fmt, const char *what)
{
	snprintf(err, errlen, fmt, what, strerror(-rc));
	return rc;
}

/* ---- sessions ---- */

/* Check a login against the password file; a refusal is logged and costs
 * the client LOGIN_FAIL_DELAY_NS. */
static bool login_ok(const char *user, const char *password)
{
	if (cli_auth_check(srv.auth, user, password)) {
		count(&srv.n.logins);
		return true;
	}
	count(&srv.n.login_failures);
	base_log("cli", "login refused for user '%.64s'", user);
	struct timespec ts = { LOGIN_FAIL_DELAY_NS / 1000000000ull, LOGIN_FAIL_DELAY_NS % 1000000000ull };
	nanosleep(&ts, NULL);
	return false;
}

/* The user and password lines after a "+auth" hello. A server without a
 * password file reads and ignores them. */
static bool read_login(int fd)
{
	char user[CLI_AUTH_LINE_MAX + 1], password[CLI_AUTH_LINE_MAX + 1];
	bool ok = cli_wire_read_line(fd, user, CLI_AUTH_LINE_MAX) == 0 &&
		  cli_wire_read_line(fd, password, CLI_AUTH_LINE_MAX) == 0 && (!srv.auth || login_ok(user, password));
	explicit_bzero(password, sizeof(password));
	return ok;
}

/* libcli's login prompt, for telnet-style clients: three refusals end the
 * session (libcli itself would ask forever). */
static int libcli_login(const char *user, const char *password)
{
	if (login_ok(user, password))
		return CLI_OK;
	struct slot *sl = current_slot;
	if (sl && ++sl->n_login_failures >= LOGIN_MAX_TRIES) {
		/* Both ways: shutting reads alone would still hand libcli what
		 * the client already sent, such as a fourth try. */
		cli_wire_send_text(sl->fd, "\r\nAccess denied: too many failed logins\r\n");
		if (sl->sluicectl)
			cli_wire_send_status(sl->fd, -EACCES);
		shutdown(sl->fd, SHUT_RDWR);
	}
	return CLI_ERROR;
}

static int idle_closed(struct cli_def *def)
{
	count(&srv.n.idle_closed);
	cli_print(def, "idle for %us: session closed", srv.cfg.idle_timeout_s);
	return CLI_QUIT;
}

static void run_oneshot(int fd, bool logged_in)
{
	if (srv.auth && !logged_in) {
		cli_wire_send_text(fd, "error: this CLI needs a login (sluicectl -a FILE)\n");
		cli_wire_send_status(fd, -EACCES);
		return;
	}
	uint32_t max = srv.cfg.max_line;
	char *line = malloc(max + 1);
	struct cli_session *s = cli_session_create(cli_current_graph(), CLI_OUT_SOCKET, fd);
	int rc = line && s ? cli_wire_read_line(fd, line, max) : -ENOMEM;
	bool client_gone = rc == -ECONNABORTED;
	if (rc == -EMSGSIZE) {
		char msg[96];
		count(&srv.n.long_lines);
		snprintf(msg, sizeof(msg), "error: command line longer than %u bytes; nothing was run\n", max);
		cli_wire_send_text(fd, msg);
	} else if (!rc) {
		s->max_line = max;
		rc = cli_session_run(s, line);
	}
	if (!client_gone)
		cli_wire_send_status(fd, rc);
	cli_session_destroy(s);
	free(line);
}

/* libcli closes the stream it is given, so it gets a duplicate: the slot's
 * own descriptor stays valid for cli_server_stop to shut down. */
static void run_interactive(int fd, bool telnet, bool logged_in)
{
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	struct cli_session *s = dup_fd >= 0 ? cli_session_create(cli_current_graph(), CLI_OUT_CLIENT, dup_fd) : NULL;
	if (!s) {
		if (dup_fd >= 0)
			close(dup_fd);
		return;
	}
	s->max_line = srv.cfg.max_line;
	if (srv.auth && !logged_in)
		cli_set_auth_callback(s->def, libcli_login);
	if (srv.cfg.idle_timeout_s)
		cli_set_idle_timeout_callback(s->def, srv.cfg.idle_timeout_s, idle_closed);
	cli_telnet_protocol(s->def, telnet);
	cli_loop(s->def, dup_fd);
	cli_session_destroy(s);
}

/* Reads wait at most the idle timeout (one-shot lines: ONESHOT_TIMEOUT_S
 * at most); writes to a client that stopped reading give up after
 * SEND_TIMEOUT_S. libcli waits with select, so neither cuts its sessions. */
static void set_timeouts(int fd)
{
	uint32_t idle = srv.cfg.idle_timeout_s;
	struct timeval rcv = { .tv_sec = idle && idle < ONESHOT_TIMEOUT_S ? idle : ONESHOT_TIMEOUT_S };
	struct timeval snd = { .tv_sec = SEND_TIMEOUT_S };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof(rcv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof(snd));
}

static void *session_main(void *arg)
{
	struct slot *slot = arg;
	int fd = slot->fd;
	current_slot = slot;
	set_timeouts(fd);
	bool login;
	enum cli_hello h = cli_wire_read_hello(fd, &login);
	bool logged_in = login && read_login(fd);
	slot->sluicectl = h != CLI_HELLO_KIND_NONE;
	if (login && !logged_in) {
		cli_wire_send_text(fd, "error: login refused\n");
		cli_wire_send_status(fd, -EACCES);
	} else if (h == CLI_HELLO_KIND_EXEC) {
		run_oneshot(fd, logged_in);
	} else {
		run_interactive(fd, h == CLI_HELLO_KIND_NONE, logged_in);
	}
	pthread_mutex_lock(&srv.lock);
	close(slot->fd);
	slot->fd = -1;
	slot->finished = true;
	pthread_mutex_unlock(&srv.lock);
	count(&srv.n.closed);
	return NULL;
}

/* Join finished sessions; return a free slot or NULL. Caller holds lock. */
static struct slot *reap_and_find(void)
{
	struct slot *free_slot = NULL;
	for (uint32_t i = 0; i < srv.cfg.max_sessions; i++) {
		struct slot *sl = &srv.slots[i];
		if (sl->used && sl->finished) {
			pthread_join(sl->thread, NULL);
			sl->used = false;
		}
		if (!sl->used && !free_slot)
			free_slot = sl;
	}
	return free_slot;
}

static void start_session(int fd)
{
	pthread_mutex_lock(&srv.lock);
	struct slot *sl = reap_and_find();
	if (sl) {
		*sl = (struct slot){ .fd = fd, .used = true };
		if (pthread_create(&sl->thread, NULL, session_main, sl)) {
			sl->used = false;
			sl = NULL;
		}
	}
	pthread_mutex_unlock(&srv.lock);
	if (sl) {
		count(&srv.n.accepted);
		return;
	}
	char msg[128];
	count(&srv.n.refused_busy);
	snprintf(msg, sizeof(msg), "error: too many CLI sessions (cli-max-sessions %u), try again later\n",
		 srv.cfg.max_sessions);
	cli_wire_send_text(fd, msg);
	close(fd);
}

static void *accept_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p[2] = { { .fd = srv.listener.fd, .events = POLLIN }, { .fd = srv.wake[0], .events = POLLIN } };
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		int fd = accept4(srv.listener.fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			start_session(fd);
	}
	return NULL;
}

/* Session and accept threads block every signal: SIGPIPE then turns into
 * EPIPE on a client that left, and the daemon's SIGINT/SIGTERM go to the
 * threads that decide to exit. */
static int start_accept_thread(void)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&srv.accept_thread, NULL, accept_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}

static void close_listener(void)
{
	cli_listener_close(&srv.listener);
	for (int i = 0; i < 2; i++) {
		if (srv.wake[i] >= 0)
			close(srv.wake[i]);
		srv.wake[i] = -1;
	}
	free(srv.slots);
	srv.slots = NULL;
	cli_auth_free(srv.auth);
	srv.auth = NULL;
}

/* The effective configuration: zero fields take their defaults. */
static void fill_defaults(struct cli_server_config *c)
{
	if (!c->listen[0])
		snprintf(c->listen, sizeof(c->listen), "%s", SLUICE_DEFAULT_CLI_SOCKET);
	if (!c->socket_mode)
		c->socket_mode = CLI_SOCKET_MODE_DEFAULT;
	if (!c->max_sessions)
		c->max_sessions = CLI_MAX_SESSIONS_DEFAULT;
	if (!c->max_line || c->max_line > CLI_LINE_MAX)
		c->max_line = CLI_LINE_MAX;
}

/* Who may connect and what commands may write, before anything listens. */
static int prepare_access(const struct cli_server_config *c, char *err, size_t errlen)
{
	if (cli_listen_is_tcp(c->listen) && !cli_listen_is_loopback(c->listen) && !c->password_file[0]) {
		snprintf(err, errlen, "cli: %s is not a loopback address: refusing to listen without cli-password-file",
			 c->listen);
		return -EPERM;
	}
	if (c->password_file[0]) {
		char why[512];
		srv.auth = cli_auth_load(c->password_file, why, sizeof(why));
		if (!srv.auth) {
			snprintf(err, errlen, "cli: cli-password-file %s", why);
			return -EINVAL;
		}
	}
	return cli_set_file_dir(c->file_dir, err, errlen);
}

int cli_server_start(const struct cli_server_config *cfg, char *err, size_t errlen)
{
	if (srv.running)
		return cli_errf(err, errlen, -EALREADY, "cli: %s%s", "server already running: ");
	cli_set_graph(cfg->graph);
	srv.cfg = *cfg;
	fill_defaults(&srv.cfg);
	for (uint64_t *c = &srv.n.accepted; c <= &srv.n.command_errors; c++) /* stores a reader may meet */
		__atomic_store_n(c, 0, __ATOMIC_RELAXED);
	const struct cli_server_config *c = &srv.cfg;
	srv.slots = calloc(c->max_sessions, sizeof(*srv.slots));
	if (!srv.slots || pipe2(srv.wake, O_CLOEXEC) < 0) {
		close_listener();
		return cli_errf(err, errlen, -ENOMEM, "cli: %s%s", "cannot start: ");
	}
	int rc = prepare_access(c, err, errlen);
	if (rc) {
		close_listener();
		return rc;
	}
	cli_runcfg_baseline_at_start(cfg->graph); /* what startup.conf made, before anyone connects */
	rc = cli_listener_open(&srv.listener, c, err, errlen);
	rc = rc < 0 ? rc : start_accept_thread();
	if (rc < 0) {
		if (srv.listener.fd >= 0)
			cli_errf(err, errlen, rc, "cli: %s%s", "cannot start the accept thread: ");
		close_listener();
		return rc;
	}
	srv.running = true;
	base_log("cli", "listening on %s: %s, %u session(s), idle timeout %us, lines up to %u bytes%s%s", c->listen,
		  srv.auth ? "login required" : "no login", c->max_sessions, c->idle_timeout_s, c->max_line,
		  c->file_dir[0] ? ", files under " : "", c->file_dir);
	return 0;
}

void cli_server_stop(void)
{
	if (!srv.running)
		return;
	if (write(srv.wake[1], "x", 1) < 0)
		base_log("cli", "cannot wake the accept thread: %s", strerror(errno));
	pthread_join(srv.accept_thread, NULL);
	for (uint32_t i = 0; i < srv.cfg.max_sessions; i++) {
		struct slot *sl = &srv.slots[i];
		pthread_mutex_lock(&srv.lock);
		bool used = sl->used;
		if (sl->fd >= 0)
			shutdown(sl->fd, SHUT_RDWR);
		pthread_mutex_unlock(&srv.lock);
		if (used)
			pthread_join(sl->thread, NULL);
		sl->used = false;
	}
	close_listener();
	cli_set_file_dir(NULL, NULL, 0);
	srv.running = false;
}

/* ---- show cli ---- */

static uint32_t open_sessions(void)
{
	uint32_t n = 0;
	pthread_mutex_lock(&srv.lock);
	for (uint32_t i = 0; i < srv.cfg.max_sessions; i++)
		n += srv.slots[i].used && !srv.slots[i].finished;
	pthread_mutex_unlock(&srv.lock);
	return n;
}

static uint64_t load(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

static const struct {
	const char *name;
	const uint64_t *v;
} cli_counters[] = {
	{ "accepted", &srv.n.accepted },       { "refused_busy", &srv.n.refused_busy },
	{ "logins", &srv.n.logins },           { "login_failures", &srv.n.login_failures },
	{ "idle_closed", &srv.n.idle_closed }, { "long_lines", &srv.n.long_lines },
	{ "commands", &srv.n.commands },       { "command_errors", &srv.n.command_errors },
};

void cli_server_counters(struct cli_server_counters *c)
{
	const struct server_counts *n = &srv.n;
	*c = (struct cli_server_counters){ load(&n->accepted),	load(&n->refused_busy), load(&n->logins),
					    load(&n->login_failures), load(&n->idle_closed),  load(&n->long_lines),
					    load(&n->closed), load(&n->commands), load(&n->command_errors), 0 };
	c->sessions_open = c->accepted > c->closed ? c->accepted - c->closed : 0;
}

static void show_cli_json(struct cli_session *s)
{
	const struct cli_server_config *c = &srv.cfg;
	char mode[8];
	snprintf(mode, sizeof(mode), "%04o", (unsigned)c->socket_mode);
	cJSON *root = cJSON_CreateObject();
	cJSON *o = cJSON_AddObjectToObject(root, "cli");
	cJSON_AddStringToObject(o, "listen", c->listen);
	cJSON_AddStringToObject(o, "transport", srv.listener.unix_socket ? "unix" : "tcp");
	cJSON_AddStringToObject(o, "socket_mode", mode);
	cJSON_AddStringToObject(o, "socket_group", c->socket_group);
	cJSON_AddStringToObject(o, "password_file", srv.auth ? c->password_file : "");
	cJSON_AddNumberToObject(o, "sessions_open", open_sessions());
	cJSON_AddNumberToObject(o, "max_sessions", c->max_sessions);
	cJSON_AddNumberToObject(o, "idle_timeout_s", c->idle_timeout_s);
	cJSON_AddNumberToObject(o, "max_line_bytes", c->max_line);
	cJSON_AddStringToObject(o, "file_dir", c->file_dir);
	for (size_t i = 0; i < ARRAY_LEN(cli_counters); i++)
		cJSON_AddNumberToObject(o, cli_counters[i].name, (double)load(cli_counters[i].v));
	cli_json_print(s, root);
}

/*
 * sluice> show cli
 * listen          /run/sluice/cli.sock (unix, mode 0600, group -)
 * login           none
 * sessions        1 open of 8
 * idle-timeout    300s
 * max-line        4094
 * file-dir        -
 * accepted        12
 * refused-busy    0
 * logins          0
 * login-failures  0
 * idle-closed     1
 * long-lines      2
 * sluice> show cli json
 * {"cli": {"listen": "/run/sluice/cli.sock", "transport": "unix", "socket_mode": "0600", "socket_group": "",
 *          "password_file": "", "sessions_open": 1, "max_sessions": 8, "idle_timeout_s": 300,
 *          "max_line_bytes": 4094, "file_dir": "", "accepted": 12, ..., "long_lines": 2}}
 */
static int show_cli(struct cli_session *s, int argc, char **argv)
{
	bool json = cli_take_flag(&argc, argv, "json");
	if (argc)
		return cli_fail(s, -EINVAL, "unexpected '%s'", argv[0]);
	if (!srv.running)
		return cli_fail(s, -ENOTCONN, "the CLI server is not running");
	const struct cli_server_config *c = &srv.cfg;
	if (json) {
		show_cli_json(s);
		return 0;
	}
	if (srv.listener.unix_socket)
		cli_printf(s, "%-15s %s (unix, mode %04o, group %s)", "listen", c->listen, (unsigned)c->socket_mode,
			   c->socket_group[0] ? c->socket_group : "-");
	else
		cli_printf(s, "%-15s %s (tcp)", "listen", c->listen);
	cli_printf(s, "%-15s %s%s", "login", srv.auth ? "password file " : "none", srv.auth ? c->password_file : "");
	cli_printf(s, "%-15s %u open of %u", "sessions", open_sessions(), c->max_sessions);
	cli_printf(s, "%-15s %us", "idle-timeout", c->idle_timeout_s);
	cli_printf(s, "%-15s %u", "max-line", c->max_line);
	cli_printf(s, "%-15s %s", "file-dir", c->file_dir[0] ? c->file_dir : "-");
	/* The text spells the counters with dashes, VPP-style. */
	for (size_t i = 0; i < ARRAY_LEN(cli_counters); i++) {
		char name[32];
		snprintf(name, sizeof(name), "%s", cli_counters[i].name);
		for (char *p = strchr(name, '_'); p; p = strchr(p, '_'))
			*p = '-';
		cli_printf(s, "%-15s %llu", name, (unsigned long long)load(cli_counters[i].v));
	}
	return 0;
}

CLI_COMMAND(show_cli_cmd, "show cli", "show cli [json]", "The CLI server: listen address, limits, sessions and refusals",
	    show_cli)
CLI_ALIAS(show_cli_sessions_alias, "show cli-sessions", "show cli-sessions [json]", "show cli", NULL)

/* ---- exec files and lines ---- */

int cli_exec_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return cli_errf(err, errlen, -errno, "%s: %s", path);
	struct cli_session *s = cli_session_create(cli_current_graph(), CLI_OUT_LOG, -1);
	struct cli_exec_result r;
	int rc = s ? cli_exec_stream(f, path, s, NULL, NULL, &r, err, errlen) : -ENOMEM;
	if (rc == -ENOMEM && !s)
		snprintf(err, errlen, "%s: out of memory", path);
	cli_session_destroy(s);
	fclose(f);
	return rc;
}

int cli_exec_line(const char *line, char **out)
{
	if (out)
		*out = NULL;
	if (strlen(line) > CLI_LINE_MAX)
		return -EMSGSIZE;
	struct cli_session *s = cli_session_create(cli_current_graph(), CLI_OUT_BUFFER, -1);
	if (!s)
		return -ENOMEM;
	int rc = cli_session_run(s, line);
	if (out) {
		*out = s->out ? s->out : strdup("");
		s->out = NULL;
	}
	cli_session_destroy(s);
	return rc;
}
