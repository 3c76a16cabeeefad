/* startup.conf's ip6 section (ip6_fib_conf.c): the size and pages of the
 * main IPv6 FIB, set before the first IPv6 address or route makes it. */
#ifndef SLUICE_NODES_IP6_FIB_CONF_H
#define SLUICE_NODES_IP6_FIB_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "base/conf.h"

struct ip6_fib_conf {
	uint32_t fib_groups; /* 256-entry groups (ip6_fib_config.n_groups) */
	uint32_t fib_memory; /* enum ip6_fib_mem: auto, hugetlb, 4k */
};

extern const struct conf_section ip6_fib_conf_section;

/* Make c the main FIB's configuration (ip6_fib_config_set_default). 0, or
 * -EINVAL with the reason in err. */
int ip6_fib_conf_apply(const struct ip6_fib_conf *c, char *err, size_t errlen);

#endif
