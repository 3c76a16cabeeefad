/* Packet scheduling commands: shapers, delays and classes, and `show
 * sched`. Spelled so (scripts depend on it):
 *
 *   sched shaper interface NAME rate 10mbit [burst 16k]
 *   sched shaper interface NAME off
 *   sched delay interface NAME 20ms [jitter 2ms]   (= sched impair interface
 *   sched delay interface NAME off                   NAME delay 20ms jitter 2ms)
 *   sched class NAME priority P [weight W] [type atomic|ordered|parallel] match dscp D|protocol icmp|tcp|udp|interface NAME
 *   no sched class NAME
 *   show sched [json]
 *
 * Units: rates bit kbit mbit gbit (1000-based), sizes in bytes with K M G
 * (1024-based, any case), times ns us ms s. Every word is checked before
 * anything changes: a bad command prints usage and changes nothing.
 *
 * sluice> show sched
 * Interface b (if 1), owner thread 0
 *   shaper rate 10mbit burst 16k, tokens 11942 bytes
 *   impair off
 *   max-held 512: held 11, enqueued 1212, released 1201, dropped 0
 *     class                  held     released    dropped
 *     (none)                   11         1161          0
 *     ef                        0           40          0
 * Classes (match order)
 *   ef priority 0 weight 1 type atomic match dscp 46: 80 packets
 * Class queues for the workers (1024 packets per class)
 *     class                  held     queued       sent queue full  dist drop   shutdown
 *     (none)                 1024     120233     119209        211          0          0
 *     ef                        0         80         80          0          0          0
 *
 * While a class is defined, every input sends what it receives here: the
 * drivers' input nodes, and pg streams into ethernet-input (a stream may
 * also name sched-ingress as its next-node).
 *
 * Built as its own library (sluice_sched_io_cli) that the daemon links
 * whole, so that nodes/ does not depend on cli/.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_runcfg.h"
#include "base/conf.h"
#include "graph/graph_cli.h"
#include "nodes/sched/sched_io.h"

/* ---- values with units, through the startup.conf parsers ---- */

static int parse_unit(struct cli_session *s, enum conf_type type, const char *what, const char *text, uint64_t *v)
{
	struct conf_key k = { .name = what, .type = type, .offset = 0, .size = sizeof(uint64_t) };
	char err[CONF_MSG_SIZE];
	if (conf_value_parse(&k, text, v, err, sizeof(err)) == 0)
		return 0;
	cli_printf(s, "error: %s %s: %s", what, text, err);
	return -EINVAL;
}

static void format_unit(enum conf_type type, uint64_t v, char *buf, size_t len)
{
	struct conf_key k = { .type = type, .offset = 0, .size = sizeof(uint64_t) };
	conf_value_format(&k, &v, buf, len);
}

/* A size as the commands take it: 16k, 2m, 1g when it is a whole number
 * of those, else "1500 bytes" (startup.conf's formatter prints sizes under
 * 1M in bytes, which for a burst reads as an unexplained 16384). */
static void format_bytes(uint64_t v, char *buf, size_t len)
{
	static const char suffix[] = { 'g', 'm', 'k' };
	for (uint32_t i = 0; i < 3; i++) {
		uint64_t unit = 1ull << (10 * (3 - i));
		if (v >= unit && v % unit == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(v / unit), suffix[i]);
			return;
		}
	}
	snprintf(buf, len, "%llu bytes", (unsigned long long)v);
}

static struct device *find_if(struct cli_session *s, const char *name)
{
	struct device *d = dev_by_name(name);
	if (!d)
		cli_printf(s, "error: no interface %s", name);
	return d;
}

/* ---- sched shaper / sched delay ---- */

