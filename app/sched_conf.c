/* Scheduling from startup.conf: the `sched-classes` section and every
 * interface's `shaper` key, applied once the threads and their timer
 * services run (app/sched_conf.h).
 *
 *   sched-classes {
 *     ef   { priority 0  match "dscp 46" }
 *     bulk { priority 7  weight 1  type atomic  match "dscp 8" }
 *   }
 *   interfaces { nul0 { driver null  shaper "rate 2mbit burst 16k" } }
 *
 * The words are the CLI's (`sched class NAME priority P [weight W] [type T]
 * match dscp D|protocol icmp|tcp|udp|interface NAME`, `sched shaper
 * interface NAME rate R [burst B]`), and the effect is the same: classes
 * in the order written (the match order), then the shapers. Everything but
 * a class's interface match is checked at parse time, so --check refuses
 * a bad value with its file and line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/sched_conf.h"
#include "base/util.h"
#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/sched/sched_io.h"

#define SC_FIELD(m) CONF_FIELD(struct app_sched_class_conf, m)

static const char *const class_types[] = { "atomic", "ordered", "parallel", NULL };
_Static_assert(ARRAY_LEN(class_types) == SCHED_N_TYPES + 1, "one name per scheduling type");

static const struct conf_key class_keys[] = {
	{ .name = "priority", .type = CONF_UINT, .max = SCHED_N_PRIO - 1, SC_FIELD(priority),
	  .doc = "0 (highest) to 7 (lowest); required" },
	{ .name = "weight", .type = CONF_UINT, .def = "1", .min = 1, .max = SCHED_WEIGHT_MAX, SC_FIELD(weight),
	  .doc = "packets per turn among the classes of one priority" },
	{ .name = "type", .type = CONF_ENUM, .def = "atomic", .choices = class_types, SC_FIELD(type),
	  .doc = "what the distributor does with the class's flows (docs/hqos.md)" },
	{ .name = "match", .type = CONF_STRING, SC_FIELD(match),
	  .doc = "\"dscp D\", \"protocol icmp|tcp|udp\" or \"interface NAME\"; required" },
	{ 0 },
};

/* The words of `match` into the class's match and value (an interface
 * match keeps the name: interfaces exist only once the app made them). */
static int parse_match(struct app_sched_class_conf *c, char *msg, size_t len)
{
	static const struct {
		const char *name;
		uint32_t proto;
	} protos[] = { { "icmp", 1 }, { "tcp", 6 }, { "udp", 17 } };
	static const char words[] = "expected \"dscp D\", \"protocol icmp|tcp|udp\" or \"interface NAME\"";
	char kind[16], value[CONF_NAME_SIZE], extra[2];
	if (sscanf(c->match, "%15s %31s %1s", kind, value, extra) != 2) {
		snprintf(msg, len, "%s", words);
		return -EINVAL;
	}
	if (strcmp(kind, "dscp") == 0) {
		char *end;
		unsigned long v = strtoul(value, &end, 10);
		c->match_kind = SCHED_MATCH_DSCP;
		c->match_value = (uint32_t)v;
		if (value[0] >= '0' && value[0] <= '9' && !*end && v <= 63)
			return 0;
		snprintf(msg, len, "expected dscp 0..63");
		return -EINVAL;
	}
	if (strcmp(kind, "protocol") == 0) {
		c->match_kind = SCHED_MATCH_PROTOCOL;
		for (size_t i = 0; i < ARRAY_LEN(protos); i++)
			if (strcmp(value, protos[i].name) == 0) {
				c->match_value = protos[i].proto;
				return 0;
			}
		snprintf(msg, len, "expected protocol icmp, tcp or udp");
		return -EINVAL;
	}
	if (strcmp(kind, "interface") == 0) {
		c->match_kind = SCHED_MATCH_INTERFACE;
		snprintf(c->match_if, sizeof(c->match_if), "%s", value);
		return 0;
	}
	snprintf(msg, len, "%s", words);
	return -EINVAL;
}

static int class_check(void *obj, struct conf_check *chk)
{
	struct app_sched_class_conf *c = obj;
	static const char *const required[] = { "priority", "match" };
	for (size_t i = 0; i < ARRAY_LEN(required); i++)
		if (!conf_check_was_set(chk, required[i])) {
			snprintf(chk->msg, sizeof(chk->msg), "expected %s (`sched class`'s priority P and match ...)",
				 required[i]);
			return -EINVAL;
		}
	if (parse_match(c, chk->msg, sizeof(chk->msg))) {
		chk->key = "match";
		return -EINVAL;
	}
	return 0;
}

