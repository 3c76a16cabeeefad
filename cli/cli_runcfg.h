/* The running configuration (`show running-config`, `write running-config
 * FILE`): what was configured since start, as a CLI script that replays to
 * the same state on top of the same startup.conf (docs/running-config.md).
 *
 * State-based: every subsystem registers a writer, beside its *_cli.c
 * commands, that describes its current state as items, each a command
 * line under a key. When the CLI server starts (after startup.conf, before
 * `unix { exec }`) the writers' items are kept as the baseline; the running
 * configuration is the difference between the items now and the baseline:
 *   - an item whose key is new, or whose line changed, is printed;
 *   - an object (an item with an undo command) whose line changed is
 *     undone first, then printed;
 *   - an object of the baseline whose key is gone is undone, before
 *     everything else, in the reverse of the writers' order;
 *   - an attribute at its default on an object the baseline did not have
 *     is not printed (a new interface is already down, MTU 1500).
 * So a thing created then deleted leaves no line, and the output is the
 * same for the same state whatever the order of the commands that made it.
 *
 * Thread-safety: writers run under the command lock (inside a command, or
 * from cli_server_start); a writer that reads state another control thread
 * changes (routes from netlink) takes the graph barrier itself.
 */
#ifndef SLUICE_CLI_CLI_RUNCFG_H
#define SLUICE_CLI_CLI_RUNCFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cli_session;
struct cli_runcfg; /* a collection of items */

/* Writers run in increasing order, so that the script replays: interfaces
 * before what is set on them, addresses before routes through them. */
enum cli_runcfg_order {
	CLI_RUNCFG_INTERFACES = 100,    /* create interface */
	CLI_RUNCFG_INTERFACE_SET = 200, /* mtu, mac, rx-burst, rx-mode, l2/l3, state */
	CLI_RUNCFG_ADDRESSES = 300,     /* set interface ip address, enable ip6 */
	CLI_RUNCFG_NEIGHBORS = 400,     /* set ip neighbor ... static */
	CLI_RUNCFG_ROUTES = 500,        /* ip route add, both families */
	CLI_RUNCFG_LCP = 600,           /* lcp create */
	CLI_RUNCFG_SCHED = 700,         /* classes, shapers, impairments, hqos */
	CLI_RUNCFG_GENERATOR = 800,     /* packet-generator new, enable */
};

struct cli_runcfg_writer {
	const char *name; /* "interfaces", "ip4 routes": in messages */
	uint32_t order;   /* enum cli_runcfg_order */
	/* Add the subsystem's items for its current state, in replay order.
	 * s: for the graph and its barrier (NULL before the server runs is
	 * never the case: cli_server_start passes a session). */
	void (*fn)(struct cli_runcfg *rc, struct cli_session *s);
};

/* Add a writer (constructors). */
void cli_runcfg_writer_add(const struct cli_runcfg_writer *w);

#define CLI_RUNCFG_WRITER(id, name_, order_, fn_)                                              \
	static const struct cli_runcfg_writer id = { .name = name_, .order = order_, .fn = fn_ }; \
	static void __attribute__((constructor)) cli_runcfg_register_##id(void)                \
	{                                                                                      \
		cli_runcfg_writer_add(&(id));                                                  \
	}

/* An object: created by line, removed by undo (NULL: no command removes
 * it). key names it uniquely across writers ("if eth1", "ip4 route
 * 10.0.0.0/8"); line NULL: it exists but cannot be written as a command
 * (made by startup.conf in a way the CLI cannot say), so only its removal
 * is ever printed. */
void cli_runcfg_object(struct cli_runcfg *rc, const char *key, const char *undo, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* An attribute (state, MTU...): printed when it differs from the
 * baseline's; is_default: its value is what a new object has, so it is not
 * printed for an object the baseline did not have. */
void cli_runcfg_attr(struct cli_runcfg *rc, const char *key, bool is_default, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The writer could not read all of its state (out of memory): the whole
 * collection is refused rather than printed short. */
void cli_runcfg_fail(struct cli_runcfg *rc);

/* ---- collections and the difference (pure: unit-tested) ---- */

struct cli_runcfg *cli_runcfg_create(void);
void cli_runcfg_free(struct cli_runcfg *rc);
/* Items held (for tests). */
uint32_t cli_runcfg_count(const struct cli_runcfg *rc);

/* Call fn for each line of the script that turns base into now (rules
 * above; base NULL: an empty baseline). -ENOMEM or 0. */
int cli_runcfg_diff(const struct cli_runcfg *base, const struct cli_runcfg *now,
		    void (*fn)(const char *line, void *ctx), void *ctx);

/* Call fn for every item's line of rc (objects that have one, and every
 * attribute not at its default): the whole state, baseline or not. */
void cli_runcfg_lines(const struct cli_runcfg *rc, void (*fn)(const char *line, void *ctx), void *ctx);

/* ---- the daemon's ---- */

/* Run every writer into a new collection (caller frees); NULL when out of
 * memory. Under the command lock. */
struct cli_runcfg *cli_runcfg_collect(struct cli_session *s);

/* Keep the current state as the baseline (cli_server_start calls it; again
 * replaces it). Under the command lock. */
void cli_runcfg_set_baseline(struct cli_session *s);

#endif