static int sched_shaper(struct cli_session *s, int argc, char **argv)
{
	struct graph *g;
	uint64_t rate = 0, burst = 16384;
	if (!(g = need_graph(s)))
		return -ENODEV;
	if (argc < 2)
		return cli_fail(s, -EINVAL, "expected NAME rate R [burst B] or NAME off");
	struct device *d = find_if(s, argv[0]);
	if (!d)
		return -EINVAL;
	if (argc == 2 && strcmp(argv[1], "off") == 0) {
		rate = 0;
	} else {
		for (int i = 1; i < argc; i += 2) {
			if (i + 1 >= argc)
				return cli_fail(s, -EINVAL, "%s: expected a value", argv[i]);
			if (strcmp(argv[i], "rate") == 0 && parse_unit(s, CONF_RATE, "rate", argv[i + 1], &rate) == 0)
				continue;
			if (strcmp(argv[i], "burst") == 0 && parse_unit(s, CONF_SIZE, "burst", argv[i + 1], &burst) == 0)
				continue;
			if (strcmp(argv[i], "rate") != 0 && strcmp(argv[i], "burst") != 0)
				cli_printf(s, "error: unknown word %s", argv[i]);
			return -EINVAL;
		}
		if (!rate)
			return cli_fail(s, -EINVAL, "expected rate R (for example 10mbit), or off");
	}
	char err[256];
	int rc = sched_io_set_shaper(g, d->index, rate, burst, err, sizeof(err));
	return rc ? cli_fail(s, rc, "%s", err) : 0;
}

static int sched_delay(struct cli_session *s, int argc, char **argv)
{
	struct graph *g;
	uint64_t delay = 0, jitter = 0;
	if (!(g = need_graph(s)))
		return -ENODEV;
	if (argc != 2 && argc != 4)
		return cli_fail(s, -EINVAL, "expected NAME DELAY [jitter J] or NAME off");
	struct device *d = find_if(s, argv[0]);
	if (!d)
		return -EINVAL;
	if (strcmp(argv[1], "off") != 0 || argc != 2) {
		if (parse_unit(s, CONF_DURATION, "delay", argv[1], &delay))
			return -EINVAL;
		if (!delay)
			return cli_fail(s, -EINVAL, "delay 0: use off");
		if (argc == 4 && (strcmp(argv[2], "jitter") != 0 ||
				  parse_unit(s, CONF_DURATION, "jitter", argv[3], &jitter) != 0))
			return cli_fail(s, -EINVAL, "expected jitter J after the delay");
	}
	char err[256];
	int rc = sched_io_set_delay(g, d->index, delay, jitter, err, sizeof(err));
	return rc ? cli_fail(s, rc, "%s", err) : 0;
}

/* ---- sched class ---- */

static bool parse_u32(const char *w, uint32_t max, uint32_t *v)
{
	char *end;
	unsigned long x = strtoul(w, &end, 10);
	if (!*w || *end || x > max)
		return false;
	*v = (uint32_t)x;
	return true;
}

static int parse_match(struct cli_session *s, const char *kind, const char *value, struct sched_class *c)
{
	static const struct {
		const char *name;
		uint32_t proto;
	} protos[] = { { "icmp", 1 }, { "tcp", 6 }, { "udp", 17 } };
	if (strcmp(kind, "dscp") == 0) {
		c->match = SCHED_MATCH_DSCP;
		if (parse_u32(value, 63, &c->value))
			return 0;
		return cli_fail(s, -EINVAL, "dscp %s: expected 0..63", value);
	}
	if (strcmp(kind, "protocol") == 0) {
		c->match = SCHED_MATCH_PROTOCOL;
		for (size_t i = 0; i < ARRAY_LEN(protos); i++)
			if (strcmp(value, protos[i].name) == 0) {
				c->value = protos[i].proto;
				return 0;
			}
		return cli_fail(s, -EINVAL, "protocol %s: expected icmp, tcp or udp", value);
	}
	if (strcmp(kind, "interface") == 0) {
		struct device *d = find_if(s, value);
		c->match = SCHED_MATCH_INTERFACE;
		c->value = d ? d->index : 0;
		return d ? 0 : -EINVAL;
	}
	return cli_fail(s, -EINVAL, "match %s: expected dscp, protocol or interface", kind);
}

