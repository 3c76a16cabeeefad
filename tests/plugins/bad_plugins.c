/* Plugins sluice must refuse, one per -DBAD_* (tests/plugins/meson.build),
 * each for one reason the loader names (app/plugin_loader.h):
 *   BAD_VERSION     built for another plugin API version
 *   BAD_ABI         built against headers with another struct buffer size
 *   BAD_DUP_NODE    registers a node called ethernet-input
 *   BAD_INIT        its init fails with a reason
 *   BAD_SYMBOL      calls a function sluice does not export (dlopen fails)
 *   BAD_NO_DESC     has no descriptor
 *   BAD_DUP_SECTION registers a startup.conf section called unix
 *   BAD_DUP_CLI     registers a CLI command called show plugins
 *   BAD_DUP_DRIVER  registers a driver called null
 *   BAD_MANY_DRIVERS registers more drivers than the driver table holds
 *   BAD_COUNTERS    registers stats segment counters under the built-in /if
 */
#include <errno.h>
#include <stdio.h>

#include "app/plugin.h"
#include "app/statseg.h"

#if defined(BAD_VERSION)
__attribute__((visibility("default"))) const struct sluice_plugin_desc sluice_plugin = {
	.api_version = SLUICE_PLUGIN_API_VERSION + 998, .abi = SLUICE_PLUGIN_ABI_HERE, .name = "bad-version",
};
#elif defined(BAD_ABI)
__attribute__((visibility("default"))) const struct sluice_plugin_desc sluice_plugin = {
	.api_version = SLUICE_PLUGIN_API_VERSION,
	.abi = { .node_reg = sizeof(struct node_reg), .node_runtime = sizeof(struct node_runtime),
		 .buffer = sizeof(struct buffer) + 64, .frame = sizeof(struct frame),
		 .cli_command_reg = sizeof(struct cli_command_reg), .conf_key = sizeof(struct conf_key),
		 .conf_section = sizeof(struct conf_section), .dev_driver = sizeof(struct dev_driver),
		 .node_feature = sizeof(struct node_feature) },
	.name = "bad-abi",
};
#elif defined(BAD_DUP_NODE)
static uint32_t dup_fn(struct node_runtime *rt, struct frame *f)
{
	(void)rt;
	return f->n_vectors;
}
static const struct node_reg dup_node = { .name = "ethernet-input", .fn = dup_fn };
NODE_REGISTER(dup_node)
SLUICE_PLUGIN(.name = "bad-dup-node");
#elif defined(BAD_INIT)
static int failing_init(char *err, size_t errlen)
{
	snprintf(err, errlen, "the sample device is not present");
	return -ENODEV;
}
SLUICE_PLUGIN(.name = "bad-init", .init = failing_init);
#elif defined(BAD_SYMBOL)
void sluice_no_such_function(void);
static int symbol_init(char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	sluice_no_such_function();
	return 0;
}
SLUICE_PLUGIN(.name = "bad-symbol", .init = symbol_init);
#elif defined(BAD_NO_DESC)
__attribute__((visibility("default"))) int not_a_sluice_plugin = 1;
#elif defined(BAD_DUP_SECTION)
static char unix_obj[8];
static const struct conf_section unix_again = { .name = "unix", .size = sizeof(unix_obj) };
static const struct conf_section_reg unix_again_reg = { .sec = &unix_again, .obj = unix_obj };
CONF_SECTION_REGISTER(unix_again_reg)
SLUICE_PLUGIN(.name = "bad-dup-section");
#elif defined(BAD_DUP_CLI)
static int again(struct cli_session *s, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_printf(s, "not the loader's");
	return 0;
}
CLI_COMMAND(again_cmd, "show plugins", "show plugins", "a second one", again)
SLUICE_PLUGIN(.name = "bad-dup-cli");
#elif defined(BAD_DUP_DRIVER)
static struct device *null_again_create(const void *conf, char *err, size_t errlen)
{
	(void)conf;
	snprintf(err, errlen, "not the real one");
	return NULL;
}
static const struct conf_driver null_again_conf = { .name = "null" };
static const struct dev_driver null_again = { .name = "null", .conf = &null_again_conf, .create = null_again_create };
DEV_DRIVER_REGISTER(null_again)
SLUICE_PLUGIN(.name = "bad-dup-driver");
#elif defined(BAD_MANY_DRIVERS)
static struct device *many_create(const void *conf, char *err, size_t errlen)
{
	(void)conf;
	snprintf(err, errlen, "never made");
	return NULL;
}
/* DEV_MAX_DRIVERS of them: the built-in ones hold some entries already. */
#define MANY(i)                                                                                \
	static const struct conf_driver many_conf_##i = { .name = "many" #i };                 \
	static const struct dev_driver many_##i = { .name = "many" #i, .conf = &many_conf_##i,  \
						    .create = many_create };                    \
	DEV_DRIVER_REGISTER(many_##i)
MANY(0) MANY(1) MANY(2) MANY(3) MANY(4) MANY(5) MANY(6) MANY(7)
MANY(8) MANY(9) MANY(10) MANY(11) MANY(12) MANY(13) MANY(14) MANY(15)
_Static_assert(DEV_MAX_DRIVERS == 16, "one MANY per entry");
SLUICE_PLUGIN(.name = "bad-many-drivers");
#elif defined(BAD_COUNTERS)
static void mine_collect(struct graph *g, struct statseg_rows *rows)
{
	(void)g;
	(void)rows;
}
static const char *const mine_columns[] = { "packets" };
static const struct statseg_counters mine = {
	.prefix = "/if/mine", .row_dim = "row", .n_columns = 1, .columns = mine_columns, .collect = mine_collect,
};
STATSEG_COUNTERS_REGISTER(mine)
SLUICE_PLUGIN(.name = "bad-counters");
#else
#error "build with one -DBAD_*"
#endif
