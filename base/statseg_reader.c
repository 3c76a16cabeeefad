/* The stats segment reader (base/statseg.h): receive the segment's
 * descriptor from the daemon's socket, map it read-only, and copy entries
 * consistently with the epoch/in-progress protocol of
 * docs/stats-segment.md. libc only. */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/statseg.h"

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

/* Every word of the segment is read whole; acquire so that a value written
 * after the writer raised in_progress is never seen before that flag. */
static inline uint64_t word(const uint8_t *base, uint64_t off)
{
	return __atomic_load_n((const uint64_t *)(const void *)(base + off), __ATOMIC_ACQUIRE);
}

#define HDR(field) offsetof(struct statseg_header, field)

int statseg_map_fd(struct statseg_client *c, int fd, char *err, size_t errlen)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return fail(err, errlen, -errno, "stats segment: %s", strerror(errno));
	if ((size_t)st.st_size < sizeof(struct statseg_header))
		return fail(err, errlen, -EPROTO, "stats segment: %lld bytes, too small", (long long)st.st_size);
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return fail(err, errlen, -errno, "stats segment: mmap: %s", strerror(errno));
	const uint8_t *base = p;
	uint64_t magic = word(base, HDR(magic));
	uint64_t version = word(base, HDR(version)) & 0xffffffffu;
	if (magic != STATSEG_MAGIC || version != STATSEG_VERSION) {
		munmap(p, (size_t)st.st_size);
		return fail(err, errlen, -EPROTO, "stats segment: not a version %d sluice stats segment (version %llu)",
			    STATSEG_VERSION, (unsigned long long)version);
	}
	c->base = base;
	c->size = (size_t)st.st_size;
	c->fd = fd;
	return 0;
}

/* One byte and the descriptor in an SCM_RIGHTS message. */
static int receive_fd(int sock)
{
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	struct cmsghdr *h = CMSG_FIRSTHDR(&msg);
	if (n != 1 || !h || h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS ||
	    h->cmsg_len != CMSG_LEN(sizeof(int)))
		return -EPROTO;
	int fd;
	memcpy(&fd, CMSG_DATA(h), sizeof(fd));
	return fd;
}

int statseg_connect(struct statseg_client *c, const char *socket_path, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(socket_path) >= sizeof(a.sun_path))
		return fail(err, errlen, -ENAMETOOLONG, "%s: path too long", socket_path);
	memcpy(a.sun_path, socket_path, strlen(socket_path) + 1);
	int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return fail(err, errlen, -errno, "socket: %s", strerror(errno));
	struct timeval tv = { .tv_sec = 5 }; /* the daemon answers at once or not at all */
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int fd = connect(sock, (struct sockaddr *)&a, sizeof(a)) < 0 ? -errno : receive_fd(sock);
	close(sock);
	if (fd < 0)
		return fail(err, errlen, fd, "%s: %s", socket_path, strerror(-fd));
	int rc = statseg_map_fd(c, fd, err, errlen);
	if (rc)
		close(fd);
	return rc;
}

void statseg_disconnect(struct statseg_client *c)
{
	if (c->base)
		munmap((void *)(uintptr_t)c->base, c->size);
	if (c->fd >= 0)
		close(c->fd);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

const char *statseg_type_name(uint32_t type)
{
	static const char *const names[] = {
		[STATSEG_SCALAR_COUNTER] = "counter",          [STATSEG_SCALAR_GAUGE] = "gauge",
		[STATSEG_COUNTER_VECTOR] = "counter-vector",   [STATSEG_GAUGE_VECTOR] = "gauge-vector",
		[STATSEG_COMBINED_VECTOR] = "combined-vector", [STATSEG_NAME_VECTOR] = "name-vector",
	};
	return type < sizeof(names) / sizeof(names[0]) && names[type] ? names[type] : "unknown";
}

void statseg_snapshot_free(struct statseg_snapshot *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		free(s->vals[i].v);
		free(s->vals[i].labels);
	}
	free(s->vals);
	memset(s, 0, sizeof(*s));
}

static void copy_words(const uint8_t *base, uint64_t off, void *dst, size_t n_words)
{
	uint64_t *d = dst;
	for (size_t i = 0; i < n_words; i++)
		d[i] = word(base, off + 8 * i);
}

/* Bytes of an entry's data, or 0 when its shape is not one this version
 * knows (a torn directory, which the epoch check then rejects). */
static uint64_t entry_bytes(const struct statseg_entry *e)
{
	uint64_t n = (uint64_t)e->dims[0] * e->dims[1];
	if (e->type == STATSEG_NAME_VECTOR)
		return e->dims[1] == 1 ? n * STATSEG_LABEL_SIZE : 0;
	if (e->type < STATSEG_SCALAR_COUNTER || e->type > STATSEG_COMBINED_VECTOR)
		return 0;
	return n * 8 * statseg_elem_words(e->type);
}

static bool entry_valid(const struct statseg_client *c, const struct statseg_entry *e, uint32_t n_entries)
{
	uint64_t bytes = entry_bytes(e);
	if (e->name[STATSEG_NAME_SIZE - 1] || e->offset % 8 || e->offset > c->size || bytes > c->size - e->offset)
		return false;
	for (int k = 0; k < 2; k++)
		if (e->dim_labels[k] != STATSEG_NO_LABELS && e->dim_labels[k] >= n_entries)
			return false;
	if (e->row_lengths != STATSEG_NO_LABELS && e->row_lengths >= n_entries)
		return false;
	return e->type == STATSEG_NAME_VECTOR || bytes > 0 || (uint64_t)e->dims[0] * e->dims[1] == 0;
}