static int sched_class_cmd(struct cli_session *s, int argc, char **argv)
{
	struct graph *g;
	if (!(g = need_graph(s)))
		return -ENODEV;
	struct sched_class c = { .weight = 1 };
	bool have_prio = false, have_match = false;
	if (argc < 1 || strlen(argv[0]) >= sizeof(c.name))
		return cli_fail(s, -EINVAL, "expected a class name of 1..%d characters", SCHED_CLASS_NAME_SIZE - 1);
	memcpy(c.name, argv[0], strlen(argv[0]));
	for (int i = 1; i < argc; i += 2) {
		uint32_t v;
		if (i + 1 >= argc)
			return cli_fail(s, -EINVAL, "%s: expected a value", argv[i]);
		if (strcmp(argv[i], "priority") == 0) {
			if (!parse_u32(argv[i + 1], SCHED_N_PRIO - 1, &v))
				return cli_fail(s, -EINVAL, "priority %s: expected 0..%d", argv[i + 1], SCHED_N_PRIO - 1);
			c.priority = (uint8_t)v;
			have_prio = true;
		} else if (strcmp(argv[i], "weight") == 0) {
			if (!parse_u32(argv[i + 1], SCHED_WEIGHT_MAX, &v) || !v)
				return cli_fail(s, -EINVAL, "weight %s: expected 1..%d", argv[i + 1], SCHED_WEIGHT_MAX);
			c.weight = (uint16_t)v;
		} else if (strcmp(argv[i], "type") == 0) {
			int type = sched_type_parse(argv[i + 1]);
			if (type < 0)
				return cli_fail(s, -EINVAL, "type %s: expected atomic, ordered or parallel", argv[i + 1]);
			c.type = (uint8_t)type;
		} else if (strcmp(argv[i], "match") == 0) {
			if (i + 2 >= argc)
				return cli_fail(s, -EINVAL, "match: expected dscp D, protocol P or interface NAME");
			if (parse_match(s, argv[i + 1], argv[i + 2], &c))
				return -EINVAL;
			have_match = true;
			i++;
		} else {
			return cli_fail(s, -EINVAL, "unknown word %s", argv[i]);
		}
	}
	if (!have_prio || !have_match)
		return cli_fail(s, -EINVAL, "expected priority P and match ...");
	char err[256];
	int rc = sched_io_class_set(g, &c, err, sizeof(err));
	return rc < 0 ? cli_fail(s, rc, "%s", err) : 0;
}

static int no_sched_class(struct cli_session *s, int argc, char **argv)
{
	struct graph *g;
	if (!(g = need_graph(s)))
		return -ENODEV;
	if (argc != 1)
		return cli_fail(s, -EINVAL, "expected a class name");
	int rc = sched_io_class_remove(g, argv[0]);
	return rc ? cli_fail(s, rc, "no class %s", argv[0]) : 0;
}

/* ---- show sched ---- */

static const char *class_name(uint32_t id)
{
	return id && sched_class_table.cls[id].name[0] ? sched_class_table.cls[id].name : id ? "(removed)" : "(none)";
}

static void match_text(const struct sched_class *c, char *buf, size_t len)
{
	static const char *const protos[256] = { [1] = "icmp", [6] = "tcp", [17] = "udp" };
	const struct device *d;
	switch (c->match) {
	case SCHED_MATCH_DSCP:
		snprintf(buf, len, "dscp %u", c->value);
		break;
	case SCHED_MATCH_PROTOCOL:
		snprintf(buf, len, "protocol %s", protos[c->value & 0xff] ? protos[c->value & 0xff] : "?");
		break;
	default:
		d = dev_by_index(c->value);
		snprintf(buf, len, "interface %s", d ? d->name : "?");
		break;
	}
}

/* With a subscriber hierarchy the shaper is its port level (sched_hqos.h):
 * show its rate, burst and tokens as the interface's shaper. */
