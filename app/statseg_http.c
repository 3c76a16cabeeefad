/* The Prometheus / OpenMetrics endpoint (app/statseg_http.h).
 *
 * Why a thread in the daemon and not a separate exporter process: one
 * process to run and one file (startup.conf) to configure, as the issue
 * asks, and the isolation a separate process would give is kept anyway:
 * the thread reads the segment through the reader library from a
 * read-only mapping of its own, like any outside reader, and holds no lock
 * the datapath or the CLI takes (a slow or stuck scrape delays nothing but
 * the next scrape). HTTP is libmicrohttpd's, with its own internal polling
 * thread; requests are served one at a time, which a scraper every few
 * seconds never notices and which bounds what a flood of them can cost.
 *
 * Content negotiation (Accept) and the formats: base/statseg_metrics.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <microhttpd.h>

#include "app/statseg_http.h"
#include "base/statseg.h"
#include "base/statseg_metrics.h"
#include "base/util.h"
#include "graph/graph_conf.h"
#include "graph/node.h"
#include "sluice_version.h"

#define HTTP_MAX_CONNECTIONS 16
#define HTTP_TIMEOUT_S 10
#define SNAPSHOT_TRIES 1000

static struct {
	struct MHD_Daemon *d;
	struct statseg_client c;
	bool mapped;
} http;

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type, char *body, size_t len,
			     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
	return reply(conn, status, "text/plain; charset=utf-8", (char *)(uintptr_t)text, strlen(text),
		     MHD_RESPMEM_PERSISTENT);
}

/* One scrape: a consistent copy of every entry, then the text. */
static enum MHD_Result serve_metrics(struct MHD_Connection *conn)
{
	const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	enum statseg_metrics_format f = statseg_metrics_negotiate(accept);
	struct statseg_snapshot s;
	char err[256];
	if (statseg_snapshot(&http.c, NULL, NULL, SNAPSHOT_TRIES, &s, err, sizeof(err))) {
		base_log("prometheus", "scrape: %s", err);
		return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "stats segment unavailable\n");
	}
	char *text;
	size_t len;
	int rc = statseg_metrics_format(&s, f, SLUICE_VERSION, &text, &len);
	statseg_snapshot_free(&s);
	if (rc)
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	return reply(conn, MHD_HTTP_OK, statseg_metrics_content_type(f), text, len, MHD_RESPMEM_MUST_FREE);
}

/* GET /metrics (HEAD too: libmicrohttpd leaves the body out); 404 for
 * another path, 405 for another method. A request body is never read.
 * libmicrohttpd calls this first with the headers alone; a response queued
 * in that first call makes it close the connection after replying (it has
 * not seen the end of the request), so a GET or HEAD is answered in the
 * second call and its connection stays open for the next scrape, as
 * Prometheus keeps one per target (HTTP/1.1 persistent connections, RFC
 * 9112 §9.3). */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **req_cls)
{
	static int headers_seen;

	(void)cls, (void)version, (void)upload_data;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	if (*req_cls == NULL) {
		*req_cls = &headers_seen;
		return MHD_YES;
	}
	*upload_data_size = 0; /* a body on a GET is not read */
	if (strcmp(url, "/metrics"))
		return reply_text(conn, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n");
	return serve_metrics(conn);
}

static void on_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char line[256];
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	base_log("prometheus", "%s", line);
}

static int start_fail(int rc, char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "statseg: prometheus: %s", what);
	statseg_http_stop();
	return rc;
}

/* The daemon's own read-only mapping, through a descriptor of its own. */
static int map_segment(int segment_fd, char *err, size_t errlen)
{
	int fd = fcntl(segment_fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int rc = statseg_map_fd(&http.c, fd, err, errlen);
	if (rc)
		close(fd);
	http.mapped = rc == 0;
	return rc;
}

/* libmicrohttpd's thread inherits the signal mask and the CPU affinity of
 * the thread that starts it: it gets every signal blocked (they stay the
 * main thread's); its CPUs are the control threads' (app/main.c starts the
 * control stages on the CPUs no datapath thread uses). */
static struct MHD_Daemon *start_daemon(const struct sockaddr_storage *a)
{
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG | (a->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	/* The logger first: libmicrohttpd logs with its own until it sees it. */
	struct MHD_Daemon *d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_EXTERNAL_LOGGER, on_log,
						NULL, MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)a,
						MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
						MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return d;
}

int statseg_http_start(const struct statseg_conf *conf, int segment_fd,
		       char *err, size_t errlen)
{
	if (!conf->prometheus[0])
		return 0;
	struct sockaddr_storage a;
	char why[256];
	if (statseg_http_parse(conf->prometheus, &a, why, sizeof(why)))
		return start_fail(-EINVAL, err, errlen, why);
	int rc = map_segment(segment_fd, why, sizeof(why));
	if (rc)
		return start_fail(rc, err, errlen, why);
	http.d = start_daemon(&a);
	if (!http.d) {
		snprintf(why, sizeof(why), "cannot listen on %s (in use, or not an address of this host)",
			 conf->prometheus);
		return start_fail(-EADDRNOTAVAIL, err, errlen, why);
	}
	base_log("prometheus", "http://%s/metrics", conf->prometheus);
	return 0;
}

void statseg_http_stop(void)
{
	if (http.d)
		MHD_stop_daemon(http.d);
	http.d = NULL;
	if (http.mapped)
		statseg_disconnect(&http.c);
	http.mapped = false;
}
