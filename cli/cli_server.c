/* The CLI server: one listening socket (unix, or TCP on loopback by
 * default), an accept thread, and one thread per session, none of them a
 * datapath thread. Sessions are a fixed table so that stopping the server
 * can wake and join every one of them.
 *
 * The unix socket is bound inside a private 0700 directory, given its mode,
 * and renamed into place, so that it never exists with looser permissions
 * (a umask dance would be process-wide and racy).
 */
#include <errno.h>
#include <fcntl.h>
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
#include "graph/util.h"
#include "sluice_version.h"

#define ONESHOT_TIMEOUT_S 10 /* a one-shot client must send its line within this */
#define DISCARD_LIMIT_NS (2ull * 1000000000ull)

struct slot {
	pthread_t thread;
	int fd;        /* -1 once the session closed it */
	bool used;     /* a thread was started and not yet joined */
	bool finished; /* the thread is about to return */
};

static struct {
	bool running;
	int listen_fd;
	int wake[2]; /* a byte here stops the accept thread */
	pthread_t accept_thread;
	bool unix_socket;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	ino_t ino; /* our socket's inode: remove the path only while it is ours */
	uint32_t max_sessions;
	pthread_mutex_t lock; /* guards slots[].fd, used, finished */
	struct slot *slots;
} srv = { .listen_fd = -1, .wake = { -1, -1 }, .lock = PTHREAD_MUTEX_INITIALIZER };

void cli_server_config_default(struct cli_server_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->listen, sizeof(cfg->listen), "%s", SLUICE_DEFAULT_CLI_SOCKET);
	cfg->socket_mode = CLI_SOCKET_MODE_DEFAULT;
	cfg->max_sessions = CLI_MAX_SESSIONS_DEFAULT;
}

/* ---- listening sockets ---- */

/* TCP when the address has no '/' and ends in ":PORT". */
static bool is_tcp(const char *listen)
{
	const char *colon = strrchr(listen, ':');
	return !strchr(listen, '/') && colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1);
}

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