static void hqos_port_level(const struct sched_io_if *sif, struct sched_egress_stats *st)
{
	struct hqos_port_stats ps;
	if (!sif->hq)
		return;
	hqos_port_stats(sif->hq, &ps);
	st->cfg.rate_bps = ps.rate_bps;
	st->cfg.burst_bytes = ps.burst_bytes;
	st->tokens_bytes = ps.tokens_bytes;
}

/* The impairment (the delay line) in one line, and how late the wheel
 * released its packets (log2 buckets of us; `show sched impair` has the
 * rest). */
static void show_impair_line(struct cli_session *s, const struct sched_io_if *sif)
{
	struct sched_impair_stats st;
	char cfg[512], late[256];
	sched_impair_stats(sched_egress_impair(sif->e), &st);
	sched_impair_format(&st.cfg, cfg, sizeof(cfg));
	cli_printf(s, "  impair %s", cfg);
	size_t n = 0;
	late[0] = 0;
	for (uint32_t k = 0; k < SCHED_IMPAIR_LATE_BUCKETS && n < sizeof(late); k++)
		if (st.late[k])
			n += (size_t)snprintf(late + n, sizeof(late) - n, " <2^%uus %llu", k, (unsigned long long)st.late[k]);
	if (n)
		cli_printf(s, "  release lateness:%s", late);
}

static void show_if_text(struct cli_session *s, const struct device *d, const struct sched_io_if *sif)
{
	struct sched_egress_stats st;
	char a[32], b[32];
	sched_egress_stats(sif->e, &st);
	hqos_port_level(sif, &st);
	cli_printf(s, "Interface %s (if %u), owner thread %u", d->name, d->index, sif->owner);
	if (st.cfg.rate_bps) {
		format_unit(CONF_RATE, st.cfg.rate_bps, a, sizeof(a));
		format_bytes(st.cfg.burst_bytes, b, sizeof(b));
		cli_printf(s, "  shaper rate %s burst %s, tokens %lld bytes", a, b, (long long)st.tokens_bytes);
	} else {
		cli_printf(s, "  shaper off");
	}
	if (sif->hq)
		cli_printf(s, "  subscriber hierarchy (the shaper is its port level): show sched subscriber");
	show_impair_line(s, sif);
	cli_printf(s, "  max-held %u: held %llu, enqueued %llu, released %llu, dropped %llu", st.cfg.max_held,
		   (unsigned long long)st.held, (unsigned long long)st.enqueued, (unsigned long long)st.released,
		   (unsigned long long)st.dropped);
	cli_printf(s, "    %-16s %10s %12s %10s", "class", "held", "released", "dropped");
	for (uint32_t c = 0; c < SCHED_MAX_CLASSES; c++)
		if (st.held_class[c] || st.released_class[c] || st.dropped_class[c] || (c && sched_class_table.cls[c].name[0]))
			cli_printf(s, "    %-16s %10llu %12llu %10llu", class_name(c), (unsigned long long)st.held_class[c],
				   (unsigned long long)st.released_class[c], (unsigned long long)st.dropped_class[c]);
}

