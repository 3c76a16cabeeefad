/* The startup.conf value codec every subsystem's key table goes through
 * (numbers with units, words, cpu lists, addresses; parse and print), and
 * the registry of interface drivers' key tables. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/conf.h"

/* ---- driver registry ---- */

#define CONF_MAX_DRIVERS 32

static const struct conf_driver *drivers[CONF_MAX_DRIVERS];
static uint32_t n_drivers;

void conf_driver_register(const struct conf_driver *d)
{
	/* Constructors cannot report errors; a 33rd driver is a build bug that
	 * the unit test of the registry catches. */
	if (n_drivers < CONF_MAX_DRIVERS)
		drivers[n_drivers++] = d;
}

const struct conf_driver *conf_driver_find(const char *name)
{
	for (uint32_t i = 0; i < n_drivers; i++)
		if (strcmp(drivers[i]->name, name) == 0)
			return drivers[i];
	return NULL;
}

uint32_t conf_driver_count(void)
{
	return n_drivers;
}

const struct conf_driver *conf_driver_get(uint32_t i)
{
	return i < n_drivers ? drivers[i] : NULL;
}

void conf_driver_names(char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	if (n_drivers == 0) {
		snprintf(buf, len, "none");
		return;
	}
	for (uint32_t i = 0; i < n_drivers && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", drivers[i]->name);
}

/* ---- sections added by plugins ---- */

static const struct conf_section_reg *extra_sections[CONF_MAX_EXTRA_SECTIONS];
static uint32_t n_extra_sections, n_extra_dropped;

void conf_section_register(const struct conf_section_reg *r)
{
	if (n_extra_sections < CONF_MAX_EXTRA_SECTIONS)
		extra_sections[n_extra_sections++] = r;
	else
		n_extra_dropped++;
}

uint32_t conf_section_count(void)
{
	return n_extra_sections;
}

const struct conf_section_reg *conf_section_get(uint32_t i)
{
	return i < n_extra_sections ? extra_sections[i] : NULL;
}

uint32_t conf_section_dropped(void)
{
	return n_extra_dropped;
}

/* ---- numbers and units ---- */

struct unit {
	const char *suffix;
	uint64_t scale;
};

static const struct unit size_units[] = {
	{ "G", 1ull << 30 }, { "M", 1ull << 20 }, { "K", 1ull << 10 }, { "", 1 }, { NULL, 0 },
};
static const struct unit rate_units[] = {
	{ "gbit", 1000000000ull }, { "mbit", 1000000ull }, { "kbit", 1000ull }, { "bit", 1 }, { NULL, 0 },
};
static const struct unit pps_units[] = {
	{ "mpps", 1000000ull }, { "kpps", 1000ull }, { "pps", 1 }, { "", 1 }, { NULL, 0 },
};
static const struct unit duration_units[] = {
	{ "h", 3600000000000ull }, { "m", 60000000000ull }, { "s", 1000000000ull }, { "ms", 1000000ull }, { "us", 1000ull }, { "ns", 1 }, { NULL, 0 },
};

/* Decimal or 0x hex digits at s; *end gets the first byte after them.
 * Returns 0, -EINVAL (no digits) or -ERANGE (does not fit 64 bits). */
static int parse_digits(const char *s, uint64_t *v, const char **end)
{
	unsigned base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isxdigit((unsigned char)s[2])) {
		base = 16;
		s += 2;
	}
	if (!isxdigit((unsigned char)*s) || (base == 10 && !isdigit((unsigned char)*s)))
		return -EINVAL;
	uint64_t x = 0;
	for (; *s; s++) {
		unsigned d;
		if (isdigit((unsigned char)*s))
			d = (unsigned)(*s - '0');
		else if (base == 16 && isxdigit((unsigned char)*s))
			d = (unsigned)(tolower((unsigned char)*s) - 'a' + 10);
		else
			break;
		if (x > (UINT64_MAX - d) / base)
			return -ERANGE;
		x = x * base + d;
	}
	*v = x;
	*end = s;
	return 0;
}

