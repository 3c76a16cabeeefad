/* The CLI server: one listening socket (unix, or TCP on loopback by
 * default), an accept thread, and one thread per session, none of them a
 * datapath thread. Sessions are a fixed table (cli-max-sessions) so that
 * stopping the server can wake and join every one of them.
 *
 * The unix socket is bound inside a private 0700 directory, given its group
 * and mode, and renamed into place, so that it never exists with looser
 * permissions (a umask dance would be process-wide and racy).
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
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <libcli.h>

#include "cli/cli_private.h"
#include "base/util.h"
#include "sluice_version.h"

#define ONESHOT_TIMEOUT_S 10 /* a one-shot client must send its line within this */
#define DISCARD_LIMIT_NS (2ull * 1000000000ull)
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
	uint64_t accepted, refused_busy, logins, login_failures, idle_closed, long_lines;
};

static struct {
	bool running;
	int listen_fd;
	int wake[2]; /* a byte here stops the accept thread */
	pthread_t accept_thread;
	bool unix_socket;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	ino_t ino; /* our socket's inode: remove the path only while it is ours */
	struct cli_server_config cfg; /* as started, defaults filled in */
	struct cli_auth *auth;        /* NULL: no login */
	pthread_mutex_t lock;         /* guards slots[].fd, used, finished */
	struct slot *slots;
	struct server_counts n;
} srv = { .listen_fd = -1, .wake = { -1, -1 }, .lock = PTHREAD_MUTEX_INITIALIZER };

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

void cli_server_config_default(struct cli_server_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->listen, sizeof(cfg->listen), "%s", SLUICE_DEFAULT_CLI_SOCKET);
	cfg->socket_mode = CLI_SOCKET_MODE_DEFAULT;
	cfg->max_sessions = CLI_MAX_SESSIONS_DEFAULT;
	cfg->idle_timeout_s = CLI_IDLE_TIMEOUT_DEFAULT_S;
	cfg->max_line = CLI_LINE_MAX;
}

/* ---- listening sockets ---- */

static int fail(char *err, size_t errlen, int rc, const char *fmt, const char *what)
{
	snprintf(err, errlen, fmt, what, strerror(-rc));
	return rc;
}

static int mkdir_parents(const char *dir)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* A socket file left by a dead sluice is removed; a live one is not. */
static int clear_stale(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	bool live = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	if (live)
		return -EADDRINUSE;
	return unlink(path) < 0 ? -errno : 0;
}

static int group_id(const char *name, gid_t *gid)
{
	char buf[4096];
	struct group gr, *res = NULL;
	*gid = (gid_t)-1;
	if (!name[0])
		return 0;
	int rc = getgrnam_r(name, &gr, buf, sizeof(buf), &res);
	if (rc)
		return -rc;
	if (!res)
		return -ENOENT;
	*gid = gr.gr_gid;
	return 0;
}

