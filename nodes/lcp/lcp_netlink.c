/* linux-cp's netlink listeners (lcp_nl.h): one control thread per
 * namespace holding TAPs, "sluice-nl", never a datapath thread. It
 * inherits the CPUs of the thread that made the first pair there (the CLI
 * or start-up's linux-cp stage, both on the control CPUs).
 *
 * Start-up, as rtnetlink(7) clients must to miss nothing: setns(2) into
 * the namespace, open the socket there (it stays the namespace's), go back,
 * subscribe to the groups, then dump links, addresses,
 * routes, neighbours and nexthop objects one after the other on the same
 * socket. Notifications that arrive during the dump come in the socket's
 * order with the dump's messages and are applied in that order; every
 * mapping is idempotent (an add of what is there, a delete of what is not,
 * change nothing), so a message seen twice does no harm.
 *
 * Loss: a notification the kernel could not queue makes recv() fail with
 * ENOBUFS; a dump the kernel saw change under it carries NLM_F_DUMP_INTR.
 * Either starts a resync: a new generation, a full dump that marks what it
 * shows, then a sweep of the Linux routes and addresses not marked. The
 * receive buffer is made large (SO_RCVBUFFORCE, root) to make that rare.
 *
 * Batches: messages are applied under the graph barrier, at most
 * BATCH_MAX per barrier and no later than BATCH_DELAY_NS after the first
 * of a batch arrived, so a full table costs one short hold per 256 routes,
 * not one per route, and one route waits at most a millisecond. */
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/util.h"
#include "graph/graph.h"
#include "nodes/lcp/lcp.h"
#include "nodes/lcp/lcp_nl.h"

#define BATCH_MAX 256
#define BATCH_DELAY_NS 1000000ull
#define RECV_BYTES (256u << 10)
#define LISTENERS_MAX 8
#define IDLE_POLL_MS 200
#define DUMP_NUDGE_MS 50
#define NUDGE_SEQ 0xffffffffu
#define DUMP_STALL_NS 1000000000ull

/* What a full dump asks for, in order: links first so that the TAPs'
 * states are known before anything refers to them. */
static const uint16_t dump_types[] = { RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE, RTM_GETNEIGH, RTM_GETNEXTHOP };
static const uint8_t dump_hdr_len[] = { sizeof(struct ifinfomsg), sizeof(struct ifaddrmsg), sizeof(struct rtmsg),
					 sizeof(struct ndmsg), sizeof(struct nhmsg) };
#define N_DUMPS (sizeof(dump_types) / sizeof(dump_types[0]))

static const unsigned groups[] = {
	RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV4_ROUTE, RTNLGRP_NEIGH, RTNLGRP_NEXTHOP,
	RTNLGRP_IPV6_IFADDR, RTNLGRP_IPV6_ROUTE, /* counted as unsupported family until IPv6 */
};

struct listener {
	char netns[TAP_NETNS_SIZE];
	uint32_t id;
	pthread_t thread;
	int wake; /* eventfd: stop or resync asked */
	atomic_bool stop, resync;
	struct mnl_socket *nl;
	uint32_t seq, gen;
	int dump;        /* index into dump_types, -1: no dump running */
	bool dump_intr;  /* the running dump saw NLM_F_DUMP_INTR */
	bool sweep_due;  /* a full dump ended: sweep with the next batch */
	uint64_t dump_seen_ns; /* the running dump's last message (or request) */
	uint8_t *batch;
	size_t batch_len, batch_cap;
	uint32_t batch_n;
	uint64_t batch_first_ns;
	uint8_t rx[RECV_BYTES];
};

uint32_t lcp_nl_rx_buffer = 64u << 20;
static struct listener *listeners[LISTENERS_MAX];
static uint32_t n_listeners;
static pthread_mutex_t listeners_lock = PTHREAD_MUTEX_INITIALIZER;

static void resync_start(struct listener *l, const char *why);

/* ---- batches ---- */

