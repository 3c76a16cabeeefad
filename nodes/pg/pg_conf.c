/* The `packet-generator` startup.conf section: one named block per stream,
 * read through one declarative table (base/conf.h). Keys and their values:
 *
 *   limit N                 packets per run, 0 unlimited (default 0)
 *   rate R                  packets per second: 1000, 10kpps, 1mpps; 0 as fast as possible
 *   size N | N-M            frame size in bytes without FCS (default 64)
 *   size-mode fixed|increment|random   how a range is walked (default increment)
 *   src-mac / dst-mac MAC   (02:00:00:00:00:01 / 02:00:00:00:00:02)
 *   ethertype N             0x0800 builds IPv4 (default), anything else Ethernet + payload
 *   src-ip / dst-ip A | A-B IPv4 address, or a range walked one address per packet
 *   protocol udp|tcp|icmp|none
 *   src-port / dst-port P | P-Q   walked one port per packet (1234 / 4321)
 *   ttl N, dscp N           (64, 0)
 *   data HEX                raw packet bytes instead of the header fields
 *   next-node NAME          (ethernet-input)
 *   rx-if N, thread N       rx interface stamped in buffers; graph thread (0, 0)
 *   disabled                add the stream without starting it
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/conf.h"
#include "graph/node.h"
#include "base/util.h"
#include "nodes/pg/pg.h"

_Static_assert(PG_NAME_MAX == CONF_NAME_SIZE, "stream names are block names");
/* The range parsers write a value and the field right after it. */
_Static_assert(offsetof(struct pg_stream_config, src_ip_count) ==
		       offsetof(struct pg_stream_config, src_ip) + sizeof(uint32_t),
	       "src-ip range layout");
_Static_assert(offsetof(struct pg_stream_config, dst_ip_count) ==
		       offsetof(struct pg_stream_config, dst_ip) + sizeof(uint32_t),
	       "dst-ip range layout");
_Static_assert(offsetof(struct pg_stream_config, src_port_last) ==
		       offsetof(struct pg_stream_config, src_port) + sizeof(uint16_t),
	       "src-port range layout");
_Static_assert(offsetof(struct pg_stream_config, dst_port_last) ==
		       offsetof(struct pg_stream_config, dst_port) + sizeof(uint16_t),
	       "dst-port range layout");
_Static_assert(offsetof(struct pg_stream_config, size_max) ==
		       offsetof(struct pg_stream_config, size_min) + sizeof(uint32_t),
	       "size range layout");

/* Split "A" or "A-B" into two words; returns how many (0: malformed). */
static int split_range(const char *text, char *a, char *b, size_t len)
{
	const char *dash = strchr(text, '-');
	size_t na = dash ? (size_t)(dash - text) : strlen(text);
	if (na == 0 || na >= len || (dash && (!dash[1] || strlen(dash + 1) >= len)))
		return 0;
	memcpy(a, text, na);
	a[na] = 0;
	if (!dash)
		return 1;
	strcpy(b, dash + 1);
	return 2;
}

static int parse_uint(const char *s, uint64_t max, uint64_t *v)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (*end || errno)
		return -EINVAL;
	if (x > max)
		return -ERANGE;
	*v = x;
	return 0;
}

static int parse_size(const struct conf_key *k, const char *text, void *obj, char *err, size_t errlen)
{
	char a[16], b[16];
	uint64_t lo, hi;
	int n = split_range(text, a, b, sizeof(a));
	int r = n ? parse_uint(a, PG_SIZE_MAX, &lo) : -EINVAL;
	if (!r)
		r = parse_uint(n == 2 ? b : a, PG_SIZE_MAX, &hi);
	if (!r && (lo < PG_SIZE_MIN || hi < lo))
		r = -ERANGE;
	if (r) {
		snprintf(err, errlen, r == -ERANGE ? "expected sizes %d-%d, low before high"
						   : "expected a size such as 64 or 64-1518",
			 PG_SIZE_MIN, PG_SIZE_MAX);
		return r;
	}
	uint32_t *f = (uint32_t *)((char *)obj + k->offset);
	f[0] = (uint32_t)lo;
	f[1] = (uint32_t)hi;
	return 0;
}

