/* The sample plugin's descriptor, init and startup.conf section:
 *
 *   plugins { path DIR  plugin sample_plugin.so { enable } }
 *   sample { max-flows 64 }
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "app/plugin.h"
#include "base/conf.h"
#include "sample.h"

struct sample_conf sample_conf;

static const struct conf_key sample_keys[] = {
	{ .name = "max-flows", .type = CONF_UINT, .def = "256", .min = 1, .max = SAMPLE_FLOWS_MAX,
	  CONF_FIELD(struct sample_conf, max_flows), .doc = "flows each thread counts; more count as table-full" },
	{ 0 },
};

static const struct conf_section sample_section = {
	.name = "sample",
	.doc = "the sample plugin: per-flow IPv4 counters after ethernet-input",
	.size = sizeof(struct sample_conf),
	.keys = sample_keys,
};

static const struct conf_section_reg sample_section_reg = { .sec = &sample_section, .obj = &sample_conf };
CONF_SECTION_REGISTER(sample_section_reg)

/* Nothing to set up but a check that the node registered with this
 * plugin's constructors (a plugin linked without its node file would
 * otherwise load and do nothing). */
static int sample_init(char *err, size_t errlen)
{
	if (!node_registry_find("sample-flow")) {
		snprintf(err, errlen, "node sample-flow did not register");
		return -ENOENT;
	}
	return 0;
}

SLUICE_PLUGIN(.name = "sample", .version = "1.0",
	      .description = "counts IPv4 packets per flow after ethernet-input", .init = sample_init);
