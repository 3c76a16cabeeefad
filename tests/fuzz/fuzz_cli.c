/* CLI harness: bytes -> lines -> cli_exec_line, on the hardening packet
 * graph (tests/fuzz/pkt_graph.h) with every registered command linked in.
 * The parser (cli_args_parse, the registry's word matching) and each
 * command's argument handling get the input.
 *
 * Sandbox: commands that reach outside the process are refused here
 * before the CLI sees them: `create interface` (af-packet opens host
 * sockets, ixgbe probes PCI), `trace save` and `pcap capture` (write
 * files), `packet-generator` (reads pcap files), `exec` (runs a file's
 * lines past these checks), `lcp` (makes TAPs in
 * Linux's namespaces; one that slips past goes with the process, whose
 * exit closes its fd). The process works in a
 * private temporary directory, which is also its cli-file-dir: a write
 * that slips past the word check (libcli expands abbreviations such as
 * `tr sa`) still lands there, and the directory goes with the process
 * (atexit). Seeds: tests/fuzz/seeds/cli. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/pkt_graph.h"

#define MAX_LINES 16

static const char *const refused[] = { "create", "trace save", "pcap", "packet-generator", "lcp", "exec" };
static uint32_t n_ok, n_failed, n_refused;

static char work_dir[] = "/tmp/sluice-fuzz-cli-XXXXXX";

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* Whatever a command wrote there, then the directory itself. */
static void remove_work_dir(void)
{
	(void)nftw(work_dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	char err[256], *dir = work_dir;
	if (!mkdtemp(dir) || atexit(remove_work_dir) != 0 || chdir(dir) != 0 || cli_set_file_dir(dir, err, sizeof(err)) != 0 ||
	    pkt_graph_init(err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_cli: set-up failed\n");
		abort();
	}
	cli_set_graph(pkt_graph());
	return 0;
}

/* Whether the line's first words (after blanks) are a refused command. */
static bool is_refused(const char *line)
{
	char words[64];
	size_t n = 0;
	for (const char *p = line; *p && n + 1 < sizeof(words); p++) {
		if (*p == ' ' || *p == '\t') {
			if (n && words[n - 1] != ' ')
				words[n++] = ' ';
		} else {
			words[n++] = *p;
		}
	}
	words[n] = 0;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (!strncmp(words, refused[i], strlen(refused[i])))
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	char *save = NULL;
	uint32_t k = 0;
	for (char *line = strtok_r(text, "\n", &save); line && k < MAX_LINES; line = strtok_r(NULL, "\n", &save), k++) {
		if (is_refused(line)) {
			n_refused++;
			continue;
		}
		char *out = NULL;
		if (cli_exec_line(line, &out) == 0)
			n_ok++;
		else
			n_failed++;
		free(out);
	}
	free(text);
	pkt_graph_run();
	return 0;
}

int fuzz_seed_check(void)
{
	printf("%u commands ran, %u failed, %u refused by the sandbox\n", n_ok, n_failed, n_refused);
	uint32_t left = pkt_graph_fini();
	if (left)
		printf("%u buffers still in use at the end\n", left);
	return n_ok && n_failed && !left ? 0 : 1;
}
