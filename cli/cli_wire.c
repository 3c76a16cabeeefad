/* The server's side of the wire protocol of cli_private.h: telling a
 * sluicectl hello from a telnet-style client, and reading lines with a
 * bound, so that a client cannot make the server hold more than a line
 * (the rest of an over-long line is skipped, in bounded time, and the line
 * refused). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "cli/cli_private.h"
#include "base/util.h"

#define DISCARD_LIMIT_NS (2ull * 1000000000ull)

static const struct {
	const char *text;
	enum cli_hello kind;
	bool login;
} hellos[] = {
	{ CLI_HELLO_EXEC, CLI_HELLO_KIND_EXEC, false },
	{ CLI_HELLO_INTERACTIVE, CLI_HELLO_KIND_INTERACTIVE, false },
	{ CLI_HELLO_EXEC_AUTH, CLI_HELLO_KIND_EXEC, true },
	{ CLI_HELLO_INTERACTIVE_AUTH, CLI_HELLO_KIND_INTERACTIVE, true },
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
enum cli_hello cli_wire_read_hello(int fd, bool *login)
{
	char buf[64];
	uint64_t deadline = time_now_ns() + CLI_HELLO_WAIT_MS * 1000000ull;
	*login = false;
	for (;;) {
		uint64_t now = time_now_ns();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (now >= deadline || poll(&p, 1, (int)((deadline - now) / 1000000) + 1) <= 0)
			return CLI_HELLO_KIND_NONE;
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
		if (n <= 0)
			return CLI_HELLO_KIND_NONE;
		bool any = false;
		for (size_t i = 0; i < ARRAY_LEN(hellos); i++) {
			size_t h = strlen(hellos[i].text);
			if ((size_t)n >= h && !memcmp(buf, hellos[i].text, h)) {
				if (recv(fd, buf, h, 0) != (ssize_t)h)
					return CLI_HELLO_KIND_NONE;
				*login = hellos[i].login;
				return hellos[i].kind;
			}
			any |= may_be(buf, (size_t)n, hellos[i].text);
		}
		if (!any)
			return CLI_HELLO_KIND_NONE;
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
int cli_wire_read_line(int fd, char *line, size_t max)
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

void cli_wire_send_text(int fd, const char *text)
{
	send(fd, text, strlen(text), MSG_NOSIGNAL);
}

void cli_wire_send_status(int fd, int rc)
{
	char tail[32];
	int n = snprintf(tail, sizeof(tail), "%c%d\n", CLI_STATUS_MARK, -rc);
	send(fd, tail, (size_t)n, MSG_NOSIGNAL);
}
