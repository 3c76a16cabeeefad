/* startup.conf harness: bytes -> sluice_config_parse -> on success, the
 * effective configuration printed and parsed back (it must parse again:
 * `sluice --check` promises its output is a config). Seeds:
 * tests/fuzz/seeds/conf, files named ok-* parse, err-* do not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/conf.h"
#include "tests/fuzz/fuzz.h"

static struct sluice_config cfg, again;
static uint32_t n_ok, n_err;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	struct app_conf_msg err;
	if (sluice_config_parse(&cfg, "fuzz.conf", text, &err) == 0) {
		n_ok++;
		char *out = sluice_config_format(&cfg);
		if (out && sluice_config_parse(&again, "(effective)", out, &err) != 0) {
			char msg[512];
			app_conf_msg_format(&err, "error", msg, sizeof(msg));
			fprintf(stderr, "the effective configuration does not parse back: %s\n%s\n", msg, out);
			abort();
		}
		free(out);
	} else {
		n_err++;
		char msg[512];
		app_conf_msg_format(&err, "error", msg, sizeof(msg));
	}
	free(text);
	return 0;
}

int fuzz_seed_check(void)
{
	printf("%u parsed, %u refused\n", n_ok, n_err);
	return n_ok && n_err ? 0 : 1;
}