/* A number followed by one of units (exact match, case-insensitive). */
static int parse_scaled(const char *text, const struct unit *units, uint64_t *v)
{
	const char *end;
	uint64_t x;
	int rc = parse_digits(text, &x, &end);
	if (rc)
		return rc;
	for (const struct unit *u = units; u->suffix; u++) {
		if (strcasecmp(end, u->suffix) != 0)
			continue;
		if (x > UINT64_MAX / u->scale)
			return -ERANGE;
		*v = x * u->scale;
		return 0;
	}
	return -EINVAL;
}

/* The largest unit that divides v exactly. */
static int format_scaled(uint64_t v, const struct unit *units, char *buf, size_t len)
{
	const struct unit *u = units;
	while (u[1].suffix && (v == 0 || v % u->scale != 0))
		u++;
	return snprintf(buf, len, "%" PRIu64 "%s", v / u->scale, u->suffix);
}

static uint64_t field_limit(size_t size)
{
	return size >= 8 ? UINT64_MAX : (1ull << (size * 8)) - 1;
}

static uint64_t load_uint(const void *obj, const struct conf_key *k)
{
	const uint8_t *p = (const uint8_t *)obj + k->offset;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	switch (k->size) {
	case 1: memcpy(&u8, p, 1); return u8;
	case 2: memcpy(&u16, p, 2); return u16;
	case 4: memcpy(&u32, p, 4); return u32;
	default: memcpy(&u64, p, 8); return u64;
	}
}

static void store_uint(void *obj, const struct conf_key *k, uint64_t v)
{
	uint8_t *p = (uint8_t *)obj + k->offset;
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;
	switch (k->size) {
	case 1: memcpy(p, &u8, 1); break;
	case 2: memcpy(p, &u16, 2); break;
	case 4: memcpy(p, &u32, 4); break;
	default: memcpy(p, &v, 8); break;
	}
}

static const struct unit *units_of(enum conf_type t)
{
	switch (t) {
	case CONF_SIZE: return size_units;
	case CONF_RATE: return rate_units;
	case CONF_PPS: return pps_units;
	case CONF_DURATION: return duration_units;
	default: return NULL;
	}
}

static const char *expected_of(const struct conf_key *k)
{
	switch (k->type) {
	case CONF_UINT: return "an unsigned integer";
	case CONF_SIZE: return "a size such as 2048, 64K, 2M or 1G";
	case CONF_RATE: return "a rate such as 100kbit, 10mbit or 1gbit";
	case CONF_PPS: return "a packet rate such as 1000, 10kpps or 1mpps";
	case CONF_DURATION: return "a duration such as 500us, 10ms or 2s";
	case CONF_MODE: return "an octal mode such as 0600";
	case CONF_BOOL: return "on or off";
	case CONF_CPULIST: return "a cpu list such as 1-3,5";
	case CONF_ADDR: return "a socket path (starting with / or .) or HOST:PORT";
	case CONF_MAC: return "a MAC address such as 02:00:00:00:00:01";
	case CONF_IP4: return "an IPv4 address such as 10.0.0.1";
	default: return "a value";
	}
}

static int format_number(const struct conf_key *k, uint64_t v, char *buf, size_t len)
{
	const struct unit *units = units_of(k->type);
	/* Buffer and packet sizes read best in bytes (data-size 2048); only
	 * memory-sized values (page-size 2M) get a suffix. */
	if (k->type == CONF_SIZE && v < (1u << 20))
		units = NULL;
	if (units)
		return format_scaled(v, units, buf, len);
	return snprintf(buf, len, "%" PRIu64, v);
}

/* Unsigned integers with or without units, range-checked. */
static int parse_number_key(const struct conf_key *k, const char *text, void *obj, char *err, size_t errlen)
{
	const struct unit *units = units_of(k->type);
	uint64_t v;
	const char *end;
	int rc = units ? parse_scaled(text, units, &v) : parse_digits(text, &v, &end);
	if (rc == 0 && !units && *end)
		rc = -EINVAL;
	uint64_t max = k->max ? k->max : field_limit(k->size);
	if (rc == 0 && (v < k->min || v > max))
		rc = -ERANGE;
	if (rc == -EINVAL) {
		snprintf(err, errlen, "expected %s", expected_of(k));
		return rc;
	}
	if (rc == -ERANGE) {
		char lo[32], hi[32];
		format_number(k, k->min, lo, sizeof(lo));
		format_number(k, max, hi, sizeof(hi));
		snprintf(err, errlen, "out of range: expected %s to %s", lo, hi);
		return rc;
	}
	store_uint(obj, k, v);
	return 0;
}