static cJSON *if_json(const struct device *d, const struct sched_io_if *sif)
{
	struct sched_egress_stats st;
	sched_egress_stats(sif->e, &st);
	hqos_port_level(sif, &st);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "hqos", sif->hq != NULL);
	cJSON_AddStringToObject(o, "interface", d->name);
	cJSON_AddNumberToObject(o, "if_index", d->index);
	cJSON_AddNumberToObject(o, "owner_thread", sif->owner);
	cJSON_AddNumberToObject(o, "rate_bps", (double)st.cfg.rate_bps);
	cJSON_AddNumberToObject(o, "burst_bytes", (double)st.cfg.burst_bytes);
	cJSON_AddNumberToObject(o, "tokens_bytes", (double)st.tokens_bytes);
	cJSON_AddNumberToObject(o, "delay_ns", (double)st.cfg.delay_ns);
	cJSON_AddNumberToObject(o, "jitter_ns", (double)st.cfg.jitter_ns);
	struct sched_impair_stats is;
	char cfg[512];
	sched_impair_stats(sched_egress_impair(sif->e), &is);
	sched_impair_format(&is.cfg, cfg, sizeof(cfg));
	cJSON_AddStringToObject(o, "impair", cfg);
	cJSON *late = cJSON_AddArrayToObject(o, "release_lateness_log2_us");
	for (uint32_t k = 0; k < SCHED_IMPAIR_LATE_BUCKETS; k++)
		cJSON_AddItemToArray(late, cJSON_CreateNumber((double)is.late[k]));
	cJSON_AddNumberToObject(o, "max_held", st.cfg.max_held);
	cJSON_AddNumberToObject(o, "held", (double)st.held);
	cJSON_AddNumberToObject(o, "enqueued", (double)st.enqueued);
	cJSON_AddNumberToObject(o, "released", (double)st.released);
	cJSON_AddNumberToObject(o, "dropped", (double)st.dropped);
	cJSON *cls = cJSON_AddArrayToObject(o, "classes");
	for (uint32_t c = 0; c < SCHED_MAX_CLASSES; c++) {
		if (!st.held_class[c] && !st.released_class[c] && !st.dropped_class[c])
			continue;
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "class", class_name(c));
		cJSON_AddNumberToObject(x, "held", (double)st.held_class[c]);
		cJSON_AddNumberToObject(x, "released", (double)st.released_class[c]);
		cJSON_AddNumberToObject(x, "dropped", (double)st.dropped_class[c]);
		cJSON_AddItemToArray(cls, x);
	}
	return o;
}

/* The class queues in front of the distributor: levels read with the
 * datapath parked (they are thread 0's), counters as they run. */
static void show_front(struct cli_session *s, struct graph *g, cJSON *root)
{
	const struct sched_front *f = &sched_front;
	uint32_t held[SCHED_MAX_CLASSES];
	graph_barrier_sync(g);
	bool on = f->evq != NULL;
	for (uint32_t c = 0; c < SCHED_MAX_CLASSES; c++)
		held[c] = sched_front_held_class(c);
	graph_barrier_release(g);
	if (!on)
		return;
	cJSON *arr = root ? cJSON_AddArrayToObject(root, "class_queues") : NULL;
	if (root)
		cJSON_AddNumberToObject(root, "class_queue_depth", f->depth);
	if (!root) {
		cli_printf(s, "Class queues for the workers (%u packets per class)", f->depth);
		cli_printf(s, "    %-16s %10s %10s %10s %10s %10s %10s", "class", "held", "queued", "sent", "queue full",
			   "dist drop", "shutdown");
	}
	for (uint32_t c = 0; c < SCHED_MAX_CLASSES; c++) {
		uint64_t v[] = { stat_read(&f->queued[c]), stat_read(&f->sent[c]), stat_read(&f->queue_full[c]),
				 stat_read(&f->dist_dropped[c]), stat_read(&f->shutdown[c]) };
		if (!held[c] && !v[0] && !v[2] && !(c && sched_class_table.cls[c].name[0]))
			continue;
		if (!root) {
			cli_printf(s, "    %-16s %10u %10llu %10llu %10llu %10llu %10llu", class_name(c), held[c],
				   (unsigned long long)v[0], (unsigned long long)v[1], (unsigned long long)v[2],
				   (unsigned long long)v[3], (unsigned long long)v[4]);
			continue;
		}
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "class", class_name(c));
		cJSON_AddNumberToObject(x, "held", held[c]);
		cJSON_AddNumberToObject(x, "queued", (double)v[0]);
		cJSON_AddNumberToObject(x, "sent", (double)v[1]);
		cJSON_AddNumberToObject(x, "queue_full", (double)v[2]);
		cJSON_AddNumberToObject(x, "dist_dropped", (double)v[3]);
		cJSON_AddNumberToObject(x, "shutdown", (double)v[4]);
		cJSON_AddItemToArray(arr, x);
	}
}

