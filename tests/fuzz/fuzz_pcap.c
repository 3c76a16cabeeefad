/* pcap reader harness: bytes -> a file -> a pcap interface reading it
 * (libpcap's pcap and pcapng readers, then the driver's rx burst: caplen
 * checks, damaged-file handling, buffer accounting) until it runs dry.
 * Every buffer received is freed; none may remain in use. Seeds:
 * tests/fuzz/seeds/pcap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers/device.h"
#include "graph/buffer.h"
#include "tests/fuzz/fuzz.h"

static char path[64];
static uint64_t n_frames, n_files;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_pool_init("fuzz_pcap", 1024);
	snprintf(path, sizeof(path), "/tmp/sluice-fuzz-pcap-%d", (int)getpid());
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	const char *words[] = { "rx-file", path };
	char err[512];
	struct device *d = dev_create("fz0", "pcap", words, 2, err, sizeof(err));
	if (d) {
		n_files++;
		uint32_t bi[64];
		/* A file of n frames needs at most n + a few bursts; bound it. */
		for (int i = 0; i < 4096; i++) {
			uint32_t n = dev_rx_burst(d, 0, bi, 64);
			if (!n)
				break;
			n_frames += n;
			buffer_free(bi, n);
		}
		dev_delete(d);
	}
	unlink(path);
	if (buffer_n_in_use() != 0)
		abort();
	return 0;
}

int fuzz_seed_check(void)
{
	printf("%llu files opened, %llu frames read\n", (unsigned long long)n_files, (unsigned long long)n_frames);
	return n_files && n_frames ? 0 : 1;
}
