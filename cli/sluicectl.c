/* sluicectl: talk to a running sluice.
 *
 *   sluicectl [-s SOCKET] [-a FILE] CMD...   run one command, print its
 *                           output, exit 0 when it worked, 1 when it failed
 *                           (or the login was refused), 2 when sluice could
 *                           not be reached
 *   sluicectl [-s SOCKET] [-a FILE]          interactive: the terminal is
 *                           put in raw mode and relayed to a libcli session,
 *                           so history, '?' and TAB are libcli's; exit 0
 *                           when the session ends, 1 when the login was
 *                           refused (-a, or three times at libcli's prompt),
 *                           2 when sluice could not be reached
 *
 * SOCKET is a unix socket path or HOST:PORT (default: the build's socket).
 * FILE (or $SLUICECTL_AUTH_FILE) holds one USER:PASSWORD line for a sluice
 * with cli-password-file; like ssh with its keys, sluicectl refuses a file
 * that others may read. Credentials are never taken from the command line,
 * where ps would show them. The wire protocol is described in
 * cli/cli_private.h.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#define SLUICECTL
#include "cli/cli_private.h"
#include "sluice_version.h"

/* A login to send after the hello; user[0] == 0: none. */
struct login {
	char user[CLI_AUTH_LINE_MAX + 1];
	char password[CLI_AUTH_LINE_MAX + 1];
};

static void usage(FILE *f)
{
	fprintf(f, "usage: sluicectl [-s SOCKET] [-a FILE] [COMMAND...]\n"
		   "  -s SOCKET  unix socket path or HOST:PORT (default %s)\n"
		   "  -a FILE    log in with the USER:PASSWORD line of FILE (default $SLUICECTL_AUTH_FILE)\n"
		   "  With a COMMAND, run it and exit with its status; without, run interactively.\n",
		SLUICE_DEFAULT_CLI_SOCKET);
}

/* One USER:PASSWORD line; false after saying what is wrong. */
static bool read_login(const char *path, struct login *l)
{
	FILE *f = fopen(path, "re");
	struct stat st;
	char line[2 * CLI_AUTH_LINE_MAX + 4];
	const char *why = NULL;
	if (!f)
		why = strerror(errno);
	else if (fstat(fileno(f), &st) < 0 || (st.st_mode & (S_IROTH | S_IWOTH)))
		why = "others may read or write it (chmod o-rw)";
	else if (!fgets(line, sizeof(line), f) || !strchr(line, ':'))
		why = "expected one USER:PASSWORD line";
	if (f)
		fclose(f);
	if (why) {
		fprintf(stderr, "sluicectl: %s: %s\n", path, why);
		return false;
	}
	line[strcspn(line, "\r\n")] = 0;
	char *colon = strchr(line, ':');
	*colon = 0;
	if (strlen(line) > CLI_AUTH_LINE_MAX || strlen(colon + 1) > CLI_AUTH_LINE_MAX) {
		fprintf(stderr, "sluicectl: %s: user or password longer than %d bytes\n", path, CLI_AUTH_LINE_MAX);
		return false;
	}
	snprintf(l->user, sizeof(l->user), "%s", line);
	snprintf(l->password, sizeof(l->password), "%s", colon + 1);
	explicit_bzero(line, sizeof(line));
	return true;
}

static int connect_unix(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(a.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int connect_tcp(const char *addr)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	if (getaddrinfo(host[0] ? host : "127.0.0.1", colon + 1, &hints, &ai)) {
		errno = EINVAL;
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		int e = errno;
		close(fd);
		fd = -1;
		errno = e;
	}
	freeaddrinfo(ai);
	return fd;
}

static int connect_to(const char *where)
{
	bool tcp = !strchr(where, '/') && strchr(where, ':');
	int fd = tcp ? connect_tcp(where) : connect_unix(where);
	if (fd < 0)
		fprintf(stderr, "sluicectl: cannot connect to %s: %s\n", where, strerror(errno));
	return fd;
}

/* Write everything; a peer that closed early (a line it refused) is not
 * an error here: its answer is still waiting to be read. */
static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		p += k;
		n -= (size_t)k;
	}
}

static char *join_args(int argc, char **argv)
{
	size_t n = 2;
	for (int i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	char *line = malloc(n);
	if (!line)
		return NULL;
	line[0] = 0;
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(line, " ");
		strcat(line, argv[i]);
	}
	strcat(line, "\n");
	return line;
}

/* The status the server sends after CLI_STATUS_MARK: at the end of a
 * one-shot command, or when it refuses a login. */
struct status {
	bool marked;
	size_t len;
	char text[32];
};

/* Take one chunk from the server: returns how much of it is output to
 * print; what follows the mark is kept in st. */
static size_t take_status(struct status *st, const char *buf, size_t n)
{
	size_t out = n;
	if (!st->marked) {
		const char *mark = memchr(buf, CLI_STATUS_MARK, n);
		if (!mark)
			return n;
		st->marked = true;
		out = (size_t)(mark - buf);
		buf = mark + 1;
		n -= out + 1;
	} else {
		out = 0;
	}
	for (size_t i = 0; i < n && st->len < sizeof(st->text) - 1; i++)
		st->text[st->len++] = buf[i];
	st->text[st->len] = 0;
	return out;
}