static int bind_private(int fd, const char *path, mode_t mode, gid_t gid, char *tmpdir)
{
	char dirbuf[PATH_MAX];
	snprintf(dirbuf, sizeof(dirbuf), "%s", path);
	snprintf(tmpdir, PATH_MAX, "%s/.cli-XXXXXX", dirname(dirbuf));
	if (!mkdtemp(tmpdir))
		return -errno;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if ((size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s/s", tmpdir) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || (gid != (gid_t)-1 && chown(a.sun_path, (uid_t)-1, gid) < 0) ||
	    chmod(a.sun_path, mode) < 0 || rename(a.sun_path, path) < 0) {
		int rc = -errno;
		unlink(a.sun_path);
		return rc;
	}
	return 0;
}

static int listen_unix(const char *path, mode_t mode, const char *group, char *err, size_t errlen)
{
	if (strlen(path) >= sizeof(srv.path))
		return fail(err, errlen, -ENAMETOOLONG, "cli: socket path %s: %s", path);
	gid_t gid;
	int rc = group_id(group, &gid);
	if (rc)
		return fail(err, errlen, rc, "cli: cli-group %s: %s", group);
	char dirbuf[PATH_MAX];
	snprintf(dirbuf, sizeof(dirbuf), "%s", path);
	rc = mkdir_parents(dirname(dirbuf));
	if (rc)
		return fail(err, errlen, rc, "cli: cannot create the directory of %s: %s", path);
	rc = clear_stale(path);
	if (rc)
		return fail(err, errlen, rc, "cli: %s: %s (another sluice listening, or not a socket)", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(err, errlen, -errno, "cli: socket for %s: %s", path);
	char tmpdir[PATH_MAX] = "";
	rc = bind_private(fd, path, mode, gid, tmpdir);
	if (tmpdir[0])
		rmdir(tmpdir);
	struct stat st;
	if (!rc && (listen(fd, 16) < 0 || stat(path, &st) < 0))
		rc = -errno;
	if (rc) {
		close(fd);
		return fail(err, errlen, rc, "cli: cannot listen on %s: %s", path);
	}
	srv.unix_socket = true;
	srv.ino = st.st_ino;
	snprintf(srv.path, sizeof(srv.path), "%s", path);
	return fd;
}

static int listen_tcp(const char *listen_addr, char *err, size_t errlen)
{
	char host[256];
	const char *port;
	cli_split_host_port(listen_addr, host, sizeof(host), &port);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai;
	int g = getaddrinfo(host, port, &hints, &ai);
	if (g) {
		snprintf(err, errlen, "cli: %s: %s", listen_addr, gai_strerror(g));
		return -EINVAL;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	int rc = 0;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 16) < 0)
		rc = -errno;
	freeaddrinfo(ai);
	if (rc) {
		if (fd >= 0)
			close(fd);
		return fail(err, errlen, rc, "cli: cannot listen on %s: %s", listen_addr);
	}
	srv.unix_socket = false;
	return fd;
}

/* ---- sessions ---- */

enum hello { HELLO_NONE, HELLO_EXEC, HELLO_INTERACTIVE };

static const struct {
	const char *text;
	enum hello kind;
	bool login;
} hellos[] = {
	{ CLI_HELLO_EXEC, HELLO_EXEC, false },
	{ CLI_HELLO_INTERACTIVE, HELLO_INTERACTIVE, false },
	{ CLI_HELLO_EXEC_AUTH, HELLO_EXEC, true },
	{ CLI_HELLO_INTERACTIVE_AUTH, HELLO_INTERACTIVE, true },
};

/* 1: buf so far is a prefix of (or holds) hello; 0: it cannot be. */
static bool may_be(const char *buf, size_t n, const char *hello)
{
	size_t h = strlen(hello);
	return !memcmp(buf, hello, MIN(n, h));
}

/* Peek at what the client sends first, for at most CLI_HELLO_WAIT_MS;
 * consume it only when it is one of our hellos. *login: the hello says
 * that a user and a password line follow. */
static enum hello read_hello(int fd, bool *login)
{
	char buf[64];
	uint64_t deadline = time_now_ns() + CLI_HELLO_WAIT_MS * 1000000ull;
	*login = false;
	for (;;) {
		uint64_t now = time_now_ns();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (now >= deadline || poll(&p, 1, (int)((deadline - now) / 1000000) + 1) <= 0)
			return HELLO_NONE;
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
		if (n <= 0)
			return HELLO_NONE;
		bool any = false;
		for (size_t i = 0; i < ARRAY_LEN(hellos); i++) {
			size_t h = strlen(hellos[i].text);
			if ((size_t)n >= h && !memcmp(buf, hellos[i].text, h)) {
				if (recv(fd, buf, h, 0) != (ssize_t)h)
					return HELLO_NONE;
				*login = hellos[i].login;
				return hellos[i].kind;
			}
			any |= may_be(buf, (size_t)n, hellos[i].text);
		}
		if (!any)
			return HELLO_NONE;
		/* a partial hello: wait for the rest without spinning */
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

/* Skip the rest of an over-long line, bounded in time so that a client
 * streaming forever cannot hold the session. */
static void discard_line(int fd)
{
	char buf[4096];
	uint64_t deadline = time_now_ns() + DISCARD_LIMIT_NS;
	while (time_now_ns() < deadline) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0 || memchr(buf, '\n', (size_t)n))
			return;
	}
}

/* Read one line of at most max bytes into line (max + 1 bytes), consuming
 * nothing past its '\n': what follows may be libcli's to read. Returns 0,
 * -EMSGSIZE for a longer line, or -ECONNABORTED when the client left or
 * stalled (SO_RCVTIMEO). */
static int read_line(int fd, char *line, size_t max)
{
	size_t len = 0;
	for (;;) {
		ssize_t n = recv(fd, line + len, max + 1 - len, MSG_PEEK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -ECONNABORTED;
		char *nl = memchr(line + len, '\n', (size_t)n);
		size_t take = nl ? (size_t)(nl - (line + len)) + 1 : (size_t)n;
		if (recv(fd, line + len, take, 0) != (ssize_t)take)
			return -ECONNABORTED;
		len += take;
		if (nl) {
			line[len - 1] = 0;
			if (len >= 2 && line[len - 2] == '\r')
				line[len - 2] = 0;
			return 0;
		}
		if (len > max) {
			discard_line(fd);
			return -EMSGSIZE;
		}
	}
}

static void send_text(int fd, const char *text)
{
	send(fd, text, strlen(text), MSG_NOSIGNAL);
}

static void send_status(int fd, int rc)
{
	char tail[32];
	int n = snprintf(tail, sizeof(tail), "%c%d\n", CLI_STATUS_MARK, -rc);
	send(fd, tail, (size_t)n, MSG_NOSIGNAL);
}

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
	bool ok = read_line(fd, user, CLI_AUTH_LINE_MAX) == 0 && read_line(fd, password, CLI_AUTH_LINE_MAX) == 0 &&
		  (!srv.auth || login_ok(user, password));
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
		send_text(sl->fd, "\r\nAccess denied: too many failed logins\r\n");
		if (sl->sluicectl)
			send_status(sl->fd, -EACCES);
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
		send_text(fd, "error: this CLI needs a login (sluicectl -a FILE)\n");
		send_status(fd, -EACCES);
		return;
	}
	uint32_t max = srv.cfg.max_line;
	char *line = malloc(max + 1);
	struct cli_session *s = cli_session_create(cli_current_graph(), CLI_OUT_SOCKET, fd);
	int rc = line && s ? read_line(fd, line, max) : -ENOMEM;
	bool client_gone = rc == -ECONNABORTED;
	if (rc == -EMSGSIZE) {
		char msg[96];
		count(&srv.n.long_lines);
		snprintf(msg, sizeof(msg), "error: command line longer than %u bytes; nothing was run\n", max);
		send_text(fd, msg);
	} else if (!rc) {
		s->max_line = max;
		rc = cli_session_run(s, line);
	}
	if (!client_gone)
		send_status(fd, rc);
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
	enum hello h = read_hello(fd, &login);
	bool logged_in = login && read_login(fd);
	slot->sluicectl = h != HELLO_NONE;
	if (login && !logged_in) {
		send_text(fd, "error: login refused\n");
		send_status(fd, -EACCES);
	} else if (h == HELLO_EXEC) {
		run_oneshot(fd, logged_in);
	} else {
		run_interactive(fd, h == HELLO_NONE, logged_in);
	}
	pthread_mutex_lock(&srv.lock);
	close(slot->fd);
	slot->fd = -1;
	slot->finished = true;
	pthread_mutex_unlock(&srv.lock);
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
	send_text(fd, msg);
	close(fd);
}

