/* The tap driver: a Linux TAP interface (IFF_TAP | IFF_NO_PI, Linux's
 * Documentation/networking/tuntap.rst) as a sluice interface.
 *
 *   tap0 { driver tap  host-if s-eth0  netns ctl  mac 02:00:00:00:00:01  mtu 1500 }
 *
 * The TAP's file descriptor costs one read() or write() per frame, a
 * system call the datapath never makes: a control thread of the driver
 * ("sluice-tap") moves frames between the fds and bounded single-producer
 * single-consumer rings of byte slots. tap-input (the driver's rx burst)
 * copies frames out of the rx ring into the calling thread's own buffers;
 * tap-tx copies packets into the tx ring of its tx queue (one ring per tx
 * queue, one thread per queue) and frees them. Neither takes a lock or
 * makes a system call. docs/lcp.md has the whole picture.
 *
 * The TAP is created in netns (a name under /var/run/netns, as `ip netns`
 * makes them; "" the namespace sluice runs in) from a short-lived thread
 * that setns()'d there: setns(2) on a thread changes that thread's network
 * namespace only. The fd and a control socket opened there stay bound to
 * that namespace after the thread ends. Closing the fd removes the TAP.
 */
#ifndef SLUICE_DRIVERS_TAP_H
#define SLUICE_DRIVERS_TAP_H

#include <stdbool.h>
#include <stdint.h>

#include "drivers/device.h"

#define TAP_IFNAME_SIZE 16 /* IFNAMSIZ: Linux interface names, with the NUL */
#define TAP_NETNS_SIZE 64

/* What the control thread counted on the Linux side of one TAP. */
struct tap_host_stats {
	uint64_t to_linux;      /* frames written to the fd */
	uint64_t from_linux;    /* frames read from the fd into the rx ring */
	uint64_t rx_ring_full;  /* read from the fd, dropped: the datapath did not keep up */
	uint64_t rx_oversize;   /* read from the fd, dropped: longer than a slot (MTU + 18) */
	uint64_t write_errors;  /* write() refused (the Linux interface down: EIO) */
	uint32_t host_ifindex;  /* the TAP's ifindex in its namespace */
	bool host_gone;         /* deleted from Linux under sluice */
};

/* Whether dev is a tap interface. */
bool tap_is(const struct device *dev);

/* The TAP's name and namespace as created ("" for sluice's own). */
const char *tap_host_if(const struct device *dev);
const char *tap_netns(const struct device *dev);

void tap_host_stats_get(const struct device *dev, struct tap_host_stats *st);

/* Linux-side state, set through the control socket in the TAP's
 * namespace (control thread). 0 or a negative errno. */
int tap_host_set_up(struct device *dev, bool up);
int tap_host_set_mtu(struct device *dev, uint32_t mtu);
int tap_host_set_mac(struct device *dev, const uint8_t mac[6]);

/* The TAP's MTU and MAC as Linux has them now (SIOCGIFMTU, SIOCGIFHWADDR),
 * for linux-cp: a netlink message about the TAP may be stale (one sent
 * before sluice's own change reached Linux), the ioctl never is. 0 or a
 * negative errno. Control thread. */
int tap_host_get_link(const struct device *dev, uint32_t *mtu, uint8_t mac[6]);

/* Free slots in the tx ring of queue (to Linux): how many more packets a
 * tx burst on that queue would take now. Datapath, the queue's thread. */
uint32_t tap_tx_room(const struct device *dev, uint16_t queue);

#endif