/* 1 when the server sent a failure status, else 0. */
static int status_exit(const struct status *st)
{
	return st->marked && atoi(st->text) ? 1 : 0;
}

/* Print the output up to the status mark; return the exit code. */
static int read_answer(int fd)
{
	char buf[65536];
	struct status st = { .marked = false };
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		fwrite(buf, 1, take_status(&st, buf, (size_t)n), stdout);
	}
	fflush(stdout);
	if (!st.marked) {
		fprintf(stderr, "sluicectl: connection closed before the command finished\n");
		return 2;
	}
	return status_exit(&st);
}

/* The hello, and the login when there is one. */
static void send_hello(int fd, bool exec, const struct login *l)
{
	const char *hello = exec ? (l->user[0] ? CLI_HELLO_EXEC_AUTH : CLI_HELLO_EXEC)
				 : (l->user[0] ? CLI_HELLO_INTERACTIVE_AUTH : CLI_HELLO_INTERACTIVE);
	write_all(fd, hello, strlen(hello));
	if (!l->user[0])
		return;
	write_all(fd, l->user, strlen(l->user));
	write_all(fd, "\n", 1);
	write_all(fd, l->password, strlen(l->password));
	write_all(fd, "\n", 1);
}

static int run_one(const char *where, const struct login *l, int argc, char **argv)
{
	char *line = join_args(argc, argv);
	int fd = line ? connect_to(where) : -1;
	if (fd < 0) {
		free(line);
		return 2;
	}
	send_hello(fd, true, l);
	write_all(fd, line, strlen(line));
	free(line);
	shutdown(fd, SHUT_WR);
	int rc = read_answer(fd);
	close(fd);
	return rc;
}

static struct termios saved_tio;
static bool raw_mode;

static void restore_terminal(void)
{
	if (raw_mode)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	raw_mode = false;
}

/* libcli does its own echo and line editing, as with vppctl. */
static void enter_raw_mode(void)
{
	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tio) < 0)
		return;
	struct termios raw = saved_tio;
	cfmakeraw(&raw);
	if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0) {
		raw_mode = true;
		atexit(restore_terminal);
	}
}

static void copy_to_stdout(int fd, struct status *st)
{
	char buf[4096];
	ssize_t got = recv(fd, buf, sizeof(buf), 0);
	ssize_t n = got > 0 ? (ssize_t)take_status(st, buf, (size_t)got) : got;
	for (ssize_t off = 0; n > 0 && off < n;) {
		ssize_t k = write(STDOUT_FILENO, buf + off, (size_t)(n - off));
		if (k <= 0 && errno != EINTR)
			return;
		off += k > 0 ? k : 0;
	}
}

/* Keystrokes waiting for room in the socket. sluice echoes what it reads,
 * so blocking on a full socket while its echo fills ours would deadlock:
 * input is only read when the previous chunk has gone. */
struct pending {
	char buf[4096];
	size_t off, len;
};

/* Returns false when stdin ended. */
static bool read_stdin(struct pending *p)
{
	ssize_t n = read(STDIN_FILENO, p->buf, sizeof(p->buf));
	if (n < 0 && errno == EINTR)
		return true;
	if (n <= 0)
		return false;
	p->off = 0;
	p->len = (size_t)n;
	return true;
}

static void send_some(int fd, struct pending *p)
{
	ssize_t k = send(fd, p->buf + p->off, p->len - p->off, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (k > 0)
		p->off += (size_t)k;
	else if (k < 0 && errno != EAGAIN && errno != EINTR)
		p->off = p->len; /* sluice left; its close ends the loop */
}

/* Exits 0 when the session ends (quit, or sluice went away), 1 when sluice
 * refused the login (its status after the session's last output). */
static int run_interactive(const char *where, const struct login *l)
{
	int fd = connect_to(where);
	if (fd < 0)
		return 2;
	send_hello(fd, false, l);
	enter_raw_mode();
	struct status st = { .marked = false };
	struct pending in = { .off = 0, .len = 0 };
	bool stdin_open = true;
	for (;;) {
		bool waiting = in.off < in.len;
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN | (waiting ? POLLOUT : 0) },
				       { .fd = STDIN_FILENO, .events = POLLIN } };
		if (poll(p, stdin_open && !waiting ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			char c;
			if (recv(fd, &c, 1, MSG_PEEK) <= 0)
				break; /* `quit`, or sluice went away */
			copy_to_stdout(fd, &st);
		}
		if (waiting && (p[0].revents & POLLOUT))
			send_some(fd, &in);
		if (stdin_open && !waiting && p[1].revents && !read_stdin(&in)) {
			/* piped input ran out: let sluice finish and close */
			stdin_open = false;
			shutdown(fd, SHUT_WR);
		}
	}
	restore_terminal();
	close(fd);
	return status_exit(&st);
}

int main(int argc, char **argv)
{
	const char *where = SLUICE_DEFAULT_CLI_SOCKET;
	const char *auth_file = getenv("SLUICECTL_AUTH_FILE");
	static struct login login;
	int opt;
	while ((opt = getopt(argc, argv, "+s:a:h")) != -1) {
		switch (opt) {
		case 's':
			where = optarg;
			break;
		case 'a':
			auth_file = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (auth_file && auth_file[0] && !read_login(auth_file, &login))
		return 2;
	if (optind < argc)
		return run_one(where, &login, argc - optind, argv + optind);
	return run_interactive(where, &login);
}
