/* Declarative startup.conf tables: how each subsystem describes its section.
 *
 * A subsystem declares its keys once, as a static const table of struct
 * conf_key (name, type, default written in config syntax, range, offset into
 * the section's own struct, doc string), and exports one struct
 * conf_section. The parser in app/ reads the file, fills the struct from the
 * table, reports file:line:column on any error, and hands the struct back;
 * the subsystem never sees text. The same tables parse values typed at the
 * CLI (conf_value_parse), so `create interface` and startup.conf agree.
 *
 * Sections come in two shapes:
 *   plain:   buffers { buffers-per-numa 16384  data-size 2K }
 *   blocks:  packet-generator { s0 { next-node error-drop  limit 100 } }
 * A block section may also take plain keys before, between or after blocks.
 * `interfaces { NAME { driver X ... } }` is a block section whose keys come
 * from the driver named by `driver`; drivers register their tables with
 * CONF_DRIVER_REGISTER.
 *
 * Example, a section of one struct:
 *
 *   struct foo_config { uint32_t depth; uint64_t window_ns; char path[128]; };
 *   static const struct conf_key foo_keys[] = {
 *       { .name = "depth", .type = CONF_UINT, .def = "64", .min = 1, .max = 4096,
 *         CONF_FIELD(struct foo_config, depth), .doc = "queue depth" },
 *       { .name = "window", .type = CONF_DURATION, .def = "10ms",
 *         CONF_FIELD(struct foo_config, window_ns), .doc = "batching window" },
 *       { .name = "path", .type = CONF_STRING, CONF_FIELD(struct foo_config, path) },
 *       { 0 },
 *   };
 *   const struct conf_section foo_conf_section = {
 *       .name = "foo", .size = sizeof(struct foo_config), .keys = foo_keys,
 *   };
 *
 * Thread-safety: tables are immutable; the functions below touch only the
 * objects passed in, except the driver registry, which is filled by
 * constructors before main() and only read afterwards.
 */
#ifndef SLUICE_BASE_CONF_H
#define SLUICE_BASE_CONF_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONF_NAME_SIZE 32         /* block (interface, stream) names, with the NUL */
#define CONF_MSG_SIZE 256         /* error and warning messages */
#define CONF_MAX_CPUS 256         /* entries of a cpu list */
#define CONF_MAX_KEYS 64          /* keys per table (the `set` mask is 64 bits) */
#define CONF_MAX_INTERFACES 64
#define CONF_DRIVER_CONF_SIZE 512 /* bytes a driver's per-interface struct may use */

enum conf_type {
	CONF_FLAG = 0,  /* bare key, no value; stores bool true (false with CONF_F_NEGATE) */
	CONF_BOOL,      /* on|off yes|no true|false enable|disable 1|0; bool */
	CONF_UINT,      /* decimal or 0x hex; field of 1, 2, 4 or 8 bytes; range min..max */
	CONF_SIZE,      /* bytes, suffix K M G (1024-based): 2048, 2K, 1G; 4- or 8-byte field */
	CONF_RATE,      /* bits per second, unit required: bit kbit mbit gbit (1000-based); uint64_t */
	CONF_PPS,       /* packets per second, unit optional: 100, 10kpps, 1mpps; uint64_t */
	CONF_DURATION,  /* nanoseconds, unit required: ns us ms s m h; 4- or 8-byte field */
	CONF_MODE,      /* octal permission bits 0..07777 (0600); uint32_t */
	CONF_STRING,    /* one word or a "quoted string"; char[size] */
	CONF_ENUM,      /* one of choices[]; stores the index as uint32_t (or an enum) */
	CONF_CPULIST,   /* 1-3,5: struct conf_cpulist, order kept, duplicates refused */
	CONF_ADDR,      /* unix socket path (starts with / or .) or HOST:PORT; char[size] */
	CONF_MAC,       /* 02:00:00:00:00:01; uint8_t[6] */
	CONF_IP4,       /* 10.0.0.1; uint32_t in host byte order */
	CONF_CUSTOM,    /* parsed and printed by the key's own parse/format functions */
};

/* conf_key.flags */
#define CONF_F_NEGATE (1u << 0) /* CONF_FLAG: the key stores false (nodaemon vs daemon) */
/* CONF_STRING: a file the owner creates or writes. Commands taking the key
 * at run time (`create interface`) hold it to the CLI's cli-file-dir. */
#define CONF_F_FILE_OUT (1u << 1)

struct conf_key;

/* CONF_CUSTOM: parse text into obj at k->offset. Returns 0, or a negative
 * errno with "expected ..." wording in err. */