static const struct conf_block class_block = {
	.what = "class",
	.keys = class_keys,
	.elem_size = sizeof(struct app_sched_class_conf),
	.array_offset = offsetof(struct app_sched_conf, classes),
	.count_offset = offsetof(struct app_sched_conf, n_classes),
	.max = APP_SCHED_MAX_CLASSES,
	.name_offset = offsetof(struct app_sched_class_conf, name),
	.name_size = CONF_NAME_SIZE,
	.check = class_check,
};

const struct conf_section app_sched_conf_section = {
	.name = "sched-classes",
	.doc = "scheduling classes that sched-ingress assigns, in match order (`sched class`)",
	.size = sizeof(struct app_sched_conf),
	.block = &class_block,
};

/* ---- an interface's shaper ---- */

int app_shaper_parse(const char *words, uint64_t *rate_bps, uint64_t *burst_bytes, char *why, size_t len)
{
	char w[CONF_SHAPER_SIZE], *save = NULL;
	struct conf_key rate = { .name = "rate", .type = CONF_RATE, .size = sizeof(uint64_t) };
	struct conf_key burst = { .name = "burst", .type = CONF_SIZE, .size = sizeof(uint64_t) };
	*rate_bps = 0;
	*burst_bytes = APP_SHAPER_BURST_DEFAULT;
	snprintf(w, sizeof(w), "%s", words);
	for (char *k = strtok_r(w, " \t", &save); k; k = strtok_r(NULL, " \t", &save)) {
		const struct conf_key *key = strcmp(k, "rate") == 0 ? &rate : strcmp(k, "burst") == 0 ? &burst : NULL;
		char *v = strtok_r(NULL, " \t", &save);
		char err[CONF_MSG_SIZE];
		if (!key || !v) {
			snprintf(why, len, "shaper: expected \"rate R [burst B]\" (for example \"rate 10mbit burst 16k\")");
			return -EINVAL;
		}
		if (conf_value_parse(key, v, key == &rate ? (void *)rate_bps : (void *)burst_bytes, err, sizeof(err))) {
			snprintf(why, len, "shaper: %s %s: %.160s", k, v, err);
			return -EINVAL;
		}
	}
	if (!*rate_bps && words[0]) {
		snprintf(why, len, "shaper: expected rate R above 0 (for example \"rate 10mbit\")");
		return -EINVAL;
	}
	return 0;
}

/* ---- applying ---- */

static int apply_class(struct graph *g, const struct app_sched_class_conf *cc, char *err, size_t errlen)
{
	struct sched_class c = { .priority = (uint8_t)cc->priority, .weight = (uint16_t)cc->weight,
				 .type = (uint8_t)cc->type, .match = cc->match_kind, .value = cc->match_value };
	memcpy(c.name, cc->name, sizeof(c.name));
	if (cc->match_kind == SCHED_MATCH_INTERFACE) {
		const struct device *d = dev_by_name(cc->match_if);
		if (!d) {
			snprintf(err, errlen, "sched-classes: class %s: match interface %s: no such interface", cc->name,
				 cc->match_if);
			return -ENOENT;
		}
		c.value = d->index;
	}
	char why[256];
	int rc = sched_io_class_set(g, &c, why, sizeof(why));
	if (rc < 0)
		snprintf(err, errlen, "sched-classes: class %s: %s", cc->name, why);
	return rc < 0 ? rc : 0;
}

int app_sched_apply(struct graph *g, const struct app_sched_conf *sc, const struct conf_interfaces *ifs,
		    uint32_t *n_shapers, char *err, size_t errlen)
{
	*n_shapers = 0;
	for (uint32_t i = 0; i < sc->n_classes; i++) {
		int rc = apply_class(g, &sc->classes[i], err, errlen);
		if (rc)
			return rc;
	}
	for (uint32_t i = 0; i < ifs->n; i++) {
		const struct conf_interface *ifc = &ifs->ifs[i];
		uint64_t rate, burst;
		char why[256];
		if (!ifc->shaper[0])
			continue;
		const struct device *d = dev_by_name(ifc->name);
		int rc = app_shaper_parse(ifc->shaper, &rate, &burst, why, sizeof(why));
		if (rc == 0 && !d) {
			snprintf(why, sizeof(why), "not created");
			rc = -ENOENT;
		}
		if (rc == 0)
			rc = sched_io_set_shaper(g, d->index, rate, burst, why, sizeof(why));
		if (rc) {
			snprintf(err, errlen, "interface %s: %s", ifc->name, why);
			return rc;
		}
		(*n_shapers)++;
	}
	return 0;
}