/* Copy the data of one entry (already validated). */
static int copy_value(const struct statseg_client *c, struct statseg_value *v)
{
	uint64_t bytes = entry_bytes(&v->e);
	void *p = malloc(bytes ? bytes : 8);
	if (!p)
		return -ENOMEM;
	copy_words(c->base, v->e.offset, p, bytes / 8);
	if (v->e.type == STATSEG_NAME_VECTOR) {
		v->labels = p;
		for (uint32_t i = 0; i < v->e.dims[0]; i++)
			v->labels[i][STATSEG_LABEL_SIZE - 1] = 0;
	} else {
		v->v = p;
	}
	return 0;
}

struct attempt {
	struct statseg_entry *dir;
	uint8_t *want; /* per entry: 0 no, 1 matched, 2 needed for labels */
};

/* One try at a copy; -EAGAIN when the directory looked torn. */
static int try_snapshot(const struct statseg_client *c, statseg_match_fn *match, void *arg, uint64_t n_entries,
			uint64_t dir_off, struct attempt *a, struct statseg_snapshot *s)
{
	if (n_entries > (c->size - dir_off) / sizeof(struct statseg_entry) || dir_off > c->size)
		return -EAGAIN;
	a->dir = calloc(n_entries ? n_entries : 1, sizeof(*a->dir));
	a->want = calloc(n_entries ? n_entries : 1, 1);
	if (!a->dir || !a->want)
		return -ENOMEM;
	copy_words(c->base, dir_off, a->dir, n_entries * sizeof(struct statseg_entry) / 8);
	uint32_t n_want = 0;
	for (uint32_t i = 0; i < n_entries; i++) {
		if (!entry_valid(c, &a->dir[i], (uint32_t)n_entries))
			return -EAGAIN;
		if (!match || match(a->dir[i].name, arg))
			a->want[i] = 1;
	}
	for (uint32_t i = 0; i < n_entries; i++) {
		const struct statseg_entry *e = &a->dir[i];
		uint32_t refs[3] = { e->dim_labels[0], e->dim_labels[1], e->row_lengths };
		for (int k = 0; a->want[i] == 1 && k < 3; k++)
			if (refs[k] != STATSEG_NO_LABELS && !a->want[refs[k]])
				a->want[refs[k]] = 2;
	}
	for (uint32_t i = 0; i < n_entries; i++)
		n_want += a->want[i] != 0;
	s->vals = calloc(n_want ? n_want : 1, sizeof(*s->vals));
	if (!s->vals)
		return -ENOMEM;
	for (uint32_t i = 0; i < n_entries; i++) {
		if (!a->want[i])
			continue;
		struct statseg_value *v = &s->vals[s->n++];
		v->e = a->dir[i];
		v->dir_index = i;
		v->matched = a->want[i] == 1;
		if (copy_value(c, v))
			return -ENOMEM;
	}
	return 0;
}

int statseg_snapshot(const struct statseg_client *c, statseg_match_fn *match, void *arg, uint32_t max_tries,
		     struct statseg_snapshot *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	for (uint32_t t = 0; t < max_tries; t++) {
		uint64_t epoch = word(c->base, HDR(epoch));
		if (word(c->base, HDR(in_progress))) {
			sched_yield();
			continue;
		}
		struct attempt a = { 0 };
		int rc = try_snapshot(c, match, arg, word(c->base, HDR(n_entries)), word(c->base, HDR(dir_offset)), &a, s);
		s->updates = word(c->base, HDR(updates));
		s->update_ns = word(c->base, HDR(update_ns));
		s->interval_ns = word(c->base, HDR(interval_ns));
		free(a.dir);
		free(a.want);
		bool same = !word(c->base, HDR(in_progress)) && word(c->base, HDR(epoch)) == epoch;
		if (rc == -ENOMEM) {
			statseg_snapshot_free(s);
			return fail(err, errlen, rc, "stats segment: out of memory");
		}
		if (rc == 0 && same) {
			s->epoch = epoch;
			return 0;
		}
		statseg_snapshot_free(s);
		if (rc == -EAGAIN && same)
			return fail(err, errlen, -EPROTO, "stats segment: directory is not valid");
	}
	return fail(err, errlen, -EAGAIN, "stats segment: the directory kept changing (%u tries)", max_tries);
}

static const struct statseg_value *find(const struct statseg_snapshot *s, uint32_t dir_index)
{
	for (uint32_t j = 0; dir_index != STATSEG_NO_LABELS && j < s->n; j++)
		if (s->vals[j].dir_index == dir_index)
			return &s->vals[j];
	return NULL;
}

const char *statseg_label(const struct statseg_snapshot *s, const struct statseg_value *v, unsigned k, uint32_t i)
{
	const struct statseg_value *names = find(s, k < 2 ? v->e.dim_labels[k] : STATSEG_NO_LABELS);
	return names && names->labels && i < names->e.dims[0] ? names->labels[i] : NULL;
}

uint32_t statseg_row_length(const struct statseg_snapshot *s, const struct statseg_value *v, uint32_t i)
{
	const char *label = statseg_label(s, v, 0, i);
	if (label && !label[0])
		return 0;
	const struct statseg_value *len = find(s, v->e.row_lengths);
	if (!len || !len->v || i >= len->e.dims[0] * len->e.dims[1])
		return v->e.dims[1];
	return len->v[i] < v->e.dims[1] ? (uint32_t)len->v[i] : v->e.dims[1];
}
