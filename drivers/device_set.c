/* An interface's MTU and MAC after creation (`set interface mtu`, `set
 * interface mac address`, linux-cp's TAP -> port direction), and the
 * change hooks that keep what depends on them in step (device.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "drivers/device.h"

static void (*change_hooks[DEV_MAX_DELETE_HOOKS])(uint32_t if_index);
static uint32_t n_change_hooks;

int dev_on_change(void (*fn)(uint32_t if_index))
{
	if (n_change_hooks >= DEV_MAX_DELETE_HOOKS)
		return -ENOSPC;
	change_hooks[n_change_hooks++] = fn;
	return 0;
}

void dev_changed(struct device *dev)
{
	for (uint32_t i = 0; i < n_change_hooks; i++)
		change_hooks[i](dev->index);
}

int dev_set_mtu(struct device *dev, uint32_t mtu)
{
	if (mtu < DEV_MTU_MIN || mtu > DEV_MTU_MAX)
		return -ERANGE;
	if (mtu == dev->mtu)
		return 0;
	if (dev->ops->set_mtu) {
		int rc = dev->ops->set_mtu(dev, mtu);
		if (rc)
			return rc;
	}
	dev->mtu = (uint16_t)mtu;
	dev_changed(dev);
	return 0;
}

int dev_set_mac(struct device *dev, const uint8_t mac[6])
{
	static const uint8_t zero[6];
	if ((mac[0] & 1) || !memcmp(mac, zero, 6))
		return -EINVAL; /* a group address, or none: no station's own */
	if (!memcmp(mac, dev->mac, 6))
		return 0;
	if (dev->ops->set_mac) {
		int rc = dev->ops->set_mac(dev, mac);
		if (rc)
			return rc;
	}
	memcpy(dev->mac, mac, 6);
	dev_changed(dev);
	return 0;
}

const char *dev_format_mac(char buf[18], const uint8_t mac[6])
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	return buf;
}
