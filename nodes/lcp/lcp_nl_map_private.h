/* Shared by the netlink mapping's files (lcp_nl_map.c: routes and nexthop
 * objects; lcp_nl_link.c: addresses, neighbours, links): the attribute
 * parser, the counting of what maps and what does not, and the TAP ->
 * port lookup. Barrier held for all of it. */
#ifndef SLUICE_NODES_LCP_LCP_NL_MAP_PRIVATE_H
#define SLUICE_NODES_LCP_LCP_NL_MAP_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

#include "nodes/lcp/lcp_nl.h"

#define LCP_NL_ATTR_MAX 64 /* above every RTA_, IFA_, NDA_, NHA_, IFLA_ we read */

/* A message's attributes by type (the last of a type wins). */
struct lcp_nl_attrs {
	const struct nlattr *tb[LCP_NL_ATTR_MAX];
};

/* mnl_attr_parse callback: a into the struct lcp_nl_attrs at data. */
int lcp_nl_attr_cb(const struct nlattr *a, void *data);

/* The message's fixed header (hdrlen bytes, a multiple of 4 for every
 * rtnetlink header) with its attributes in at, or NULL when it is too short
 * or an attribute runs past the end. */
const void *lcp_nl_parse(const struct nlmsghdr *nlh, size_t hdrlen, struct lcp_nl_attrs *at);

/* A u32 attribute, checked for its size: false when absent or bad. */
bool lcp_nl_get_u32(const struct lcp_nl_attrs *at, int type, uint32_t *v);

/* Count (and log once per reason) a message that does not map: false. */
bool lcp_nl_ignore(enum lcp_nl_ignore why, const char *detail);

/* Count a message that mapped: true. */
bool lcp_nl_applied(void);

/* The port whose TAP is Linux's ifindex in ctx's netns, or DEV_INDEX_INVALID. */
uint32_t lcp_nl_phy_of_ifindex(const struct lcp_nl_ctx *ctx, uint32_t ifindex);

/* RTM_NEWADDR/DELADDR, RTM_NEWNEIGH/DELNEIGH, RTM_NEWLINK/DELLINK of a TAP. */
bool lcp_nl_map_addr(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh);
bool lcp_nl_map_neigh(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh);
bool lcp_nl_map_link(const struct lcp_nl_ctx *ctx, const struct nlmsghdr *nlh);

/* Forget the addresses Linux gave and the TAPs' link states. */
void lcp_nl_link_reset(void);

#endif
