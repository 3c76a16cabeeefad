/* ip6 { fib-groups N  fib-memory auto|hugetlb|4k }: the main IPv6 FIB's
 * size and pages (nodes/ip6/ip6_fib.h). Each 256-entry group is 1 KB of
 * table and 256 bytes of depths, reserved at start and touched as used; a
 * table shaped like the public one takes about 0.65 of a group per route
 * (bench/ip6/path.c at 1M routes: 622,386 groups), a /48 alone in its /24
 * three. An add that finds no group is refused (`ip route add` says so). */
#include <errno.h>
#include <stdio.h>

#include "nodes/ip6/ip6_fib.h"
#include "nodes/ip6/ip6_fib_conf.h"

static const char *const fib_memory_names[] = { "auto", "hugetlb", "4k", NULL };
_Static_assert(IP6_FIB_MEM_AUTO == 0 && IP6_FIB_MEM_HUGETLB == 1 && IP6_FIB_MEM_4K == 2, "the names' order");

static const struct conf_key ip6_fib_keys[] = {
	{ .name = "fib-groups", .type = CONF_UINT, CONF_FIELD(struct ip6_fib_conf, fib_groups), .def = "65536",
	  .min = 1, .max = IP6_FIB_GROUPS_MAX,
	  .doc = "256-entry groups of the IPv6 FIB (1.25 KB each, touched as used): ~0.65 per route of a "
		 "public-table-shaped set" },
	{ .name = "fib-memory", .type = CONF_ENUM, .choices = fib_memory_names, .def = "auto",
	  CONF_FIELD(struct ip6_fib_conf, fib_memory),
	  .doc = "pages of the IPv6 FIB: auto (hugepages when free, else THP), hugetlb (required), 4k" },
	{ 0 },
};

const struct conf_section ip6_fib_conf_section = {
	.name = "ip6",
	.doc = "the IPv6 FIB: fib-groups N, fib-memory auto|hugetlb|4k",
	.size = sizeof(struct ip6_fib_conf),
	.keys = ip6_fib_keys,
};

int ip6_fib_conf_apply(const struct ip6_fib_conf *c, char *err, size_t errlen)
{
	struct ip6_fib_config fc;
	ip6_fib_config_default(&fc);
	fc.n_groups = c->fib_groups;
	fc.mem = (enum ip6_fib_mem)c->fib_memory;
	return ip6_fib_config_set_default(&fc, err, errlen);
}