static void batch_flush(struct listener *l)
{
	if (!l->batch_n && !l->sweep_due)
		return;
	struct graph *g = dev_graph();
	struct lcp_nl_ctx ctx = { .netns = l->netns, .gen = l->gen };
	if (g)
		graph_barrier_sync(g);
	for (size_t off = 0; off < l->batch_len;) {
		const struct nlmsghdr *nlh = (const void *)(l->batch + off);
		lcp_nl_apply(&ctx, nlh);
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	if (l->sweep_due)
		lcp_nl_sweep(l->gen);
	if (g)
		graph_barrier_release(g);
	lcp_nl_stats.batches += l->batch_n > 0;
	if (l->batch_n > lcp_nl_stats.max_batch)
		lcp_nl_stats.max_batch = l->batch_n;
	l->batch_len = 0;
	l->batch_n = 0;
	l->sweep_due = false;
	if (lcp_nl_redump_wanted) {
		lcp_nl_redump_wanted = false;
		resync_start(l, "a nexthop object changed");
	}
}

static void batch_add(struct listener *l, const struct nlmsghdr *nlh)
{
	size_t len = NLMSG_ALIGN(nlh->nlmsg_len);
	if (l->batch_len + len > l->batch_cap) {
		size_t cap = l->batch_cap ? l->batch_cap * 2 : 64u << 10;
		while (cap < l->batch_len + len)
			cap *= 2;
		uint8_t *b = realloc(l->batch, cap);
		if (!b) { /* apply what is there and try once more with room */
			batch_flush(l);
			if (len > l->batch_cap)
				return;
		} else {
			l->batch = b;
			l->batch_cap = cap;
		}
	}
	memcpy(l->batch + l->batch_len, nlh, nlh->nlmsg_len);
	if (!l->batch_n)
		l->batch_first_ns = time_now_ns();
	l->batch_len += len;
	if (++l->batch_n >= BATCH_MAX)
		batch_flush(l);
}

/* ---- dumps ---- */

/* To the kernel, never waiting: a blocking send would wait, when the
 * answer does not fit, for room in this very socket, which only this
 * thread empties. */
static int nl_send(struct listener *l, const struct nlmsghdr *nlh)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	ssize_t n = sendto(mnl_socket_get_fd(l->nl), nlh, nlh->nlmsg_len, MSG_DONTWAIT, (struct sockaddr *)&to,
			   sizeof(to));
	return n < 0 ? -errno : 0;
}

static int dump_send(struct listener *l)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = dump_types[l->dump];
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++l->seq;
	l->dump_seen_ns = time_now_ns();
	/* Each request's own header, zeroed: family AF_UNSPEC (both families;
	 * IPv6 is counted as unsupported), no filter. */
	mnl_nlmsg_put_extra_header(nlh, dump_hdr_len[l->dump]);
	return nl_send(l, nlh);
}

/* A full dump under a new generation (start-up, resync). */
static void dump_start(struct listener *l)
{
	/* The top byte names the listener: one namespace's sweep leaves the
	 * others' routes alone. */
	l->gen = (l->id << 24) | ((l->gen + 1) & 0xffffff);
	l->dump = 0;
	l->dump_intr = false;
	int rc = dump_send(l);
	if (rc)
		base_log("lcp-nl", "%s: dump request: %s", l->netns[0] ? l->netns : "(sluice's)", strerror(-rc));
}

/* A full re-dump; one that is running is restarted when it ends (the
 * kernel runs one dump per socket at a time), so a burst that keeps
 * overrunning costs one dump after another, not a storm. Logged at the
 * 1st, 2nd, 4th, 8th... resync. */
static void resync_start(struct listener *l, const char *why)
{
	if (l->dump >= 0) {
		l->dump_intr = true;
		return;
	}
	uint64_t n = ++lcp_nl_stats.resyncs;
	if ((n & (n - 1)) == 0)
		base_log("lcp-nl", "%s: resync %llu (%s)", l->netns[0] ? l->netns : "(sluice's)", (unsigned long long)n,
			 why);
	dump_start(l);
}