static int format_size(const struct conf_key *k, const void *obj, char *buf, size_t len)
{
	const uint32_t *f = (const uint32_t *)((const char *)obj + k->offset);
	if (f[0] == f[1])
		return snprintf(buf, len, "%u", f[0]);
	return snprintf(buf, len, "%u-%u", f[0], f[1]);
}

static int parse_ip_range(const struct conf_key *k, const char *text, void *obj, char *err,
			  size_t errlen)
{
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
	struct in_addr x, y;
	int n = split_range(text, a, b, sizeof(a));
	if (!n || inet_pton(AF_INET, a, &x) != 1 || (n == 2 && inet_pton(AF_INET, b, &y) != 1)) {
		snprintf(err, errlen, "expected an IPv4 address or range such as 10.0.0.1-10.0.0.100");
		return -EINVAL;
	}
	uint32_t lo = ntohl(x.s_addr), hi = n == 2 ? ntohl(y.s_addr) : lo;
	if (hi < lo) {
		snprintf(err, errlen, "expected the lower address first");
		return -ERANGE;
	}
	uint32_t *f = (uint32_t *)((char *)obj + k->offset);
	f[0] = lo;
	f[1] = hi - lo + 1; /* 2^32 addresses cannot be written: hi < lo then wraps */
	return 0;
}

static int format_ip_range(const struct conf_key *k, const void *obj, char *buf, size_t len)
{
	const uint32_t *f = (const uint32_t *)((const char *)obj + k->offset);
	uint32_t lo = f[0], hi = f[0] + (f[1] ? f[1] - 1 : 0);
	int n = snprintf(buf, len, "%u.%u.%u.%u", lo >> 24, (lo >> 16) & 255, (lo >> 8) & 255, lo & 255);
	if (hi == lo)
		return n;
	size_t off = MIN((size_t)n, len ? len - 1 : 0);
	return n + snprintf(buf + off, len - off, "-%u.%u.%u.%u", hi >> 24, (hi >> 16) & 255,
			    (hi >> 8) & 255, hi & 255);
}

static int parse_port_range(const struct conf_key *k, const char *text, void *obj, char *err,
			    size_t errlen)
{
	char a[8], b[8];
	uint64_t lo, hi;
	int n = split_range(text, a, b, sizeof(a));
	int r = n ? parse_uint(a, UINT16_MAX, &lo) : -EINVAL;
	if (!r)
		r = parse_uint(n == 2 ? b : a, UINT16_MAX, &hi);
	if (!r && hi < lo)
		r = -ERANGE;
	if (r) {
		snprintf(err, errlen, r == -ERANGE ? "expected ports 0-65535, low before high"
						   : "expected a port such as 1234 or 1024-2047");
		return r;
	}
	uint16_t *f = (uint16_t *)((char *)obj + k->offset);
	f[0] = (uint16_t)lo;
	f[1] = hi == lo ? 0 : (uint16_t)hi;
	return 0;
}

