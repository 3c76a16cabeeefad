/* The floor of a user-space forwarder woken per frame: two packet sockets,
 * one poll(), every frame read with recv() and written to the other side
 * with send(), nothing else (no parsing, no rings, no graph). A diagnostic
 * for bench/wake/relay_floor.sh beside sluice and the kernel, not a peer:
 * it forwards at layer 2 and does no work a data plane must.
 *
 *   sluice-bench-relay IFACE-A IFACE-B
 *
 * Runs until killed. Frames the socket itself sent are not seen again
 * (PACKET_IGNORE_OUTGOING, packet(7)). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static int relay_open(const char *name)
{
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = (int)if_nametoindex(name),
	};
	int one = 1;
	if (fd < 0 || !sll.sll_ifindex || bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0) {
		fprintf(stderr, "sluice-bench-relay: %s: %s\n", name, strerror(errno));
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: sluice-bench-relay IFACE-A IFACE-B\n");
		return 2;
	}
	struct pollfd p[2] = { { .fd = relay_open(argv[1]), .events = POLLIN },
			       { .fd = relay_open(argv[2]), .events = POLLIN } };
	if (p[0].fd < 0 || p[1].fd < 0)
		return 1;
	static char frame[65536];
	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return 1;
		for (int i = 0; i < 2; i++) {
			if (!(p[i].revents & POLLIN))
				continue;
			ssize_t n;
			while ((n = recv(p[i].fd, frame, sizeof(frame), MSG_DONTWAIT)) > 0)
				(void)send(p[1 - i].fd, frame, (size_t)n, 0);
		}
	}
}