static int parse_mode(const struct conf_key *k, const char *text, void *obj, char *err, size_t errlen)
{
	uint32_t v = 0;
	const char *s = text;
	for (; *s >= '0' && *s <= '7' && v <= 07777; s++)
		v = v * 8 + (uint32_t)(*s - '0');
	if (s == text || *s || v > 07777) {
		snprintf(err, errlen, "expected %s", expected_of(k));
		return -EINVAL;
	}
	store_uint(obj, k, v);
	return 0;
}

/* ---- words ---- */

static const char *const bool_true[] = { "on", "yes", "true", "enable", "1", NULL };
static const char *const bool_false[] = { "off", "no", "false", "disable", "0", NULL };

static int word_index(const char *const *words, const char *w)
{
	for (int i = 0; words && words[i]; i++)
		if (strcmp(words[i], w) == 0)
			return i;
	return -1;
}

static int parse_bool(const struct conf_key *k, const char *text, void *obj, char *err, size_t errlen)
{
	bool v;
	if (word_index(bool_true, text) >= 0)
		v = true;
	else if (word_index(bool_false, text) >= 0)
		v = false;
	else {
		snprintf(err, errlen, "expected %s", expected_of(k));
		return -EINVAL;
	}
	memcpy((uint8_t *)obj + k->offset, &v, sizeof(v));
	return 0;
}

static int parse_enum(const struct conf_key *k, const char *text, void *obj, char *err, size_t errlen)
{
	int i = word_index(k->choices, text);
	if (i < 0) {
		size_t off = (size_t)snprintf(err, errlen, "expected one of:");
		for (int j = 0; k->choices[j] && off < errlen; j++)
			off += (size_t)snprintf(err + off, errlen - off, "%s %s", j ? "," : "", k->choices[j]);
		return -EINVAL;
	}
	store_uint(obj, k, (uint64_t)i);
	return 0;
}

static int parse_string(const struct conf_key *k, const char *text, void *obj, char *err, size_t errlen)
{
	size_t n = strlen(text);
	if (n >= k->size) {
		snprintf(err, errlen, "longer than %zu characters", k->size - 1);
		return -ERANGE;
	}
	memcpy((char *)obj + k->offset, text, n + 1);
	return 0;
}

/* HOST:PORT with a port 1..65535, or a path: decided by the first byte. */
static int parse_addr(const struct conf_key *k, const char *text, void *obj, char *err, size_t errlen)
{
	if (text[0] != '/' && text[0] != '.') {
		const char *colon = strrchr(text, ':');
		uint64_t port;
		const char *end;
		if (!colon || colon == text) {
			snprintf(err, errlen, "expected %s", expected_of(k));
			return -EINVAL;
		}
		if (parse_digits(colon + 1, &port, &end) || *end || port == 0 || port > 65535) {
			snprintf(err, errlen, "expected a port from 1 to 65535 after '%.*s:'",
				 (int)(colon - text), text);
			return -ERANGE;
		}
	}
	return parse_string(k, text, obj, err, errlen);
}

/* ---- cpu lists ---- */

static int cpulist_add(struct conf_cpulist *l, uint64_t cpu, char *err, size_t errlen)
{
	if (conf_cpulist_has(l, (uint32_t)cpu)) {
		snprintf(err, errlen, "cpu %" PRIu64 " listed twice", cpu);
		return -EINVAL;
	}
	if (l->n == CONF_MAX_CPUS) {
		snprintf(err, errlen, "more than %d cpus", CONF_MAX_CPUS);
		return -ERANGE;
	}
	l->cpu[l->n++] = (uint16_t)cpu;
	return 0;
}

