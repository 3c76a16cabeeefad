/* Who may use the CLI and where its commands may write: listen addresses
 * (TCP or unix, loopback or not), password files and their logins, and the
 * file directory that `trace save`, `pcap capture` and pcap tx-files are
 * held to.
 *
 * Password checks run on session threads at once, so hashes go through
 * crypt_r with a buffer of their own (crypt's is static).
 */
#include <arpa/inet.h>
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_private.h"
#include "base/util.h"

/* ---- listen addresses ---- */

bool cli_listen_is_tcp(const char *listen)
{
	const char *colon = strrchr(listen, ':');
	return !strchr(listen, '/') && colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1);
}

void cli_split_host_port(const char *listen, char *host, size_t hostlen, const char **port)
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

bool cli_listen_is_loopback(const char *listen)
{
	char host[256];
	const char *port;
	struct in_addr a4;
	struct in6_addr a6;
	cli_split_host_port(listen, host, sizeof(host), &port);
	if (!strcasecmp(host, "localhost"))
		return true;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6) ||
		       (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
	return false;
}

/* ---- password files ---- */

#define AUTH_MAX_USERS 64
#define AUTH_USER_MAX 64
#define AUTH_SECRET_MAX 512

struct cli_auth_user {
	char name[AUTH_USER_MAX + 1];
	char secret[AUTH_SECRET_MAX + 1];
	bool hashed;
};

struct cli_auth {
	uint32_t n;
	struct cli_auth_user users[AUTH_MAX_USERS];
};

/* Compare without stopping at the first difference, so the time a wrong
 * password takes says nothing about how much of it was right. */
static bool same_secret(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	unsigned char diff = na != nb;
	for (size_t i = 0; i < na; i++)
		diff |= (unsigned char)(a[i] ^ b[i % (nb ? nb : 1)]);
	return !diff;
}

/* Hash password with the settings (method, cost, salt) of the stored hash
 * and compare. */
static bool hash_matches(const char *hash, const char *password)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	if (!cd)
		return false;
	const char *out = crypt_r(password, hash, cd);
	bool ok = out && out[0] != '*' && same_secret(out, hash);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return ok;
}

/* Whether libcrypt knows the hash's method, so that a typo in the file is
 * found when it is read, not at the first login. */
static bool hash_supported(const char *hash)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	if (!cd)
		return false;
	const char *out = crypt_r("", hash, cd);
	bool ok = out && out[0] != '*' && strlen(out) == strlen(hash);
	free(cd);
	return ok;
}

static int auth_line(struct cli_auth *a, char *line, const char *path, unsigned no, char *err, size_t errlen)
{
	line[strcspn(line, "\r\n")] = 0;
	const char *p = line + strspn(line, " \t");
	if (!*p || *p == '#')
		return 0;
	char *colon = strchr(line, ':');
	size_t nu = colon ? (size_t)(colon - p) : 0;
	if (!colon || !nu || !colon[1] || strcspn(p, " \t") < nu) {
		snprintf(err, errlen, "%s:%u: expected USER:PASSWORD or USER:$HASH", path, no);
		return -EINVAL;
	}
	if (nu > AUTH_USER_MAX || strlen(colon + 1) > AUTH_SECRET_MAX) {
		snprintf(err, errlen, "%s:%u: user longer than %d or password longer than %d characters", path, no,
			 AUTH_USER_MAX, AUTH_SECRET_MAX);
		return -EINVAL;
	}
	if (a->n == AUTH_MAX_USERS) {
		snprintf(err, errlen, "%s:%u: more than %d users", path, no, AUTH_MAX_USERS);
		return -E2BIG;
	}
	struct cli_auth_user *u = &a->users[a->n];
	snprintf(u->name, sizeof(u->name), "%.*s", (int)nu, p);
	snprintf(u->secret, sizeof(u->secret), "%s", colon + 1);
	u->hashed = u->secret[0] == '$';
	if (u->hashed && !hash_supported(u->secret)) {
		snprintf(err, errlen, "%s:%u: a hash this system's crypt(3) does not know", path, no);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < a->n; i++)
		if (!strcmp(a->users[i].name, u->name)) {
			snprintf(err, errlen, "%s:%u: user '%s' listed twice", path, no, u->name);
			return -EINVAL;
		}
	a->n++;
	return 0;
}

