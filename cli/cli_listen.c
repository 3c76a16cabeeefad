/* The CLI server's listening socket: a unix socket bound inside a private
 * 0700 directory, given its group and mode, and renamed into place, so that
 * it never exists with looser permissions (a umask dance would be
 * process-wide and racy); or TCP. A socket file left by a dead sluice is
 * replaced, a live one is not. */
#include <errno.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli_private.h"

_Static_assert(sizeof(((struct cli_listener *)0)->path) == sizeof(((struct sockaddr_un *)0)->sun_path),
	       "cli_listener.path holds a unix socket path");

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

static int listen_unix(struct cli_listener *l, const char *path, mode_t mode, const char *group, char *err,
		       size_t errlen)
{
	if (strlen(path) >= sizeof(l->path))
		return cli_errf(err, errlen, -ENAMETOOLONG, "cli: socket path %s: %s", path);
	gid_t gid;
	int rc = group_id(group, &gid);
	if (rc)
		return cli_errf(err, errlen, rc, "cli: cli-group %s: %s", group);
	char dirbuf[PATH_MAX];
	snprintf(dirbuf, sizeof(dirbuf), "%s", path);
	rc = mkdir_parents(dirname(dirbuf));
	if (rc)
		return cli_errf(err, errlen, rc, "cli: cannot create the directory of %s: %s", path);
	rc = clear_stale(path);
	if (rc)
		return cli_errf(err, errlen, rc, "cli: %s: %s (another sluice listening, or not a socket)", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return cli_errf(err, errlen, -errno, "cli: socket for %s: %s", path);
	char tmpdir[PATH_MAX] = "";
	rc = bind_private(fd, path, mode, gid, tmpdir);
	if (tmpdir[0])
		rmdir(tmpdir);
	struct stat st;
	if (!rc && (listen(fd, 16) < 0 || stat(path, &st) < 0))
		rc = -errno;
	if (rc) {
		close(fd);
		return cli_errf(err, errlen, rc, "cli: cannot listen on %s: %s", path);
	}
	l->unix_socket = true;
	l->ino = st.st_ino;
	snprintf(l->path, sizeof(l->path), "%s", path);
	return fd;
}

static int listen_tcp(struct cli_listener *l, const char *listen_addr, char *err, size_t errlen)
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
		return cli_errf(err, errlen, rc, "cli: cannot listen on %s: %s", listen_addr);
	}
	l->unix_socket = false;
	return fd;
}

int cli_listener_open(struct cli_listener *l, const struct cli_server_config *c, char *err, size_t errlen)
{
	int fd = cli_listen_is_tcp(c->listen) ? listen_tcp(l, c->listen, err, errlen)
					      : listen_unix(l, c->listen, c->socket_mode, c->socket_group, err, errlen);
	l->fd = fd;
	return fd < 0 ? fd : 0;
}

void cli_listener_close(struct cli_listener *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	struct stat st;
	if (l->unix_socket && lstat(l->path, &st) == 0 && st.st_ino == l->ino)
		unlink(l->path);
	l->unix_socket = false;
}
