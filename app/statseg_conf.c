/* statseg { socket-name PATH size BYTES update-interval DURATION
 * prometheus HOST:PORT prometheus-allow-remote BOOL }: the stats segment's
 * configuration (app/statseg.h, app/statseg_http.h,
 * docs/stats-segment.md). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/statseg.h"
#include "app/statseg_http.h"
#include "cli/cli.h"

static const struct conf_key statseg_keys[] = {
	{ .name = "socket-name", .type = CONF_STRING, CONF_FIELD(struct statseg_conf, socket_name),
	  .doc = "unix socket handing readers the segment (default: stats.sock beside the CLI socket)" },
	{ .name = "size", .type = CONF_SIZE, .def = "32M", .min = 64 * 1024, .max = 1ull << 30,
	  CONF_FIELD(struct statseg_conf, size), .doc = "bytes of the shared-memory segment" },
	{ .name = "update-interval", .type = CONF_DURATION, .def = "100ms", .min = 1000000, .max = 60000000000ull,
	  CONF_FIELD(struct statseg_conf, interval_ns), .doc = "how often the counters are copied into the segment" },
	{ .name = "prometheus", .type = CONF_STRING, CONF_FIELD(struct statseg_conf, prometheus),
	  .doc = "HOST:PORT serving GET /metrics (Prometheus text, OpenMetrics on request); default: none" },
	{ .name = "prometheus-allow-remote", .type = CONF_BOOL, .def = "no",
	  CONF_FIELD(struct statseg_conf, prometheus_allow_remote),
	  .doc = "let prometheus listen on an address that is not loopback" },
	{ 0 },
};

static int parse_fail(char *err, size_t errlen, const char *listen)
{
	snprintf(err, errlen, "expected HOST:PORT with a numeric IPv4 host, [IPv6] or localhost, and a port "
			      "1..65535 (not '%s')",
		 listen);
	return -EINVAL;
}

int statseg_http_parse(const char *listen, struct sockaddr_storage *a, char *err, size_t errlen)
{
	const char *colon = strrchr(listen, ':');
	char host[64], *end;
	if (!colon || colon == listen || (size_t)(colon - listen) >= sizeof(host))
		return parse_fail(err, errlen, listen);
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 1 || port > 65535)
		return parse_fail(err, errlen, listen);
	snprintf(host, sizeof(host), "%.*s", (int)(colon - listen), listen);
	memset(a, 0, sizeof(*a));
	struct sockaddr_in *a4 = (struct sockaddr_in *)a;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)a;
	size_t n = strlen(host);
	if (host[0] == '[' && host[n - 1] == ']') {
		host[n - 1] = 0;
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
			return parse_fail(err, errlen, listen);
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		return 0;
	}
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
		return parse_fail(err, errlen, listen);
	a4->sin_family = AF_INET;
	a4->sin_port = htons((uint16_t)port);
	return 0;
}

/* The socket is a unix socket only: the segment is shared memory. The
 * endpoint follows cli-listen's rule: loopback unless said otherwise. */
static int statseg_check(void *obj, struct conf_check *chk)
{
	const struct statseg_conf *c = obj;
	if (c->socket_name[0] && c->socket_name[0] != '/' && c->socket_name[0] != '.') {
		chk->key = "socket-name";
		snprintf(chk->msg, sizeof(chk->msg), "expected a unix socket path (starting with / or .)");
		return -EINVAL;
	}
	struct sockaddr_storage a;
	if (c->prometheus[0] && statseg_http_parse(c->prometheus, &a, chk->msg, sizeof(chk->msg))) {
		chk->key = "prometheus";
		return -EINVAL;
	}
	if (c->prometheus[0] && !cli_listen_is_loopback(c->prometheus) && !c->prometheus_allow_remote) {
		chk->key = "prometheus";
		snprintf(chk->msg, sizeof(chk->msg),
			 "not a loopback address: metrics served to the network need prometheus-allow-remote yes");
		return -EINVAL;
	}
	return 0;
}

const struct conf_section statseg_conf_section = {
	.name = "statseg",
	.doc = "the stats segment: counters other processes map read-only (sluice-stats), and /metrics",
	.size = sizeof(struct statseg_conf),
	.keys = statseg_keys,
	.check = statseg_check,
};