typedef int(conf_parse_fn_t)(const struct conf_key *k, const char *text, void *obj, char *err,
			     size_t errlen);
/* CONF_CUSTOM: print the value in config syntax; snprintf-style return. */
typedef int(conf_format_fn_t)(const struct conf_key *k, const void *obj, char *buf, size_t len);

struct conf_key {
	const char *name;           /* NULL ends a table */
	enum conf_type type;
	const char *def;            /* default in config syntax; NULL: leave the field as the
	                             * struct came (zeroed, or as the block's init set it) */
	uint64_t min, max;          /* inclusive, in stored units (bytes, ns, bps); max 0: the field's limit */
	const char *const *choices; /* CONF_ENUM: names, NULL-terminated */
	size_t offset, size;        /* of the field in the section's struct: use CONF_FIELD */
	uint32_t flags;             /* CONF_F_* */
	conf_parse_fn_t *parse;     /* CONF_CUSTOM only */
	conf_format_fn_t *format;   /* CONF_CUSTOM only */
	const char *doc;            /* one line for `--check` comments and help */
};

#define CONF_FIELD(type, member) .offset = offsetof(type, member), .size = sizeof(((type *)0)->member)

struct conf_cpulist {
	uint16_t n;
	uint16_t cpu[CONF_MAX_CPUS];
};

/* What a check function sees and says. `set` has bit i when keys[i] was
 * written in the file (not just defaulted). To refuse, return -EINVAL with a
 * message in msg and, in key, the name of the key whose value the error
 * should point at (NULL: the section or block itself). To accept with a
 * warning, fill warning (and warn_key) and return 0. */
struct conf_check {
	const struct conf_key *keys;
	uint64_t set;
	const char *key;
	char msg[CONF_MSG_SIZE];
	const char *warn_key;
	char warning[CONF_MSG_SIZE];
};

/* Cross-key validation after a section, block or driver table is parsed. */
typedef int(conf_check_fn_t)(void *obj, struct conf_check *chk);

/* Named blocks inside a section: `NAME { keys }` filling an array of
 * elem_size structs that lives in the section's struct. */
struct conf_block {
	const char *what;            /* "stream", "interface": used in messages */
	/* NULL: a block is written `NAME { keys }`. Else it is written
	 * `KEYWORD NAME { keys }` (plugins { plugin NAME.so { enable } }), so
	 * that NAME may be any word, even one of the section's keys. */
	const char *keyword;
	const struct conf_key *keys;
	size_t elem_size;
	size_t array_offset;         /* the array, in the section's struct */
	size_t count_offset;         /* its uint32_t count, in the section's struct */
	uint32_t max;                /* capacity of the array */
	size_t name_offset;          /* char[name_size] in the element receiving NAME */
	size_t name_size;
	/* Optional: fill an element with defaults that are not in the table
	 * (pg_stream_config_default, say) before the table's own defaults. */
	void (*init)(void *elem);
	conf_check_fn_t *check;
};

struct conf_section {
	const char *name;
	const char *doc;
	size_t size;                   /* the section's struct */
	const struct conf_key *keys;   /* plain `key value` lines; may be NULL */
	const struct conf_block *block; /* NULL: no named blocks */
	conf_check_fn_t *check;        /* after the whole section is parsed */
};

/* ---- drivers: per-interface key tables, selected by `driver NAME` ---- */

struct conf_driver {
	const char *name;            /* the value of `driver` */
	const char *doc;
	const struct conf_key *keys; /* offsets into the driver's own struct */
	size_t size;                 /* that struct, at most CONF_DRIVER_CONF_SIZE */
	conf_check_fn_t *check;
};

/* One `interfaces { NAME { driver X ... } }` block, parsed. */
#define CONF_IP6_ADDRESS_SIZE 256 /* several addresses, space-separated */
#define CONF_SHAPER_SIZE 64       /* `shaper "rate R [burst B]"` */
#define CONF_FEATURES_SIZE 128    /* `feature-enable "NODE ..."`, `feature-disable` */