static int parse_cpulist(const struct conf_key *k, const char *text, void *obj, char *err, size_t errlen)
{
	struct conf_cpulist l = { 0 };
	const char *s = text;
	while (*s) {
		uint64_t lo, hi;
		const char *end;
		if (parse_digits(s, &lo, &end) || lo >= CONF_MAX_CPUS * 64)
			goto bad;
		hi = lo;
		if (*end == '-' && (parse_digits(end + 1, &hi, &end) || hi < lo || hi >= CONF_MAX_CPUS * 64))
			goto bad;
		for (uint64_t c = lo; c <= hi; c++)
			if (cpulist_add(&l, c, err, errlen))
				return -EINVAL;
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			goto bad;
		s = end;
	}
	memcpy((uint8_t *)obj + k->offset, &l, sizeof(l));
	return 0;
bad:
	snprintf(err, errlen, "expected %s", expected_of(k));
	return -EINVAL;
}

int conf_check_pow2(struct conf_check *chk, const char *key, uint32_t v)
{
	if (v && !(v & (v - 1)))
		return 0;
	chk->key = key;
	snprintf(chk->msg, sizeof(chk->msg), "expected a power of two, got %u", v);
	return -EINVAL;
}

bool conf_cpulist_has(const struct conf_cpulist *l, uint32_t cpu)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (l->cpu[i] == cpu)
			return true;
	return false;
}

static int format_cpulist(const struct conf_cpulist *l, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < l->n && off < len;) {
		uint32_t j = i;
		while (j + 1 < l->n && l->cpu[j + 1] == l->cpu[j] + 1)
			j++;
		const char *sep = i ? "," : "";
		if (j > i)
			off += (size_t)snprintf(buf + off, len - off, "%s%u-%u", sep, l->cpu[i], l->cpu[j]);
		else
			off += (size_t)snprintf(buf + off, len - off, "%s%u", sep, l->cpu[i]);
		i = j + 1;
	}
	return (int)off;
}

/* ---- addresses ---- */

bool conf_text_shaped(const char *text, const char *pattern)
{
	for (; *pattern; text++, pattern++)
		if (*pattern == 'h' ? !isxdigit((unsigned char)*text) : *text != *pattern)
			return false;
	return *text == 0;
}

