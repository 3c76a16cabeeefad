/* The parser's view of the sections: which table fills which part of
 * struct sluice_config. Shared by the parser and the printer only. */
#ifndef SLUICE_APP_CONF_PRIVATE_H
#define SLUICE_APP_CONF_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/conf.h"

#define APP_MAX_SECTIONS 16
#define APP_MAX_BLOCKS 256 /* named blocks per section */
_Static_assert(CONF_MAX_INTERFACES <= APP_MAX_BLOCKS, "interfaces are blocks");

struct app_section {
	const struct conf_section *sec;
	size_t offset;   /* of the section's struct in struct sluice_config */
	bool interfaces; /* blocks take their keys from the driver registry */
};

/* Keys every interface block takes besides its driver's (offsets into
 * struct conf_interface), such as `l2-xconnect PEER`. */
extern const struct conf_key app_interface_keys[];

/* In the order --check prints them. */
extern const struct app_section app_sections[];
extern const size_t app_n_sections;

/* The section called name, or NULL. */
const struct app_section *app_section_find(const char *name);

#endif
