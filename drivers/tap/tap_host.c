/* The Linux side of a TAP: made in its network namespace, and its admin
 * state, MTU and MAC set through a socket opened there.
 *
 * A thread of its own does the making: setns(2) with CLONE_NEWNET moves
 * only the calling thread, so a short-lived thread enters the namespace,
 * opens /dev/net/tun (TUNSETIFF with IFF_TAP | IFF_NO_PI: Ethernet frames,
 * no packet-information header; Linux's Documentation/networking/
 * tuntap.rst), opens an AF_INET datagram socket for the interface ioctls
 * (netdevice(7): SIOCSIFHWADDR, SIOCSIFMTU, SIOCSIFFLAGS), and ends. The
 * fd and the socket keep the namespace they were made in, so no thread of
 * sluice ever changes namespace for long, and the caller's never does.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "drivers/tap/tap_private.h"

struct open_job {
	struct tap_dev *td;
	int rc;
	char why[128];
};

static int fail(struct open_job *j, int rc, const char *what)
{
	j->rc = rc;
	snprintf(j->why, sizeof(j->why), "%s: %s", what, strerror(-rc));
	return rc;
}

static int enter_netns(struct open_job *j, const char *netns)
{
	char path[32 + TAP_NETNS_SIZE];
	snprintf(path, sizeof(path), "/var/run/netns/%s", netns);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		j->rc = -errno;
		snprintf(j->why, sizeof(j->why), "netns %s: %s (expected a name `ip netns list` shows)", netns,
			 strerror(errno));
		return j->rc;
	}
	int rc = setns(fd, CLONE_NEWNET) ? -errno : 0;
	close(fd);
	return rc ? fail(j, rc, "setns") : 0;
}

static int ifreq_ioctl(int sock, unsigned long req, struct ifreq *ifr)
{
	return ioctl(sock, req, ifr) < 0 ? -errno : 0;
}

static void *open_thread(void *arg)
{
	struct open_job *j = arg;
	struct tap_dev *td = j->td;
	if (td->netns[0] && enter_netns(j, td->netns))
		return NULL;
	td->sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (td->sock < 0) {
		fail(j, -errno, "socket");
		return NULL;
	}
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", td->host_if);
	/* TUNSETIFF would attach to a persistent TAP of that name, or fail
	 * obscurely on another kind of interface: refuse any that exists. */
	if (ifreq_ioctl(td->sock, SIOCGIFINDEX, &ifr) == 0) {
		j->rc = -EEXIST;
		snprintf(j->why, sizeof(j->why), "an interface of that name already exists in netns %s",
			 td->netns[0] ? td->netns : "(sluice's)");
		return NULL;
	}
	td->fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (td->fd < 0) {
		fail(j, -errno, "/dev/net/tun");
		return NULL;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", td->host_if);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	int rc = ifreq_ioctl(td->fd, TUNSETIFF, &ifr);
	if (rc == 0)
		rc = ifreq_ioctl(td->sock, SIOCGIFINDEX, &ifr);
	if (rc) {
		fail(j, rc, "TUNSETIFF");
		return NULL;
	}
	td->st.host_ifindex = (uint32_t)ifr.ifr_ifindex;
	if ((rc = tap_host_set_mac(&td->dev, td->dev.mac)) || (rc = tap_host_set_mtu(&td->dev, td->dev.mtu)))
		fail(j, rc, "setting MAC and MTU");
	return NULL;
}

int tap_host_open(struct tap_dev *td, char *err, size_t errlen)
{
	struct open_job j = { .td = td };
	pthread_t t;
	int rc = -pthread_create(&t, NULL, open_thread, &j);
	if (rc) {
		snprintf(err, errlen, "tap: thread: %s", strerror(-rc));
		return rc;
	}
	pthread_join(t, NULL);
	if (j.rc)
		snprintf(err, errlen, "tap %s: %s", td->host_if, j.why);
	return j.rc;
}

static int host_flags(struct tap_dev *td, bool up)
{
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", td->host_if);
	int rc = ifreq_ioctl(td->sock, SIOCGIFFLAGS, &ifr);
	if (rc)
		return rc;
	if (up)
		ifr.ifr_flags = (short)(ifr.ifr_flags | IFF_UP);
	else
		ifr.ifr_flags = (short)(ifr.ifr_flags & ~IFF_UP);
	return ifreq_ioctl(td->sock, SIOCSIFFLAGS, &ifr);
}

int tap_host_set_up(struct device *dev, bool up)
{
	if (!tap_is(dev))
		return -EINVAL;
	return host_flags(container_of(dev, struct tap_dev, dev), up);
}

int tap_host_set_mtu(struct device *dev, uint32_t mtu)
{
	if (!tap_is(dev))
		return -EINVAL;
	struct tap_dev *td = container_of(dev, struct tap_dev, dev);
	if (mtu + 18 > td->rx.slot_size)
		return -ERANGE; /* frames of it would not fit a ring slot */
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", td->host_if);
	ifr.ifr_mtu = (int)mtu;
	return ifreq_ioctl(td->sock, SIOCSIFMTU, &ifr);
}

int tap_host_set_mac(struct device *dev, const uint8_t mac[6])
{
	if (!tap_is(dev))
		return -EINVAL;
	struct tap_dev *td = container_of(dev, struct tap_dev, dev);
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", td->host_if);
	ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
	memcpy(ifr.ifr_hwaddr.sa_data, mac, 6);
	return ifreq_ioctl(td->sock, SIOCSIFHWADDR, &ifr);
}

int tap_host_get_link(const struct device *dev, uint32_t *mtu, uint8_t mac[6])
{
	if (!tap_is(dev))
		return -EINVAL;
	const struct tap_dev *td = container_of(dev, struct tap_dev, dev);
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", td->host_if);
	int rc = ifreq_ioctl(td->sock, SIOCGIFMTU, &ifr);
	if (rc)
		return rc;
	*mtu = (uint32_t)ifr.ifr_mtu;
	if ((rc = ifreq_ioctl(td->sock, SIOCGIFHWADDR, &ifr)))
		return rc;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}