static int show_sched(struct cli_session *s, int argc, char **argv)
{
	struct graph *g;
	bool json = false;
	if (!(g = need_graph(s)))
		return -ENODEV;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	uint64_t counts[SCHED_MAX_CLASSES];
	sched_io_class_packets(g, counts);
	const struct sched_class_table *t = &sched_class_table;
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	cJSON *ifs = json ? cJSON_AddArrayToObject(root, "interfaces") : NULL;
	uint32_t shown = 0;
	for (uint32_t i = 0; i < DEV_MAX; i++) {
		const struct device *d = dev_by_index(i);
		if (!d || !sched_io_ifs[i].e)
			continue;
		if (json)
			cJSON_AddItemToArray(ifs, if_json(d, &sched_io_ifs[i]));
		else
			show_if_text(s, d, &sched_io_ifs[i]);
		shown++;
	}
	if (!json && !shown)
		cli_printf(s, "no interface is shaped or delayed");
	cJSON *cls = json ? cJSON_AddArrayToObject(root, "classes") : NULL;
	if (!json)
		cli_printf(s, t->n ? "Classes (match order)" : "no classes");
	for (uint32_t k = 0; k < t->n; k++) {
		const struct sched_class *c = &t->cls[t->order[k]];
		char m[64];
		match_text(c, m, sizeof(m));
		if (!json) {
			cli_printf(s, "  %s priority %u weight %u type %s match %s: %llu packets", c->name, c->priority,
				   c->weight, sched_type_names[c->type], m, (unsigned long long)counts[t->order[k]]);
			continue;
		}
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", c->name);
		cJSON_AddNumberToObject(x, "id", t->order[k]);
		cJSON_AddNumberToObject(x, "priority", c->priority);
		cJSON_AddNumberToObject(x, "weight", c->weight);
		cJSON_AddStringToObject(x, "type", sched_type_names[c->type]);
		cJSON_AddStringToObject(x, "match", m);
		cJSON_AddNumberToObject(x, "packets", (double)counts[t->order[k]]);
		cJSON_AddItemToArray(cls, x);
	}
	show_front(s, g, root);
	if (json)
		cli_json_print(s, root);
	return 0;
}

CLI_COMMAND(sched_shaper_cmd, "sched shaper interface",
	    "sched shaper interface NAME rate RATE [burst SIZE] | sched shaper interface NAME off",
	    "Token-bucket shaper on an interface's egress (Ethernet frame bytes)",
	    sched_shaper)

CLI_COMMAND(sched_delay_cmd, "sched delay interface",
	    "sched delay interface NAME DELAY [jitter J] | sched delay interface NAME off",
	    "Delay (plus uniform jitter) on an interface's egress: sched impair interface NAME delay D jitter J",
	    sched_delay)

CLI_COMMAND(sched_class_reg, "sched class",
	    "sched class NAME priority 0-7 [weight W] [type atomic|ordered|parallel] match dscp D|protocol "
	    "icmp|tcp|udp|interface NAME",
	    "Define (or redefine) a scheduling class that sched-ingress assigns",
	    sched_class_cmd)

CLI_COMMAND(no_sched_class_reg, "no sched class",
	    "no sched class NAME",
	    "Remove a scheduling class",
	    no_sched_class)

CLI_COMMAND(show_sched_reg, "show sched",
	    "show sched [json]",
	    "Shapers, delays, held and released packets per interface and class; the classes",
	    show_sched)

/* ---- running configuration (cli/cli_runcfg.h) ---- */

