/* The `sched` startup.conf section, read through one declarative table
 * (base/conf.h) into struct timer_config:
 *
 *   sched {
 *     tick 10us            wheel resolution (1us-1s)
 *     levels 6             wheel levels of 64 slots: horizon 64^levels ticks
 *     max-timers 262144    armed at once per datapath thread
 *     max-skiplist 16384   timers beyond the horizon or precise, per thread
 *     max-periodic 4096    periodic timers per thread
 *     max-producers 2      other threads that may arm on one thread's service
 *     producer-timers 65536  armed at once per producer
 *     ring-size 4096       producer request ring (power of two)
 *     producer-mode ring   ring | shard: how producers reach the owner
 *     max-held 4096        packets sched-egress holds per shaped or delayed
 *                          interface; more are dropped (and counted)
 *     class-queue-depth 1024  packets each class queue in front of the
 *                          workers holds (power of two, 64-65536); more
 *                          are dropped as "class queue full"
 *   }
 */
#include <errno.h>
#include <stdio.h>

#include "base/conf.h"
#include "sched/egress.h"
#include "sched/timer.h"

#define TC_FIELD(m) CONF_FIELD(struct timer_config, m)

static const char *const xmodes[] = { "ring", "shard", NULL };

static const struct conf_key timer_keys[] = {
	{ .name = "tick", .type = CONF_DURATION, .def = "10us", .min = 1000, .max = 1000000000ull,
	  TC_FIELD(tick_ns), .doc = "timer wheel resolution" },
	{ .name = "levels", .type = CONF_UINT, .def = "6", .min = 1, .max = TIMER_MAX_LEVELS, TC_FIELD(levels),
	  .doc = "wheel levels of 64 slots each" },
	{ .name = "max-timers", .type = CONF_UINT, .def = "262144", .min = 1, .max = TIMER_MAX_TIMERS,
	  TC_FIELD(max_timers), .doc = "timers armed at once per datapath thread" },
	{ .name = "max-skiplist", .type = CONF_UINT, .def = "16384", .max = TIMER_MAX_TIMERS,
	  TC_FIELD(max_skiplist), .doc = "timers past the wheel's horizon or precise, per thread" },
	{ .name = "max-periodic", .type = CONF_UINT, .def = "4096", .max = 65535, TC_FIELD(max_periodic),
	  .doc = "periodic timers per thread" },
	{ .name = "max-producers", .type = CONF_UINT, .def = "2", .max = TIMER_MAX_PRODUCERS,
	  TC_FIELD(max_producers), .doc = "other threads that may arm on one thread's service" },
	{ .name = "producer-timers", .type = CONF_UINT, .def = "65536", .min = 1, .max = TIMER_MAX_TIMERS,
	  TC_FIELD(producer_timers), .doc = "timers armed at once per producer" },
	{ .name = "ring-size", .type = CONF_UINT, .def = "4096", .min = 2, .max = 1u << 20, TC_FIELD(ring_size),
	  .doc = "producer request ring entries, a power of two" },
	{ .name = "producer-mode", .type = CONF_ENUM, .def = "ring", .choices = xmodes, TC_FIELD(xmode),
	  .doc = "ring: requests drained by the owner; shard: a locked wheel per producer" },
	{ .name = "max-held", .type = CONF_UINT, .def = "4096", .min = 1, .max = SCHED_HELD_MAX, TC_FIELD(max_held),
	  .doc = "packets sched-egress holds per shaped or delayed interface" },
	{ .name = "class-queue-depth", .type = CONF_UINT, .def = "1024", .min = 64, .max = 65536,
	  TC_FIELD(class_depth), .doc = "packets per class queue in front of the workers, a power of two" },
	{ 0 },
};

static int timer_conf_check(void *obj, struct conf_check *chk)
{
	const struct timer_config *c = obj;
	if (conf_check_pow2(chk, "ring-size", c->ring_size) ||
	    conf_check_pow2(chk, "class-queue-depth", c->class_depth))
		return -EINVAL;
	if ((uint64_t)c->max_timers + (uint64_t)c->max_producers * c->producer_timers > TIMER_MAX_TIMERS) {
		chk->key = "max-timers";
		snprintf(chk->msg, sizeof(chk->msg), "max-timers + max-producers * producer-timers exceeds %u",
			 TIMER_MAX_TIMERS);
		return -EINVAL;
	}
	return 0;
}

const struct conf_section timer_conf_section = {
	.name = "sched",
	.doc = "timer service: one per datapath thread",
	.size = sizeof(struct timer_config),
	.keys = timer_keys,
	.check = timer_conf_check,
};