static int bind_private(int fd, const char *path, mode_t mode, char *tmpdir)
{
	char dirbuf[PATH_MAX];
	snprintf(dirbuf, sizeof(dirbuf), "%s", path);
	snprintf(tmpdir, PATH_MAX, "%s/.cli-XXXXXX", dirname(dirbuf));
	if (!mkdtemp(tmpdir))
		return -errno;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if ((size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s/s", tmpdir) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || chmod(a.sun_path, mode) < 0 ||
	    rename(a.sun_path, path) < 0) {
		int rc = -errno;
		unlink(a.sun_path);
		return rc;
	}
	return 0;
}

static int listen_unix(const char *path, mode_t mode, char *err, size_t errlen)
{
	if (strlen(path) >= sizeof(srv.path))
		return fail(err, errlen, -ENAMETOOLONG, "cli: socket path %s: %s", path);
	char dirbuf[PATH_MAX];
	snprintf(dirbuf, sizeof(dirbuf), "%s", path);
	int rc = mkdir_parents(dirname(dirbuf));
	if (rc)
		return fail(err, errlen, rc, "cli: cannot create the directory of %s: %s", path);
	rc = clear_stale(path);
	if (rc)
		return fail(err, errlen, rc, "cli: %s: %s (another sluice listening, or not a socket)", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(err, errlen, -errno, "cli: socket for %s: %s", path);
	char tmpdir[PATH_MAX] = "";
	rc = bind_private(fd, path, mode, tmpdir);
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

/* HOST:PORT, [HOST]:PORT or :PORT (loopback). */
static void split_host_port(const char *listen, char *host, size_t hostlen, const char **port)
{
	const char *colon = strrchr(listen, ':');
	size_t n = (size_t)(colon - listen);
	*port = colon + 1;
	if (n >= 2 && listen[0] == '[' && listen[n - 1] == ']') {
		listen++;
		n -= 2;
	}
	if (!n)
		snprintf(host, hostlen, "127.0.0.1");
	else
		snprintf(host, hostlen, "%.*s", (int)n, listen);
}

static int listen_tcp(const char *listen_addr, char *err, size_t errlen)
{
	char host[256];
	const char *port;
	split_host_port(listen_addr, host, sizeof(host), &port);
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

/* 1: buf so far is a prefix of (or holds) hello; 0: it cannot be. */
static bool may_be(const char *buf, size_t n, const char *hello)
{
	size_t h = strlen(hello);
	return !memcmp(buf, hello, MIN(n, h));
}

/* Peek at what the client sends first, for at most CLI_HELLO_WAIT_MS;
 * consume it only when it is one of our hellos. */
static enum hello read_hello(int fd)
{
	char buf[64];
	uint64_t deadline = time_now_ns() + CLI_HELLO_WAIT_MS * 1000000ull;
	for (;;) {
		uint64_t now = time_now_ns();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (now >= deadline || poll(&p, 1, (int)((deadline - now) / 1000000) + 1) <= 0)
			return HELLO_NONE;
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
		if (n <= 0)
			return HELLO_NONE;
		const char *hellos[] = { CLI_HELLO_EXEC, CLI_HELLO_INTERACTIVE };
		bool any = false;
		for (int i = 0; i < 2; i++) {
			size_t h = strlen(hellos[i]);
			if ((size_t)n >= h && !memcmp(buf, hellos[i], h)) {
				if (recv(fd, buf, h, 0) != (ssize_t)h)
					return HELLO_NONE;
				return i ? HELLO_INTERACTIVE : HELLO_EXEC;
			}
			any |= may_be(buf, (size_t)n, hellos[i]);
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

/* Read one line of at most CLI_LINE_MAX bytes. Returns 0, -EMSGSIZE for a
 * longer line, or -ECONNABORTED when the client left or stalled. */
static int read_line(int fd, char *line)
{
	size_t len = 0;
	for (;;) {
		ssize_t n = recv(fd, line + len, CLI_LINE_MAX + 1 - len, 0);
		if (n <= 0)
			return -ECONNABORTED;
		char *nl = memchr(line + len, '\n', (size_t)n);
		len += (size_t)n;
		if (nl) {
			*nl = 0;
			if (nl > line && nl[-1] == '\r')
				nl[-1] = 0;
			return 0;
		}
		if (len > CLI_LINE_MAX) {
			discard_line(fd);
			return -EMSGSIZE;
		}
	}
}

static void send_status(int fd, int rc)
{
	char tail[32];
	int n = snprintf(tail, sizeof(tail), "%c%d\n", CLI_STATUS_MARK, -rc);
	send(fd, tail, (size_t)n, MSG_NOSIGNAL);
}

static void run_oneshot(int fd)
{
	struct timeval tv = { .tv_sec = ONESHOT_TIMEOUT_S };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	char *line = malloc(CLI_LINE_MAX + 1);
	struct cli_session *s = cli_session_create(cli_current_graph(), CLI_OUT_SOCKET, fd);
	int rc = line && s ? read_line(fd, line) : -ENOMEM;
	bool client_gone = rc == -ECONNABORTED;
	if (rc == -EMSGSIZE) {
		char msg[80];
		int n = snprintf(msg, sizeof(msg), "error: command line longer than %d bytes\n", CLI_LINE_MAX);
		send(fd, msg, (size_t)n, MSG_NOSIGNAL);
	} else if (!rc)
		rc = cli_session_run(s, line);
	if (!client_gone)
		send_status(fd, rc);
	cli_session_destroy(s);
	free(line);
}

/* libcli closes the stream it is given, so it gets a duplicate: the slot's
 * own descriptor stays valid for cli_server_stop to shut down. */
static void run_interactive(int fd, bool telnet)
{
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	struct cli_session *s = dup_fd >= 0 ? cli_session_create(cli_current_graph(), CLI_OUT_CLIENT, dup_fd) : NULL;
	if (!s) {
		if (dup_fd >= 0)
			close(dup_fd);
		return;
	}
	cli_telnet_protocol(s->def, telnet);
	cli_loop(s->def, dup_fd);
	cli_session_destroy(s);
}

static void *session_main(void *arg)
{
	struct slot *slot = arg;
	int fd = slot->fd;
	enum hello h = read_hello(fd);
	if (h == HELLO_EXEC)
		run_oneshot(fd);
	else
		run_interactive(fd, h == HELLO_NONE);
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
	for (uint32_t i = 0; i < srv.max_sessions; i++) {
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
	if (!sl) {
		static const char msg[] = "error: too many CLI sessions, try again later\n";
		send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL);
		close(fd);
	}
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
}

int cli_server_start(const struct cli_server_config *cfg, char *err, size_t errlen)
{
	if (srv.running)
		return fail(err, errlen, -EALREADY, "cli: %s%s", "server already running: ");
	cli_set_graph(cfg->graph);
	const char *addr = cfg->listen[0] ? cfg->listen : SLUICE_DEFAULT_CLI_SOCKET;
	srv.max_sessions = cfg->max_sessions ? cfg->max_sessions : CLI_MAX_SESSIONS_DEFAULT;
	srv.slots = calloc(srv.max_sessions, sizeof(*srv.slots));
	if (!srv.slots || pipe2(srv.wake, O_CLOEXEC) < 0) {
		close_listener();
		return fail(err, errlen, -ENOMEM, "cli: %s%s", "cannot start: ");
	}
	mode_t mode = cfg->socket_mode ? cfg->socket_mode : CLI_SOCKET_MODE_DEFAULT;
	srv.listen_fd = is_tcp(addr) ? listen_tcp(addr, err, errlen) : listen_unix(addr, mode, err, errlen);
	int rc = srv.listen_fd < 0 ? srv.listen_fd : start_accept_thread();
	if (rc < 0) {
		if (srv.listen_fd >= 0)
			fail(err, errlen, rc, "cli: %s%s", "cannot start the accept thread: ");
		close_listener();
		return rc;
	}
	srv.running = true;
	graph_log("cli", "listening on %s", addr);
	return 0;
}

void cli_server_stop(void)
{
	if (!srv.running)
		return;
	if (write(srv.wake[1], "x", 1) < 0)
		graph_log("cli", "cannot wake the accept thread: %s", strerror(errno));
	pthread_join(srv.accept_thread, NULL);
	for (uint32_t i = 0; i < srv.max_sessions; i++) {
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
	srv.running = false;
}

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
		graph_log("cli", "exec %s:%u: %s", path, no, line);
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