/* The running dump's DONE (or its error: an old kernel without nexthop
 * objects answers EOPNOTSUPP): the next, or the end of all. */
static void dump_next(struct listener *l)
{
	if (++l->dump < (int)N_DUMPS) {
		dump_send(l);
		return;
	}
	l->dump = -1;
	if (l->dump_intr)
		resync_start(l, "dump interrupted or overrun");
	else
		l->sweep_due = true;
}

/* A dump the kernel could not continue (its next part found the receive
 * buffer full: netlink_dump() then waits for the next recvmsg(), which an
 * empty queue never reaches) continues when something arrives: ask for
 * one link (lo) and drop the answer. Only tiny buffers get there. */
static void dump_nudge(struct listener *l)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = NUDGE_SEQ;
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = 1;
	nl_send(l, nlh);
}

static void on_message(struct listener *l, const struct nlmsghdr *nlh)
{
	if (nlh->nlmsg_seq == NUDGE_SEQ)
		return;
	bool ours = l->dump >= 0 && nlh->nlmsg_seq == l->seq;
	if (ours) {
		l->dump_seen_ns = time_now_ns();
		if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
			l->dump_intr = true;
	}
	if (nlh->nlmsg_type == NLMSG_ERROR && ours) {
		/* A dump refused (EBUSY, ENOBUFS: the buffer was full when it
		 * began) must be done again; EOPNOTSUPP is a kernel without
		 * that kind (nexthop objects before Linux 5.3): nothing to miss. */
		const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
		if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*e) || (e->error && e->error != -EOPNOTSUPP))
			l->dump_intr = true;
	}
	if (nlh->nlmsg_type == NLMSG_DONE || nlh->nlmsg_type == NLMSG_ERROR) {
		if (ours)
			dump_next(l);
		return;
	}
	if (nlh->nlmsg_type >= RTM_BASE)
		batch_add(l, nlh);
}

static void receive(struct listener *l)
{
	for (;;) {
		ssize_t n = recv(mnl_socket_get_fd(l->nl), l->rx, sizeof(l->rx), MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS) {
			lcp_nl_stats.enobufs++;
			resync_start(l, "ENOBUFS: the socket overran");
			continue;
		}
		if (n <= 0)
			return;
		const struct nlmsghdr *nlh = (const void *)l->rx;
		int len = (int)n;
		for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len))
			on_message(l, nlh);
	}
}

/* ---- the thread ---- */

