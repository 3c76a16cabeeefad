/* The stats segment's thread and socket (app/statseg.h). One control
 * thread: it copies the counters into the segment every update-interval,
 * under the CLI's command lock, and between passes hands the segment's
 * read-only descriptor to each reader that connects (SCM_RIGHTS). It
 * never blocks on a reader: the listening socket is non-blocking, each
 * reader gets one message on a fresh socket (room is certain) and is
 * closed, at most STATSEG_ACCEPT_BURST per wake-up. A reader that dies
 * holds a mapping of its own, nothing of the daemon's. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "app/statseg.h"
#include "app/statseg_private.h"
#include "base/util.h"
#include "cli/cli.h"
#include "sluice_version.h"

#define STATSEG_ACCEPT_BURST 16

static struct {
	struct statseg_writer *w;
	struct graph *g;
	struct cli_listener l;
	int wake;    /* eventfd: stop */
	int ro_fd;   /* what readers get */
	uint64_t interval_ns;
	uint64_t readers; /* descriptors handed out (the stats thread writes) */
	char path[PATH_MAX];
	pthread_t thread;
	bool running;
} ss = { .l = { .fd = -1 }, .wake = -1, .ro_fd = -1 };

void statseg_socket_path(const struct statseg_start_config *c, char *buf, size_t len)
{
	if (c->conf->socket_name[0]) {
		snprintf(buf, len, "%s", c->conf->socket_name);
	} else if (c->cli_listen && c->cli_listen[0] && !cli_listen_is_tcp(c->cli_listen)) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", c->cli_listen);
		snprintf(buf, len, "%s/stats.sock", dirname(dir));
	} else {
		snprintf(buf, len, "%s", SLUICE_DEFAULT_STATS_SOCKET);
	}
}

static void send_fd(int sock, int fd)
{
	char byte = 'S';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&msg);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(fd));
	(void)sendmsg(sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void serve_readers(void)
{
	for (int i = 0; i < STATSEG_ACCEPT_BURST; i++) {
		int c = accept4(ss.l.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c < 0)
			return; /* EAGAIN: nobody else waiting; anything else: next wake-up */
		send_fd(c, ss.ro_fd);
		close(c);
		__atomic_fetch_add(&ss.readers, 1, __ATOMIC_RELAXED);
	}
}

static void update_locked(void *arg)
{
	(void)arg;
	statseg_writer_update(ss.w, ss.g);
}

static void *stats_thread(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals are the main thread's */
	uint64_t next = time_now_ns() + ss.interval_ns;
	for (;;) {
		uint64_t now = time_now_ns();
		if (now >= next) {
			cli_command_locked(update_locked, NULL);
			next = now + ss.interval_ns;
		}
		int ms = (int)((next - now + 999999) / 1000000);
		struct pollfd p[2] = { { .fd = ss.l.fd, .events = POLLIN }, { .fd = ss.wake, .events = POLLIN } };
		if (poll(p, 2, ms) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (p[0].revents)
			serve_readers();
	}
	return NULL;
}

static int start_fail(int rc, char *err, size_t errlen, const char *what)
{
	if (what)
		snprintf(err, errlen, "statseg: %s: %s", what, strerror(-rc));
	statseg_stop();
	return rc;
}

int statseg_start(const struct statseg_start_config *c, char *err, size_t errlen)
{
	ss.interval_ns = c->conf->interval_ns;
	ss.g = c->g;
	ss.w = statseg_writer_create(c->conf->size, c->conf->interval_ns, err, errlen);
	if (!ss.w)
		return -ENOMEM;
	int rc = statseg_writer_update(ss.w, ss.g); /* readers never see an empty segment */
	if (rc)
		return start_fail(rc, err, errlen, "the first copy (statseg { size } too small)");
	ss.ro_fd = statseg_writer_reader_fd(ss.w);
	if (ss.ro_fd < 0)
		return start_fail(ss.ro_fd, err, errlen, "a read-only descriptor");
	struct cli_server_config lc;
	cli_server_config_default(&lc);
	statseg_socket_path(c, lc.listen, sizeof(lc.listen));
	lc.socket_mode = c->socket_mode;
	snprintf(lc.socket_group, sizeof(lc.socket_group), "%s", c->socket_group ? c->socket_group : "");
	snprintf(ss.path, sizeof(ss.path), "%s", lc.listen);
	rc = cli_listener_open(&ss.l, &lc, err, errlen);
	if (rc)
		return start_fail(rc, err, errlen, NULL);
	ss.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ss.wake < 0 || fcntl(ss.l.fd, F_SETFL, O_NONBLOCK) < 0)
		return start_fail(-errno, err, errlen, "socket set-up");
	statseg_counters_freeze(true);
	rc = pthread_create(&ss.thread, NULL, stats_thread, NULL);
	if (rc) {
		statseg_counters_freeze(false);
		return start_fail(-rc, err, errlen, "thread");
	}
	pthread_setname_np(ss.thread, "sluice-stats");
	ss.running = true;
	base_log("statseg", "%s: %zu bytes, copied every %llu us", lc.listen, (size_t)c->conf->size,
		 (unsigned long long)(c->conf->interval_ns / 1000));
	return 0;
}

int statseg_status(struct statseg_status *st)
{
	memset(st, 0, sizeof(*st));
	if (!ss.running || !ss.w)
		return -ENOENT;
	const struct statseg_writer *w = ss.w;
	snprintf(st->socket, sizeof(st->socket), "%s", ss.path);
	st->size = w->size;
	st->n_entries = w->n_dir;
	st->used = w->n_dir ? ROUND_UP(sizeof(struct statseg_header) + (uint64_t)w->n_dir * sizeof(struct statseg_entry),
				       64) + w->data_used
			    : sizeof(struct statseg_header);
	st->epoch = __atomic_load_n(&w->h->epoch, __ATOMIC_RELAXED);
	st->updates = __atomic_load_n(&w->h->updates, __ATOMIC_RELAXED);
	st->update_ns = __atomic_load_n(&w->h->update_ns, __ATOMIC_RELAXED);
	st->interval_ns = ss.interval_ns;
	st->readers = __atomic_load_n(&ss.readers, __ATOMIC_RELAXED);
	st->directory_full = w->full_logged;
	return 0;
}

int statseg_reader_fd(void)
{
	return ss.ro_fd;
}

void statseg_stop(void)
{
	if (ss.running) {
		uint64_t one = 1;
		if (write(ss.wake, &one, sizeof(one)) != sizeof(one))
			base_log("statseg", "cannot wake the stats thread: %s", strerror(errno));
		pthread_join(ss.thread, NULL);
		ss.running = false;
		statseg_counters_freeze(false);
	}
	cli_listener_close(&ss.l);
	if (ss.wake >= 0)
		close(ss.wake);
	if (ss.ro_fd >= 0)
		close(ss.ro_fd);
	ss.wake = ss.ro_fd = -1;
	statseg_writer_free(ss.w);
	ss.w = NULL;
}
