/* The seed runner: the plain (gcc, no libFuzzer) build of a harness. Feeds
 * every file named on the command line, or found in a directory named
 * there, to the harness's LLVMFuzzerTestOneInput in name order, then
 * returns the harness's fuzz_seed_check. A crash here is a crash found. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			buf = realloc(buf, cap);
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		if (!r)
			break;
		n += r;
	}
	fclose(f);
	/* A copy of exactly n bytes, so that ASan sees a read past the input. */
	uint8_t *exact = malloc(n ? n : 1);
	memcpy(exact, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	LLVMFuzzerInitialize(&argc, &argv);
	uint32_t n = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]) != 0)
				return 1;
			n++;
			continue;
		}
		struct dirent **ents;
		int m = scandir(argv[i], &ents, NULL, by_name);
		for (int k = 0; k < m; k++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], ents[k]->d_name);
			if (ents[k]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
				if (run_file(path) != 0)
					return 1;
				n++;
			}
			free(ents[k]);
		}
		free(ents);
	}
	printf("%u seeds\n", n);
	return n ? fuzz_seed_check() : 1;
}