static void *accept_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p[2] = { { .fd = srv.listen_fd, .events = POLLIN }, { .fd = srv.wake[0], .events = POLLIN } };
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		int fd = accept4(srv.listen_fd, NULL, NULL, SOCK_CLOEXEC);
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
	if (srv.listen_fd >= 0)
		close(srv.listen_fd);
	srv.listen_fd = -1;
	for (int i = 0; i < 2; i++) {
		if (srv.wake[i] >= 0)
			close(srv.wake[i]);
		srv.wake[i] = -1;
	}
	struct stat st;
	if (srv.unix_socket && lstat(srv.path, &st) == 0 && st.st_ino == srv.ino)
		unlink(srv.path);
	srv.unix_socket = false;
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
		return fail(err, errlen, -EALREADY, "cli: %s%s", "server already running: ");
	cli_set_graph(cfg->graph);
	srv.cfg = *cfg;
	fill_defaults(&srv.cfg);
	memset(&srv.n, 0, sizeof(srv.n));
	const struct cli_server_config *c = &srv.cfg;
	srv.slots = calloc(c->max_sessions, sizeof(*srv.slots));
	if (!srv.slots || pipe2(srv.wake, O_CLOEXEC) < 0) {
		close_listener();
		return fail(err, errlen, -ENOMEM, "cli: %s%s", "cannot start: ");
	}
	int rc = prepare_access(c, err, errlen);
	if (rc) {
		close_listener();
		return rc;
	}
	srv.listen_fd = cli_listen_is_tcp(c->listen) ? listen_tcp(c->listen, err, errlen)
						     : listen_unix(c->listen, c->socket_mode, c->socket_group, err, errlen);
	rc = srv.listen_fd < 0 ? srv.listen_fd : start_accept_thread();
	if (rc < 0) {
		if (srv.listen_fd >= 0)
			fail(err, errlen, rc, "cli: %s%s", "cannot start the accept thread: ");
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
 */
static int show_cli(struct cli_session *s, int argc, char **argv)
{
	(void)argv;
	if (argc)
		return cli_fail(s, -EINVAL, "unexpected '%s'", argv[0]);
	if (!srv.running)
		return cli_fail(s, -ENOTCONN, "the CLI server is not running");
	const struct cli_server_config *c = &srv.cfg;
	if (srv.unix_socket)
		cli_printf(s, "%-15s %s (unix, mode %04o, group %s)", "listen", c->listen, (unsigned)c->socket_mode,
			   c->socket_group[0] ? c->socket_group : "-");
	else
		cli_printf(s, "%-15s %s (tcp)", "listen", c->listen);
	cli_printf(s, "%-15s %s%s", "login", srv.auth ? "password file " : "none", srv.auth ? c->password_file : "");
	cli_printf(s, "%-15s %u open of %u", "sessions", open_sessions(), c->max_sessions);
	cli_printf(s, "%-15s %us", "idle-timeout", c->idle_timeout_s);
	cli_printf(s, "%-15s %u", "max-line", c->max_line);
	cli_printf(s, "%-15s %s", "file-dir", c->file_dir[0] ? c->file_dir : "-");
	const struct {
		const char *name;
		const uint64_t *v;
	} rows[] = {
		{ "accepted", &srv.n.accepted },     { "refused-busy", &srv.n.refused_busy },
		{ "logins", &srv.n.logins },         { "login-failures", &srv.n.login_failures },
		{ "idle-closed", &srv.n.idle_closed }, { "long-lines", &srv.n.long_lines },
	};
	for (size_t i = 0; i < ARRAY_LEN(rows); i++)
		cli_printf(s, "%-15s %llu", rows[i].name, (unsigned long long)load(rows[i].v));
	return 0;
}

static const struct cli_command_reg show_cli_cmd = {
	.path = "show cli",
	.usage = "show cli",
	.help = "The CLI server: listen address, limits, sessions and refusals",
	.fn = show_cli,
};
CLI_COMMAND_REGISTER(show_cli_cmd)

/* ---- exec files and lines ---- */

static bool skip_line(const char *line)
{
	line += strspn(line, " \t\r\n");
	return !*line || *line == '#';
}

int cli_exec_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return fail(err, errlen, -errno, "%s: %s", path);
	struct cli_session *s = cli_session_create(cli_current_graph(), CLI_OUT_LOG, -1);
	char *line = malloc(CLI_LINE_MAX + 2);
	int rc = s && line ? 0 : -ENOMEM;
	for (unsigned no = 1; !rc && fgets(line, CLI_LINE_MAX + 2, f); no++) {
		size_t n = strcspn(line, "\r\n");
		if (n > CLI_LINE_MAX || (!line[n] && !feof(f))) {
			snprintf(err, errlen, "%s:%u: line longer than %d bytes", path, no, CLI_LINE_MAX);
			rc = -EMSGSIZE;
			break;
		}
		line[n] = 0;
		if (skip_line(line))
			continue;
		base_log("cli", "exec %s:%u: %s", path, no, line);
		rc = cli_session_run(s, line);
		if (rc)
			snprintf(err, errlen, "%s:%u: %s: %s", path, no, line, strerror(-rc));
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	free(line);
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