/* A size as a word the commands parse back: 16k when whole, else bytes. */
static void size_word(uint64_t v, char *buf, size_t len)
{
	format_bytes(v, buf, len);
	if (strchr(buf, ' '))
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

static void write_classes(struct cli_runcfg *rc)
{
	const struct sched_class_table *t = &sched_class_table;
	for (uint32_t k = 0; k < t->n; k++) {
		const struct sched_class *c = &t->cls[t->order[k]];
		char m[64], key[SCHED_CLASS_NAME_SIZE + 16], undo[SCHED_CLASS_NAME_SIZE + 24];
		match_text(c, m, sizeof(m));
		snprintf(key, sizeof(key), "sched class %s", c->name);
		snprintf(undo, sizeof(undo), "no sched class %s", c->name);
		cli_runcfg_object(rc, key, undo, "sched class %s priority %u weight %u type %s match %s", c->name,
				  c->priority, c->weight, sched_type_names[c->type], m);
	}
}

/* Each class's impairment on the interface (before its shaper), for the
 * classes defined now (no command names a removed class's). */
static void write_class_impairs(struct cli_runcfg *rc, const struct device *d, const struct sched_io_if *sif)
{
	const struct sched_class_table *t = &sched_class_table;
	char key[DEV_NAME_SIZE + SCHED_CLASS_NAME_SIZE + 32], words[512];
	for (uint32_t k = 0; sif->e && k < t->n; k++) {
		const struct sched_class *c = &t->cls[t->order[k]];
		const struct sched_impair *m = sched_egress_class_impair(sif->e, t->order[k]);
		struct sched_impair_stats im = { 0 };
		if (m)
			sched_impair_stats(m, &im);
		bool on = m && sched_impair_active(&im.cfg);
		snprintf(words, sizeof(words), "off");
		if (on)
			sched_impair_format(&im.cfg, words, sizeof(words));
		snprintf(key, sizeof(key), "sched impair class %s %s", c->name, d->name);
		cli_runcfg_attr(rc, key, !on, "sched impair class %s interface %s %s", c->name, d->name, words);
	}
}

/* An interface's shaper (the port level under a subscriber hierarchy) and
 * its impairment; `off` is what a new interface has. */
static void write_if_sched(struct cli_runcfg *rc, const struct device *d, const struct sched_io_if *sif)
{
	struct sched_egress_stats st = { 0 };
	struct sched_impair_stats im = { 0 };
	char key[DEV_NAME_SIZE + 32], a[32], b[32], words[512] = "off";
	if (sif->e) {
		sched_egress_stats(sif->e, &st);
		hqos_port_level(sif, &st);
		sched_impair_stats(sched_egress_impair(sif->e), &im);
		if (sched_impair_active(&im.cfg))
			sched_impair_format(&im.cfg, words, sizeof(words));
	}
	snprintf(key, sizeof(key), "sched shaper %s", d->name);
	if (st.cfg.rate_bps) {
		format_unit(CONF_RATE, st.cfg.rate_bps, a, sizeof(a));
		size_word(st.cfg.burst_bytes, b, sizeof(b));
		cli_runcfg_attr(rc, key, false, "sched shaper interface %s rate %s burst %s", d->name, a, b);
	} else {
		cli_runcfg_attr(rc, key, true, "sched shaper interface %s off", d->name);
	}
	snprintf(key, sizeof(key), "sched impair %s", d->name);
	cli_runcfg_attr(rc, key, !strcmp(words, "off"), "sched impair interface %s %s", d->name, words);
	write_class_impairs(rc, d, sif);
}

/* Classes in match order, then each interface's shaper, impairment and
 * its classes' impairments. */
static void write_sched(struct cli_runcfg *rc, struct cli_session *s)
{
	graph_cli_barrier_sync(s); /* a consistent view of the owners' schedules */
	write_classes(rc);
	struct device *d;
	DEV_FOREACH(d)
	{
		if (d->mode != DEV_MODE_LCP)
			write_if_sched(rc, d, &sched_io_ifs[d->index]);
	}
	graph_cli_barrier_release(s);
}

CLI_RUNCFG_WRITER(sched_runcfg, "sched", CLI_RUNCFG_SCHED, write_sched)