struct conf_interface {
	char name[CONF_NAME_SIZE];
	const struct conf_driver *driver;
	uint32_t line; /* where the block starts, for errors at creation time */
	char l2_xconnect[CONF_NAME_SIZE]; /* `l2-xconnect PEER`: send what it receives out of PEER; "": L3 */
	uint32_t rx_burst; /* `rx-burst N`: packets per poll of each rx queue, 1..256 (a frame) */
	uint32_t rx_mode;  /* `rx-mode M`: every rx queue's, enum dev_rx_mode (0 default: cpu { rx-mode }) */
	char ip6_address[CONF_IP6_ADDRESS_SIZE]; /* `ip6-address "X:X::X:X/L ..."`: "" none */
	char ip6_ra[CONF_IP6_ADDRESS_SIZE]; /* `ip6-ra "on | interval S ..."`: Router Advertisements; "" off */
	char shaper[CONF_SHAPER_SIZE]; /* `shaper "rate R [burst B]"`: egress token bucket (app/sched_conf.h); "" none */
	char feature_enable[CONF_FEATURES_SIZE];  /* `feature-enable "NODE ..."`: features turned on here */
	char feature_disable[CONF_FEATURES_SIZE]; /* `feature-disable "NODE ..."`: and off */
	alignas(16) uint8_t driver_conf[CONF_DRIVER_CONF_SIZE]; /* the driver's struct */
};

struct conf_interfaces {
	uint32_t n;
	struct conf_interface ifs[CONF_MAX_INTERFACES];
};

/* Add a driver's table (from a constructor; see CONF_DRIVER_REGISTER). */
void conf_driver_register(const struct conf_driver *d);
#define CONF_DRIVER_REGISTER(d)                                                                \
	static void __attribute__((constructor)) conf_driver_register_##d(void)                \
	{                                                                                      \
		conf_driver_register(&(d));                                                    \
	}

/* The driver called name, or NULL. */
const struct conf_driver *conf_driver_find(const char *name);
uint32_t conf_driver_count(void);
const struct conf_driver *conf_driver_get(uint32_t i);

/* Write the registered driver names, comma-separated, into buf ("none" when
 * there are none), for "unknown driver" messages. */
void conf_driver_names(char *buf, size_t len);

/* ---- sections added by plugins ---- */

#define CONF_MAX_EXTRA_SECTIONS 16

/* A section a plugin adds to startup.conf: its table, and the struct the
 * parser fills (sec->size bytes, the plugin's own, set to the defaults
 * before the file is read). The built-in sections are app/'s fixed list;
 * these are parsed, checked and printed (--check, show config) the same
 * way, after them. */
struct conf_section_reg {
	const struct conf_section *sec;
	void *obj;
};

/* Add a section (from a plugin's constructor; see CONF_SECTION_REGISTER).
 * A 17th is dropped and counted (conf_section_dropped) so that the loader
 * can refuse the plugin that brought it. */
void conf_section_register(const struct conf_section_reg *r);
#define CONF_SECTION_REGISTER(r)                                                               \
	static void __attribute__((constructor)) conf_section_register_##r(void)               \
	{                                                                                      \
		conf_section_register(&(r));                                                   \
	}

uint32_t conf_section_count(void);
const struct conf_section_reg *conf_section_get(uint32_t i);
/* Registrations dropped because the table was full. */
uint32_t conf_section_dropped(void);

/* ---- values ---- */

/* The key called name in a NULL-terminated table, or NULL. */
const struct conf_key *conf_key_find(const struct conf_key *keys, const char *name);

/* Parse one value for k into obj (text is NULL for CONF_FLAG). Returns 0,
 * -EINVAL (malformed: err says what was expected) or -ERANGE (err gives the
 * range). Never touches obj on error. */
int conf_value_parse(const struct conf_key *k, const char *text, void *obj, char *err, size_t errlen);

/* Print k's value from obj in config syntax, so that parsing it back gives
 * the same value. Returns the snprintf-style length. For CONF_FLAG keys the
 * text is the key name when the stored value is what the key sets, else "". */
int conf_value_format(const struct conf_key *k, const void *obj, char *buf, size_t len);

/* Fill obj from every key's default. Returns 0, or -EINVAL naming the key
 * whose default does not parse (a table bug). */
int conf_defaults(const struct conf_key *keys, void *obj, char *err, size_t errlen);

/* Whether the key called name was written in the file (check functions). */
bool conf_check_was_set(const struct conf_check *chk, const char *name);

/* For check functions: 0 when v is a power of two, else -EINVAL with key
 * and "expected a power of two, got V" in chk (ring sizes). */
int conf_check_pow2(struct conf_check *chk, const char *key, uint32_t v);

/* Whether cpu appears in the list. */
bool conf_cpulist_has(const struct conf_cpulist *l, uint32_t cpu);

/* Whether text has exactly the shape of pattern, where 'h' stands for one
 * hex digit and any other character for itself ("hh:hh.h"). Check it
 * before sscanf's %x, which also takes a sign or leading spaces. */
bool conf_text_shaped(const char *text, const char *pattern);

/* "aa:bb:cc:dd:ee:ff" (two hex digits each, either case) -> mac; -EINVAL
 * for anything else. */
int conf_mac_parse(const char *text, uint8_t mac[6]);

#endif