int conf_mac_parse(const char *text, uint8_t mac[6])
{
	unsigned b[6];
	if (!conf_text_shaped(text, "hh:hh:hh:hh:hh:hh") ||
	    sscanf(text, "%2x:%2x:%2x:%2x:%2x:%2x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

static int parse_mac(const struct conf_key *k, const char *text, void *obj, char *err, size_t errlen)
{
	uint8_t mac[6];
	if (conf_mac_parse(text, mac)) {
		snprintf(err, errlen, "expected %s", expected_of(k));
		return -EINVAL;
	}
	memcpy((uint8_t *)obj + k->offset, mac, sizeof(mac));
	return 0;
}

static int parse_ip4(const struct conf_key *k, const char *text, void *obj, char *err, size_t errlen)
{
	uint32_t v = 0;
	const char *s = text;
	for (int i = 0; i < 4; i++) {
		uint64_t octet;
		const char *end;
		if (!isdigit((unsigned char)*s) || parse_digits(s, &octet, &end) || octet > 255 || end - s > 3)
			goto bad;
		v = v << 8 | (uint32_t)octet;
		if (i < 3 && *end != '.')
			goto bad;
		s = end + (i < 3);
	}
	if (*s)
		goto bad;
	store_uint(obj, k, v);
	return 0;
bad:
	snprintf(err, errlen, "expected %s", expected_of(k));
	return -EINVAL;
}

/* ---- the codec's entry points ---- */

const struct conf_key *conf_key_find(const struct conf_key *keys, const char *name)
{
	for (; keys && keys->name; keys++)
		if (strcmp(keys->name, name) == 0)
			return keys;
	return NULL;
}

int conf_value_parse(const struct conf_key *k, const char *text, void *obj, char *err, size_t errlen)
{
	bool flag = !(k->flags & CONF_F_NEGATE);
	switch (k->type) {
	case CONF_FLAG:
		memcpy((uint8_t *)obj + k->offset, &flag, sizeof(flag));
		return 0;
	case CONF_BOOL: return parse_bool(k, text, obj, err, errlen);
	case CONF_UINT:
	case CONF_SIZE:
	case CONF_RATE:
	case CONF_PPS:
	case CONF_DURATION: return parse_number_key(k, text, obj, err, errlen);
	case CONF_MODE: return parse_mode(k, text, obj, err, errlen);
	case CONF_STRING: return parse_string(k, text, obj, err, errlen);
	case CONF_ENUM: return parse_enum(k, text, obj, err, errlen);
	case CONF_CPULIST: return parse_cpulist(k, text, obj, err, errlen);
	case CONF_ADDR: return parse_addr(k, text, obj, err, errlen);
	case CONF_MAC: return parse_mac(k, text, obj, err, errlen);
	case CONF_IP4: return parse_ip4(k, text, obj, err, errlen);
	case CONF_CUSTOM: return k->parse(k, text, obj, err, errlen);
	}
	snprintf(err, errlen, "key %s has no type", k->name);
	return -EINVAL;
}

/* Strings print bare when the tokenizer would read them back as one word. */
static int format_string(const char *s, char *buf, size_t len)
{
	bool bare = *s != 0;
	for (const char *p = s; *p; p++)
		if (isspace((unsigned char)*p) || strchr("{}\"#\\", *p) || (p[0] == '/' && p[1] == '/'))
			bare = false;
	if (bare)
		return snprintf(buf, len, "%s", s);
	size_t off = 0;
	off += (size_t)snprintf(buf, len, "\"");
	for (; *s && off + 3 < len; s++) {
		if (*s == '"' || *s == '\\')
			buf[off++] = '\\';
		buf[off++] = *s;
	}
	return (int)off + snprintf(buf + off, len - off, "\"");
}

int conf_value_format(const struct conf_key *k, const void *obj, char *buf, size_t len)
{
	const uint8_t *p = (const uint8_t *)obj + k->offset;
	bool b;
	switch (k->type) {
	case CONF_FLAG:
		memcpy(&b, p, sizeof(b));
		return snprintf(buf, len, "%s", b == !(k->flags & CONF_F_NEGATE) ? k->name : "");
	case CONF_BOOL:
		memcpy(&b, p, sizeof(b));
		return snprintf(buf, len, "%s", b ? "on" : "off");
	case CONF_UINT:
	case CONF_SIZE:
	case CONF_RATE:
	case CONF_PPS:
	case CONF_DURATION: return format_number(k, load_uint(obj, k), buf, len);
	case CONF_MODE: return snprintf(buf, len, "%04" PRIo64, load_uint(obj, k));
	case CONF_STRING:
	case CONF_ADDR: return format_string((const char *)p, buf, len);
	case CONF_ENUM: return snprintf(buf, len, "%s", k->choices[load_uint(obj, k)]);
	case CONF_CPULIST: return format_cpulist((const struct conf_cpulist *)p, buf, len);
	case CONF_MAC:
		return snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", p[0], p[1], p[2], p[3], p[4], p[5]);
	case CONF_IP4: {
		uint64_t v = load_uint(obj, k);
		return snprintf(buf, len, "%u.%u.%u.%u", (unsigned)(v >> 24) & 255, (unsigned)(v >> 16) & 255,
				(unsigned)(v >> 8) & 255, (unsigned)v & 255);
	}
	case CONF_CUSTOM: return k->format(k, obj, buf, len);
	}
	return snprintf(buf, len, "?");
}

int conf_defaults(const struct conf_key *keys, void *obj, char *err, size_t errlen)
{
	for (const struct conf_key *k = keys; k && k->name; k++) {
		char why[CONF_MSG_SIZE];
		if (!k->def || k->type == CONF_FLAG)
			continue;
		if (conf_value_parse(k, k->def, obj, why, sizeof(why))) {
			snprintf(err, errlen, "default '%s' of key %s: %s", k->def, k->name, why);
			return -EINVAL;
		}
	}
	return 0;
}

bool conf_check_was_set(const struct conf_check *chk, const char *name)
{
	for (uint32_t i = 0; chk->keys && chk->keys[i].name && i < CONF_MAX_KEYS; i++)
		if (strcmp(chk->keys[i].name, name) == 0)
			return chk->set & (1ull << i);
	return false;
}