/* Enter netns ("": stay), keeping a handle on the namespace left in *back. */
static int netns_enter(const char *netns, int *back)
{
	*back = -1;
	if (!netns[0])
		return 0;
	char path[128];
	snprintf(path, sizeof(path), "/var/run/netns/%s", netns);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	*back = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	int rc = fd < 0 || *back < 0 || setns(fd, CLONE_NEWNET) ? -errno : 0;
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The socket, made in the TAPs' namespace, which it keeps for life; the
 * thread then goes back to sluice's, where the mapping's calls into the
 * drivers (a port's admin state: af-packet opens its socket by name) must
 * run. */
static int socket_open(struct listener *l)
{
	int back, rc = netns_enter(l->netns, &back);
	if (rc == 0) {
		l->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
		rc = l->nl ? 0 : -errno;
	}
	if (back >= 0) {
		if (setns(back, CLONE_NEWNET) && rc == 0)
			rc = -errno;
		close(back);
	}
	if (rc)
		return rc;
	if (mnl_socket_bind(l->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	int sz = (int)lcp_nl_rx_buffer;
	int fd = mnl_socket_get_fd(l->nl);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz)); /* not root: the sysctl's cap */
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (mnl_socket_setsockopt(l->nl, NETLINK_ADD_MEMBERSHIP, (void *)&groups[i], sizeof(groups[i])))
			return -errno;
	return 0;
}

static int poll_timeout_ms(const struct listener *l)
{
	if (!l->batch_n && !l->sweep_due)
		return l->dump >= 0 ? DUMP_NUDGE_MS : IDLE_POLL_MS;
	uint64_t waited = time_now_ns() - l->batch_first_ns;
	return waited >= BATCH_DELAY_NS || l->sweep_due ? 0 : 1;
}

static void *listener_main(void *arg)
{
	struct listener *l = arg;
	int rc = socket_open(l);
	if (rc) {
		base_log("lcp-nl", "%s: no listener: %s", l->netns[0] ? l->netns : "(sluice's)", strerror(-rc));
		return NULL;
	}
	dump_start(l);
	while (!atomic_load(&l->stop)) {
		struct pollfd p[2] = { { mnl_socket_get_fd(l->nl), POLLIN, 0 }, { l->wake, POLLIN, 0 } };
		poll(p, 2, poll_timeout_ms(l));
		if (p[1].revents & POLLIN) {
			uint64_t v;
			if (read(l->wake, &v, sizeof(v)) < 0)
				v = 0;
		}
		if (atomic_exchange(&l->resync, false) && l->dump < 0)
			resync_start(l, "lcp resync");
		if (p[0].revents & POLLIN)
			receive(l);
		else if (l->dump >= 0 && !l->batch_n)
			dump_nudge(l); /* a quiet poll in the middle of a dump */
		if (l->dump >= 0 && time_now_ns() - l->dump_seen_ns > DUMP_STALL_NS) {
			/* Its answer was lost (a full buffer drops even the error
			 * that says the dump did not start): start again. */
			l->dump = -1;
			resync_start(l, "dump stalled");
		}
		if (l->sweep_due || (l->batch_n && time_now_ns() - l->batch_first_ns >= BATCH_DELAY_NS))
			batch_flush(l);
	}
	mnl_socket_close(l->nl);
	return NULL;
}

int lcp_nl_start(const char *netns)
{
	pthread_mutex_lock(&listeners_lock);
	int rc = 0;
	for (uint32_t i = 0; i < n_listeners; i++)
		if (!strcmp(listeners[i]->netns, netns))
			goto out;
	rc = -ENOSPC;
	if (n_listeners == LISTENERS_MAX)
		goto out;
	rc = -ENOMEM;
	struct listener *l = calloc(1, sizeof(*l));
	if (!l)
		goto out;
	snprintf(l->netns, sizeof(l->netns), "%s", netns);
	l->id = n_listeners;
	l->dump = -1;
	l->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rc = l->wake < 0 ? -errno : -pthread_create(&l->thread, NULL, listener_main, l);
	if (rc) {
		if (l->wake >= 0)
			close(l->wake);
		free(l);
		goto out;
	}
	pthread_setname_np(l->thread, "sluice-nl");
	listeners[n_listeners++] = l;
out:
	pthread_mutex_unlock(&listeners_lock);
	return rc;
}

static void wake(struct listener *l)
{
	uint64_t one = 1;
	if (write(l->wake, &one, sizeof(one)) < 0)
		base_log("lcp-nl", "wake: %s", strerror(errno));
}

uint32_t lcp_nl_resync(void)
{
	pthread_mutex_lock(&listeners_lock);
	for (uint32_t i = 0; i < n_listeners; i++) {
		atomic_store(&listeners[i]->resync, true);
		wake(listeners[i]);
	}
	uint32_t n = n_listeners;
	pthread_mutex_unlock(&listeners_lock);
	return n;
}

void lcp_nl_stop_all(void)
{
	pthread_mutex_lock(&listeners_lock);
	for (uint32_t i = 0; i < n_listeners; i++) {
		struct listener *l = listeners[i];
		atomic_store(&l->stop, true);
		wake(l);
		pthread_join(l->thread, NULL);
		close(l->wake);
		free(l->batch);
		free(l);
	}
	n_listeners = 0;
	pthread_mutex_unlock(&listeners_lock);
}

uint32_t lcp_nl_n_listeners(void)
{
	return n_listeners;
}

const char *lcp_nl_listener_netns(uint32_t i)
{
	return i < n_listeners ? listeners[i]->netns : "";
}