/* Others must not read it (it holds passwords or hashes worth cracking)
 * nor write it (they could add themselves). */
static int auth_file_mode(FILE *f, const char *path, char *err, size_t errlen)
{
	struct stat st;
	if (fstat(fileno(f), &st) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		return -EINVAL;
	}
	if (st.st_mode & (S_IROTH | S_IWOTH)) {
		snprintf(err, errlen, "%s: mode %04o lets others read or write it (chmod o-rw)", path,
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

struct cli_auth *cli_auth_load(const char *path, char *err, size_t errlen)
{
	/* O_NONBLOCK: a FIFO named by mistake must not hang --check; the
	 * mode check below refuses anything but a regular file. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	struct cli_auth *a = calloc(1, sizeof(*a));
	char line[AUTH_USER_MAX + AUTH_SECRET_MAX + 64];
	int rc = a ? auth_file_mode(f, path, err, errlen) : -ENOMEM;
	for (unsigned no = 1; !rc && fgets(line, sizeof(line), f); no++) {
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%u: line too long", path, no);
			rc = -EINVAL;
			break;
		}
		rc = auth_line(a, line, path, no, err, errlen);
	}
	explicit_bzero(line, sizeof(line));
	fclose(f);
	if (!rc && !a->n) {
		snprintf(err, errlen, "%s: no USER:PASSWORD line", path);
		rc = -EINVAL;
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	if (rc) {
		cli_auth_free(a);
		return NULL;
	}
	return a;
}

bool cli_auth_check(const struct cli_auth *a, const char *user, const char *password)
{
	if (!a || !user || !password)
		return false;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct cli_auth_user *u = &a->users[i];
		if (strcmp(u->name, user))
			continue;
		return u->hashed ? hash_matches(u->secret, password) : same_secret(u->secret, password);
	}
	return false;
}

void cli_auth_free(struct cli_auth *a)
{
	if (!a)
		return;
	explicit_bzero(a, sizeof(*a));
	free(a);
}

/* ---- the file directory ---- */

/* Resolved once; read by commands, which run one at a time. */
static char file_dir[PATH_MAX];

int cli_set_file_dir(const char *dir, char *err, size_t errlen)
{
	char real[PATH_MAX];
	struct stat st;
	if (!dir || !dir[0]) {
		file_dir[0] = 0;
		return 0;
	}
	if (!realpath(dir, real) || stat(real, &st) < 0) {
		snprintf(err, errlen, "cli-file-dir %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "cli-file-dir %s: %s", dir, strerror(ENOTDIR));
		return -ENOTDIR;
	}
	snprintf(file_dir, sizeof(file_dir), "%s", real);
	return 0;
}

/* Whether resolved path p is dir or lies below it. */
static bool under(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1) /* "/" */
		return true;
	return !strncmp(p, dir, n) && (p[n] == 0 || p[n] == '/');
}

/* The resolved parent directory of path, which must lie under the file
 * directory, into real; its last component, a plain name, in *name; the
 * two joined in out. */
static int resolve_parent(struct cli_session *s, const char *path, char real[PATH_MAX], const char **name, char *out,
			  size_t outlen)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(path, '/');
	*name = slash ? slash + 1 : path;
	if (!**name || !strcmp(*name, ".") || !strcmp(*name, ".."))
		return cli_fail(s, -EINVAL, "%s: expected a file name at the end", path);
	if (!slash)
		snprintf(parent, sizeof(parent), ".");
	else if (slash == path)
		snprintf(parent, sizeof(parent), "/");
	else if ((size_t)(slash - path) >= sizeof(parent))
		return cli_fail(s, -ENAMETOOLONG, "%s: path too long", path);
	else
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
	if (!realpath(parent, real))
		return cli_fail(s, -errno, "%s: %s", parent, strerror(errno));
	if (!under(real, file_dir))
		return cli_fail(s, -EACCES, "%s: outside cli-file-dir %s", path, file_dir);
	if ((size_t)snprintf(out, outlen, "%s/%s", strcmp(real, "/") ? real : "", *name) >= outlen)
		return cli_fail(s, -ENAMETOOLONG, "%s: path too long", path);
	return 0;
}

int cli_file_path(struct cli_session *s, const char *path, char *out, size_t outlen)
{
	if (!file_dir[0]) {
		if ((size_t)snprintf(out, outlen, "%s", path) >= outlen)
			return cli_fail(s, -ENAMETOOLONG, "%s: path too long", path);
		return 0;
	}
	char real[PATH_MAX];
	const char *name;
	int rc = resolve_parent(s, path, real, &name, out, outlen);
	if (rc)
		return rc;
	struct stat st;
	if (lstat(out, &st) == 0 && (S_ISLNK(st.st_mode) || S_ISDIR(st.st_mode)))
		return cli_fail(s, -EACCES, "%s: is a %s; cli-file-dir takes plain files only", path,
				S_ISLNK(st.st_mode) ? "symbolic link" : "directory");
	return 0;
}

/* Directory real (resolved, at or under the file directory), opened from
 * the file directory one component at a time without following links:
 * what realpath saw may have been swapped for a link since. -1 with errno
 * (ELOOP or ENOTDIR for a link) when it cannot. */
static int open_dir_beneath(const char *real)
{
	int dfd = open(file_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const char *rest = real + (strcmp(file_dir, "/") ? strlen(file_dir) : 0);
	char comp[NAME_MAX + 1];
	for (;;) {
		rest += strspn(rest, "/");
		if (dfd < 0 || !*rest)
			break;
		size_t n = strcspn(rest, "/");
		if (n > NAME_MAX) {
			close(dfd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, rest, n);
		comp[n] = 0;
		rest += n;
		int next = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(dfd);
		errno = e;
		dfd = next;
	}
	return dfd;
}

/* Why fd is not a plain file with no other name, or NULL. */
static const char *not_plain(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return strerror(errno);
	if (!S_ISREG(st.st_mode))
		return "not a plain file; cli-file-dir takes plain files only";
	if (st.st_nlink > 1)
		return "has other hard links; cli-file-dir takes plain files only";
	return NULL;
}

/* fd made blocking, and under a file directory checked by not_plain; or a
 * negative errno after saying why (fd closed). */
static int take_fd(struct cli_session *s, const char *path, int fd)
{
	const char *why = file_dir[0] ? not_plain(fd) : NULL;
	if (!why && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		why = strerror(errno);
	if (!why)
		return fd;
	close(fd);
	return cli_fail(s, -EACCES, "%s: %s", path, why);
}

int cli_file_open(struct cli_session *s, const char *path, char *out, size_t outlen)
{
	/* O_NONBLOCK: a FIFO must not hang the session until someone reads it. */
	const int flags = O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC;
	if (!file_dir[0]) {
		int rc = cli_file_path(s, path, out, outlen);
		if (rc)
			return rc;
		int fd = open(path, flags, 0666);
		if (fd < 0)
			return cli_fail(s, -errno, "cannot write %s: %s", path, strerror(errno));
		return take_fd(s, path, fd);
	}
	char real[PATH_MAX];
	const char *name;
	int rc = resolve_parent(s, path, real, &name, out, outlen);
	if (rc)
		return rc;
	int dfd = open_dir_beneath(real);
	if (dfd < 0)
		return cli_fail(s, -EACCES, "%s: its directory changed under cli-file-dir (%s)", path, strerror(errno));
	int fd = openat(dfd, name, flags | O_NOFOLLOW, 0666);
	int e = errno;
	close(dfd);
	if (fd >= 0)
		return take_fd(s, path, fd);
	if (e == ELOOP || e == EISDIR)
		return cli_fail(s, -EACCES, "%s: is a %s; cli-file-dir takes plain files only", path,
				e == ELOOP ? "symbolic link" : "directory");
	if (e == ENXIO) /* a FIFO nobody reads */
		return cli_fail(s, -EACCES, "%s: not a plain file; cli-file-dir takes plain files only", path);
	return cli_fail(s, -e, "cannot write %s: %s", out, strerror(e));
}

int cli_file_fopen(struct cli_session *s, const char *path, char *out, size_t outlen, FILE **f)
{
	int fd = cli_file_open(s, path, out, outlen);
	if (fd < 0)
		return fd;
	/* Truncated only now: a refused or failed open changed nothing. */
	*f = ftruncate(fd, 0) == 0 ? fdopen(fd, "w") : NULL;
	if (*f)
		return 0;
	int e = errno;
	close(fd);
	return cli_fail(s, -e, "cannot write %s: %s", out, strerror(e));
}