static int format_port_range(const struct conf_key *k, const void *obj, char *buf, size_t len)
{
	const uint16_t *f = (const uint16_t *)((const char *)obj + k->offset);
	if (!f[1] || f[1] == f[0])
		return snprintf(buf, len, "%u", f[0]);
	return snprintf(buf, len, "%u-%u", f[0], f[1]);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int parse_data(const struct conf_key *k, const char *text, void *obj, char *err, size_t errlen)
{
	(void)k;
	struct pg_stream_config *c = obj;
	if (text[0] == '0' && (text[1] | 0x20) == 'x')
		text += 2;
	size_t n = strlen(text);
	if (n == 0 || n % 2) {
		snprintf(err, errlen, "expected an even number of hex digits");
		return -EINVAL;
	}
	if (n / 2 > PG_DATA_MAX) {
		snprintf(err, errlen, "expected at most %d bytes of data", PG_DATA_MAX);
		return -ERANGE;
	}
	for (size_t i = 0; i < n; i++)
		if (hex_digit(text[i]) < 0) {
			snprintf(err, errlen, "expected hex digits, found '%c'", text[i]);
			return -EINVAL;
		}
	for (size_t i = 0; i < n / 2; i++)
		c->data[i] = (uint8_t)(hex_digit(text[2 * i]) << 4 | hex_digit(text[2 * i + 1]));
	c->data_len = (uint16_t)(n / 2);
	return 0;
}

static int format_data(const struct conf_key *k, const void *obj, char *buf, size_t len)
{
	(void)k;
	const struct pg_stream_config *c = obj;
	size_t need = 2u * c->data_len;
	for (size_t i = 0; i < c->data_len && 2 * i + 2 < len; i++)
		snprintf(buf + 2 * i, 3, "%02x", c->data[i]);
	if (len && need >= len)
		buf[len - 1] = 0;
	else if (len && !c->data_len)
		buf[0] = 0;
	return (int)need;
}

static const char *const size_modes[] = { "fixed", "increment", "random", NULL };
static const char *const protocols[] = { "udp", "tcp", "icmp", "none", NULL };

#define PG_FIELD(m) CONF_FIELD(struct pg_stream_config, m)

/* No key carries a default: pg_stream_config_default (the block's init) is
 * the one place defaults live, and --check prints what it set. */
static const struct conf_key pg_stream_keys[] = {
	{ .name = "limit", .type = CONF_UINT, PG_FIELD(limit), .doc = "packets per run, 0: unlimited" },
	{ .name = "rate", .type = CONF_PPS, PG_FIELD(rate_pps), .doc = "packets per second, 0: no limit" },
	{ .name = "size", .type = CONF_CUSTOM, .offset = offsetof(struct pg_stream_config, size_min),
	  .size = 2 * sizeof(uint32_t), .parse = parse_size, .format = format_size,
	  .doc = "frame size or range in bytes, without FCS" },
	{ .name = "size-mode", .type = CONF_ENUM, .choices = size_modes, PG_FIELD(size_mode),
	  .doc = "how a size range is walked" },
	{ .name = "src-mac", .type = CONF_MAC, PG_FIELD(src_mac) },
	{ .name = "dst-mac", .type = CONF_MAC, PG_FIELD(dst_mac) },
	{ .name = "ethertype", .type = CONF_UINT, PG_FIELD(ethertype), .doc = "0x0800 builds IPv4" },
	{ .name = "src-ip", .type = CONF_CUSTOM, .offset = offsetof(struct pg_stream_config, src_ip),
	  .size = 2 * sizeof(uint32_t), .parse = parse_ip_range, .format = format_ip_range,
	  .doc = "address or range, one address per packet" },
	{ .name = "dst-ip", .type = CONF_CUSTOM, .offset = offsetof(struct pg_stream_config, dst_ip),
	  .size = 2 * sizeof(uint32_t), .parse = parse_ip_range, .format = format_ip_range,
	  .doc = "address or range, one address per packet" },
	{ .name = "protocol", .type = CONF_ENUM, .choices = protocols, PG_FIELD(proto) },
	{ .name = "src-port", .type = CONF_CUSTOM, .offset = offsetof(struct pg_stream_config, src_port),
	  .size = 2 * sizeof(uint16_t), .parse = parse_port_range, .format = format_port_range,
	  .doc = "port or range, one port per packet" },
	{ .name = "dst-port", .type = CONF_CUSTOM, .offset = offsetof(struct pg_stream_config, dst_port),
	  .size = 2 * sizeof(uint16_t), .parse = parse_port_range, .format = format_port_range,
	  .doc = "port or range, one port per packet" },
	{ .name = "ttl", .type = CONF_UINT, .max = 255, PG_FIELD(ttl) },
	{ .name = "dscp", .type = CONF_UINT, .max = 63, PG_FIELD(dscp) },
	{ .name = "data", .type = CONF_CUSTOM, .offset = offsetof(struct pg_stream_config, data_len),
	  .size = offsetof(struct pg_stream_config, data) + PG_DATA_MAX -
		  offsetof(struct pg_stream_config, data_len), .parse = parse_data, .format = format_data,
	  .doc = "raw packet bytes in hex, instead of the header fields" },
	{ .name = "next-node", .type = CONF_STRING, PG_FIELD(next_node) },
	{ .name = "rx-if", .type = CONF_UINT, PG_FIELD(rx_if), .doc = "rx interface index stamped in buffers" },
	{ .name = "thread", .type = CONF_UINT, .max = GRAPH_MAX_THREADS - 1, PG_FIELD(thread_index),
	  .doc = "graph thread that produces the stream" },
	{ .name = "disabled", .type = CONF_FLAG, .flags = CONF_F_NEGATE, PG_FIELD(enabled),
	  .doc = "add the stream without starting it" },
	{ 0 },
};

static void pg_conf_stream_init(void *elem)
{
	struct pg_stream_config *c = elem;
	pg_stream_config_default(c);
	c->enabled = true;
}

static int pg_conf_stream_check(void *obj, struct conf_check *chk)
{
	static const char *const header_keys[] = {
		"src-mac", "dst-mac", "ethertype", "src-ip", "dst-ip", "protocol",
		"src-port", "dst-port", "ttl", "dscp", NULL,
	};
	struct pg_stream_config *c = obj;
	struct pg_stream_config d;
	pg_stream_config_default(&d);
	/* With data, a header key may only repeat its default: that keeps the
	 * effective config that --check prints readable back. */
	for (uint32_t i = 0; c->data_len && header_keys[i]; i++) {
		const struct conf_key *k = conf_key_find(chk->keys, header_keys[i]);
		if (conf_check_was_set(chk, header_keys[i]) &&
		    memcmp((char *)c + k->offset, (char *)&d + k->offset, k->size) != 0) {
			chk->key = header_keys[i];
			snprintf(chk->msg, sizeof(chk->msg),
				 "%s cannot be used with data (data is the whole packet)", header_keys[i]);
			return -EINVAL;
		}
	}
	if (c->size_min == c->size_max) {
		c->size_mode = PG_SIZE_FIXED;
	} else if (c->size_mode == PG_SIZE_FIXED) {
		if (conf_check_was_set(chk, "size-mode")) {
			chk->key = "size-mode";
			snprintf(chk->msg, sizeof(chk->msg),
				 "size-mode fixed needs one size, not a range (use increment or random)");
			return -EINVAL;
		}
		c->size_mode = PG_SIZE_INCREMENT;
	}
	int r = pg_stream_config_check(c, chk->msg, sizeof(chk->msg));
	if (r < 0) {
		/* The parser names file:line already: drop "pg: stream NAME: ". */
		char prefix[PG_NAME_MAX + 16];
		size_t n = (size_t)snprintf(prefix, sizeof(prefix), "pg: stream %s: ", c->name);
		if (strncmp(chk->msg, prefix, n) == 0)
			memmove(chk->msg, chk->msg + n, strlen(chk->msg + n) + 1);
		chk->key = strncmp(chk->msg, "size ", 5) == 0 ? "size" : NULL;
	}
	return r;
}

static const struct conf_block pg_stream_block = {
	.what = "stream",
	.keys = pg_stream_keys,
	.elem_size = sizeof(struct pg_stream_config),
	.array_offset = offsetof(struct pg_conf, streams),
	.count_offset = offsetof(struct pg_conf, n_streams),
	.max = PG_CONF_MAX_STREAMS,
	.name_offset = offsetof(struct pg_stream_config, name),
	.name_size = PG_NAME_MAX,
	.init = pg_conf_stream_init,
	.check = pg_conf_stream_check,
};

const struct conf_section pg_conf_section = {
	.name = "packet-generator",
	.doc = "packet generator streams, produced by pg-input",
	.size = sizeof(struct pg_conf),
	.block = &pg_stream_block,
};

int pg_conf_apply(const struct pg_conf *conf, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < conf->n_streams; i++) {
		int r = pg_stream_add(&conf->streams[i], err, errlen);
		if (r < 0) {
			while (i--)
				pg_stream_delete(conf->streams[i].name);
			return r;
		}
	}
	return 0;
}
