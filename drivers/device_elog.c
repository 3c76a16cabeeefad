/* Interface events in the event log (base/elog.h): admin state changes as
 * they are made, link changes as they are seen.
 *
 * No driver tells of a link change: the link is read when someone asks
 * (`show interface`, the stats segment's writer), so a change is logged by
 * the first reader that sees it. Control path only.
 */
#include "base/elog.h"
#include "drivers/device.h"

static struct elog_type admin_type = {
	.name = "admin", .category = "interface",
	.arg_name = { "interface", "up", "status" }, .arg_kind = { ELOG_ARG_STR, ELOG_ARG_UINT, ELOG_ARG_INT },
};
ELOG_TYPE_REGISTER(admin_type)

static struct elog_type link_type = {
	.name = "link", .category = "interface",
	.arg_name = { "interface", "up", "speed_mbps" }, .arg_kind = { ELOG_ARG_STR, ELOG_ARG_UINT, ELOG_ARG_UINT },
};
ELOG_TYPE_REGISTER(link_type)

int dev_elog_admin(struct device *dev, bool up, int rc)
{
	elog_log(&admin_type, elog_string(dev->name), up, (uint64_t)(int64_t)rc);
	return rc;
}

void dev_elog_link(struct device *dev, const struct dev_link *l)
{
	uint8_t seen = l->up ? 2 : 1;
	if (__atomic_exchange_n(&dev->link_seen, seen, __ATOMIC_RELAXED) != seen)
		elog_log(&link_type, elog_string(dev->name), l->up, l->speed_mbps);
}
