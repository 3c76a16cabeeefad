/* linux-cp's netlink listeners (lcp_nl.h): one control thread per
 * namespace holding TAPs, "sluice-nl", never a datapath thread, on the CPUs
 * of the thread that made the first pair there (CLI or start-up).
 *
 * Two sockets, made in the namespace (setns(2) there and back): "mc" joins
 * the groups and only receives notifications; "sync" joins none and only
 * carries dumps. A dump on a socket that also takes a storm of
 * notifications competes with them for its buffer, is overrun, and may
 * never end while the storm lasts; on a socket of its own it always ends
 * (the kernel writes its next part when there is room). VPP's linux-nl
 * keeps a sync socket beside its notification socket for the same reason.
 *
 * Start-up and loss are one path (resync_start): drain mc, dump links,
 * addresses, nexthop objects, routes and neighbours on sync under a new
 * generation while the notifications that arrive meanwhile are held, sweep
 * what the dump did not show, then apply the held ones in order. Each sets
 * a state (a route is its whole path, a delete its absence), so applying
 * every one from the dump's start on leaves each prefix as the last one
 * said, whatever moment the dump saw it at. A loss (ENOBUFS on mc,
 * rtnetlink(7); NLM_F_DUMP_INTR) makes the resync start again, after a
 * back-off when it was already redone. */
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
#include "nodes/lcp/lcp_nl_route.h"

/* Batches: BATCH_MAX messages, or what came in BATCH_DELAY_NS after the
 * first of a batch arrived, applied in barrier holds of a bounded budget
 * (lcp_nl_hold.c: messages and the thread's own CPU; a /16 rewrites 256
 * FIB entries, a /8 65,536: one message may cost 100 us, so a hold ends at
 * most one message past its budget). No one message costs in proportion
 * to the tables: the route stores grow by incremental rehash, a few
 * buckets per update (nodes/fib_rules.h, ip4_route_src.c, lcp_nl_route.c). */
#define BATCH_MAX 1024
#define BATCH_DELAY_NS 1000000ull
#define RECV_BYTES (256u << 10)
#define RECVS_PER_TURN 1024 /* datagrams per socket and turn, so neither starves the other */
#define LISTENERS_MAX 8
#define IDLE_POLL_MS 200
#define SYNC_RCVBUF (4u << 20)
#define HELD_MAX (256u << 20) /* notifications held during a re-dump, bytes */
#define DUMP_STALL_NS 5000000000ull
#define BACKOFF_MIN_NS 10000000ull
#define BACKOFF_MAX_NS 1000000000ull
#define DRAIN_MAX_NS 100000000ull /* one drain's turn; a storm that outlasts it: NL_BACKOFF */

/* A full dump, in order: links first (the TAPs' states), nexthop objects
 * before the routes that go through them. */
static const uint16_t dump_types[] = { RTM_GETLINK, RTM_GETADDR, RTM_GETNEXTHOP, RTM_GETROUTE, RTM_GETNEIGH };
static const uint8_t dump_hdr_len[] = { sizeof(struct ifinfomsg), sizeof(struct ifaddrmsg), sizeof(struct nhmsg),
					 sizeof(struct rtmsg), sizeof(struct ndmsg) };
#define N_DUMPS (sizeof(dump_types) / sizeof(dump_types[0]))

static const unsigned groups[] = {
	RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV4_ROUTE, RTNLGRP_NEIGH, RTNLGRP_NEXTHOP,
	RTNLGRP_IPV6_IFADDR, RTNLGRP_IPV6_ROUTE, /* counted as unsupported family until IPv6 */
};

/* LIVE: notifications applied as they come. A resync: BACKOFF (after one
 * that was redone: mc drained until a deadline), DUMP (sync's dump applied,
 * notifications held), SWEEP (in steps), then the held applied: LIVE. */
enum nl_state { NL_LIVE, NL_BACKOFF, NL_DUMP, NL_SWEEP };

struct msgbuf {
	uint8_t *p;
	size_t len, cap;
	uint32_t n;
};

struct listener {
	char netns[TAP_NETNS_SIZE];
	uint32_t id;
	pthread_t thread;
	int wake; /* eventfd: stop or resync asked */
	atomic_bool stop, resync;
	struct mnl_socket *mc;   /* the groups' notifications */
	struct mnl_socket *sync; /* dumps: joins no group, so nothing crowds them out */
	enum nl_state st;
	uint32_t seq, gen;
	int dump;           /* index into dump_types */
	bool lost;          /* this resync missed something: do it again */
	uint32_t redone;    /* resyncs redone in a row (the back-off's exponent) */
	uint64_t live_ns;   /* when the last resync converged */
	uint64_t until_ns;  /* end of the back-off */
	uint64_t dump_seen_ns;
	struct lcp_nl_sweep sweep;
	struct msgbuf batch, held;
	uint64_t batch_first_ns;
	uint8_t rx[RECV_BYTES];
};

uint32_t lcp_nl_rx_buffer = 64u << 20;
static struct listener *listeners[LISTENERS_MAX];
static uint32_t n_listeners;
static pthread_mutex_t listeners_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *ns_name(const struct listener *l)
{
	return l->netns[0] ? l->netns : "(sluice's)";
}

static int msgbuf_add(struct msgbuf *b, const struct nlmsghdr *nlh)
{
	size_t len = NLMSG_ALIGN(nlh->nlmsg_len);
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64u << 10;
		while (cap < b->len + len)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, nlh, nlh->nlmsg_len);
	b->len += len;
	b->n++;
	return 0;
}

static void msgbuf_clear(struct msgbuf *b)
{
	b->len = 0;
	b->n = 0;
}

static void resync_start(struct listener *l, const char *why);

/* ---- batches ---- */

static void max_store(_Atomic uint64_t *m, uint64_t v)
{
	if (v > *m)
		*m = v;
}

/* Apply the batch in holds within the budget (lcp_nl_hold.c). */
static void batch_flush(struct listener *l)
{
	struct lcp_nl_ctx ctx = { .netns = l->netns, .gen = l->gen };
	bool redump = lcp_nl_apply_batch(&ctx, l->batch.p, l->batch.len);
	msgbuf_clear(&l->batch);
	if (redump) {
		if (l->st == NL_LIVE)
			resync_start(l, "a nexthop group lost a member");
		else
			l->lost = true;
	}
}

static void batch_add(struct listener *l, const struct nlmsghdr *nlh)
{
	if (msgbuf_add(&l->batch, nlh)) { /* no memory: apply what is there, then once more */
		batch_flush(l);
		if (msgbuf_add(&l->batch, nlh)) {
			l->lost = true;
			return;
		}
	}
	if (l->batch.n == 1)
		l->batch_first_ns = time_now_ns();
	if (l->batch.n >= BATCH_MAX)
		batch_flush(l);
}

/* ---- dumps, on the sync socket ---- */

static int nl_send(struct mnl_socket *nl, const struct nlmsghdr *nlh)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	ssize_t n = sendto(mnl_socket_get_fd(nl), nlh, nlh->nlmsg_len, MSG_DONTWAIT, (struct sockaddr *)&to,
			   sizeof(to));
	return n < 0 ? -errno : 0;
}

static void dump_send(struct listener *l)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = dump_types[l->dump];
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++l->seq;
	l->dump_seen_ns = time_now_ns();
	/* Each request's own header, zeroed: AF_UNSPEC, no filter. */
	mnl_nlmsg_put_extra_header(nlh, dump_hdr_len[l->dump]);
	int rc = nl_send(l->sync, nlh);
	if (rc) {
		base_log("lcp-nl", "%s: dump request: %s", ns_name(l), strerror(-rc));
		l->lost = true;
	}
}

/* A full dump under a new generation; the top byte names the listener,
 * so one namespace's sweep leaves the others' routes alone. */
static void dump_start(struct listener *l)
{
	l->gen = (l->id << 24) | ((l->gen + 1) & 0xffffff);
	l->st = NL_DUMP;
	l->dump = 0;
	l->lost = false;
	msgbuf_clear(&l->held);
	dump_send(l);
}

/* Discard what mc holds, until a read finds it empty: the dump that
 * follows shows what it led to. Empty, not merely some thousands of
 * datagrams read: a netlink socket that overran drops every notification
 * silently (no second ENOBUFS) until a receive finds its queue empty (the
 * kernel's NETLINK_S_CONGESTED, net/netlink/af_netlink.c), and what a
 * drain leaves is older than the dump yet applied after it: an add whose
 * delete the overrun lost would come back (bench/lcp's 43,500 stale routes
 * at 500,000: a 64 MB queue of adds, 4,096 of them drained). True when
 * read empty; false after DRAIN_MAX_NS of a storm that refills it as fast
 * (the caller then waits in NL_BACKOFF, draining, instead of dumping). */
static bool mc_drain(struct listener *l)
{
	uint64_t t0 = time_now_ns();
	for (uint32_t i = 1;; i++) {
		/* A short buffer: the datagram is consumed whole, MSG_TRUNC'd. */
		ssize_t n = recv(mnl_socket_get_fd(l->mc), l->rx, 64, MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0 && errno == ENOBUFS) {
			lcp_nl_stats.enobufs++;
			continue;
		}
		if (n < 0 && errno != EINTR)
			return errno == EAGAIN || errno == EWOULDBLOCK;
		lcp_nl_stats.drained++;
		if ((i & 1023) == 0 && time_now_ns() - t0 >= DRAIN_MAX_NS)
			return false;
	}
}

/* A full re-dump (the file's comment), as VPP's linux-nl does after an
 * overrun. One redone waits first, 10 ms doubling to 1 s, so a storm costs
 * a dump now and then. Logged at the 1st, 2nd, 4th, 8th... */
static void resync_start(struct listener *l, const char *why)
{
	if (l->st == NL_LIVE && time_now_ns() - l->live_ns >= BACKOFF_MAX_NS)
		l->redone = 0; /* a second in step: the last storm is over */
	uint64_t n = ++lcp_nl_stats.resyncs;
	if ((n & (n - 1)) == 0)
		base_log("lcp-nl", "%s: resync %llu (%s)", ns_name(l), (unsigned long long)n, why);
	bool drained = mc_drain(l);
	msgbuf_clear(&l->batch);
	msgbuf_clear(&l->held);
	if (!l->redone && drained) {
		dump_start(l);
		return;
	}
	uint64_t wait = l->redone ? BACKOFF_MIN_NS << MIN(l->redone - 1, 10u) : 0;
	l->until_ns = time_now_ns() + MIN(wait, BACKOFF_MAX_NS);
	l->st = NL_BACKOFF;
}

/* A resync that lost messages, or an overrun soon after one converged
 * (the storm goes on): again, after a longer back-off. */
static void resync_again(struct listener *l, const char *why)
{
	lcp_nl_stats.resyncs_redone++;
	l->redone++;
	resync_start(l, why);
}

/* The running dump's DONE (or its error: no nexthop objects before Linux
 * 5.3, EOPNOTSUPP): the next, or the sweep. */
static void dump_next(struct listener *l)
{
	if (++l->dump < (int)N_DUMPS) {
		dump_send(l);
		return;
	}
	batch_flush(l);
	if (l->lost) {
		resync_again(l, "messages lost during the dump");
		return;
	}
	l->st = NL_SWEEP;
	l->sweep = (struct lcp_nl_sweep){ 0 };
}

/* One step of the sweep (one barrier hold); the last one lets the held
 * notifications through. */
static void sweep_step(struct listener *l)
{
	if (l->lost) { /* the held notifications are not whole: again */
		resync_again(l, "messages lost during the sweep");
		return;
	}
	struct lcp_nl_hold h;
	lcp_nl_hold_begin(&h);
	/* On the wall clock: at SCHED_FIFO (root) it is the thread's own time. */
	bool done = lcp_nl_sweep_step(l->gen, &l->sweep, h.t0 + lcp_nl_hold_cpu_ns);
	lcp_nl_hold_end(&h);
	if (!done)
		return;
	l->live_ns = time_now_ns();
	l->st = NL_LIVE;
	struct msgbuf b = l->batch; /* empty: the dump's were applied */
	l->batch = l->held;
	l->held = b;
	max_store(&lcp_nl_stats.held_max, l->batch.n);
	batch_flush(l);
}

static void on_sync_message(struct listener *l, const struct nlmsghdr *nlh)
{
	if (l->st != NL_DUMP || nlh->nlmsg_seq != l->seq)
		return; /* a dump given up on */
	l->dump_seen_ns = time_now_ns();
	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		l->lost = true; /* the kernel's table changed under a dump that cannot tell what it missed */
	if (nlh->nlmsg_type == NLMSG_ERROR) { /* refused: again; EOPNOTSUPP: no nexthop objects (< 5.3) */
		const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
		if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*e) || (e->error && e->error != -EOPNOTSUPP))
			l->lost = true;
	}
	if (nlh->nlmsg_type == NLMSG_DONE || nlh->nlmsg_type == NLMSG_ERROR)
		dump_next(l);
	else if (nlh->nlmsg_type >= RTM_BASE)
		batch_add(l, nlh);
}

static void on_notification(struct listener *l, const struct nlmsghdr *nlh)
{
	if (nlh->nlmsg_type < RTM_BASE)
		return;
	switch (l->st) {
	case NL_LIVE:
		batch_add(l, nlh);
		break;
	case NL_DUMP:
	case NL_SWEEP:
		if (l->held.len >= HELD_MAX || msgbuf_add(&l->held, nlh))
			l->lost = true;
		break;
	case NL_BACKOFF:
		break; /* the dump to come shows it */
	}
}

/* The notification socket overran: what was lost, a dump must show. */
static void overrun(struct listener *l)
{
	lcp_nl_stats.enobufs++;
	if (l->st != NL_LIVE)
		l->lost = true;
	else if (time_now_ns() - l->live_ns < BACKOFF_MAX_NS)
		resync_again(l, "ENOBUFS again soon after a resync");
	else
		resync_start(l, "ENOBUFS: the socket overran");
}

/* Up to RECVS_PER_TURN datagrams from one socket. */
static void receive(struct listener *l, struct mnl_socket *nl)
{
	for (int i = 0; i < RECVS_PER_TURN; i++) {
		ssize_t n = recv(mnl_socket_get_fd(nl), l->rx, sizeof(l->rx), MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS && nl == l->mc) {
			overrun(l);
			continue;
		}
		if (n <= 0)
			return;
		const struct nlmsghdr *nlh = (const void *)l->rx;
		int len = (int)n;
		for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len))
			if (nl == l->mc)
				on_notification(l, nlh);
			else
				on_sync_message(l, nlh);
	}
}

/* ---- the thread ---- */

/* Enter netns ("": stay); *back: the namespace left. */
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

/* Bind, with a receive buffer of rcvbuf bytes (SO_RCVBUFFORCE: root may pass rmem_max). */
static int sock_bind(struct mnl_socket *nl, uint32_t rcvbuf)
{
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	int sz = (int)rcvbuf;
	int fd = mnl_socket_get_fd(nl);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz)); /* not root: the sysctl's cap */
	return 0;
}

/* The sockets, made in the TAPs' namespace, which they keep for life; the
 * thread goes back to sluice's, where the mapping's calls into drivers
 * must run (af-packet opens its socket by name). */
static int sockets_open(struct listener *l)
{
	int back, rc = netns_enter(l->netns, &back);
	if (rc == 0) {
		l->mc = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
		l->sync = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
		rc = l->mc && l->sync ? 0 : -errno;
	}
	if (back >= 0) {
		if (setns(back, CLONE_NEWNET) && rc == 0)
			rc = -errno;
		close(back);
	}
	if (rc || (rc = sock_bind(l->mc, lcp_nl_rx_buffer)) || (rc = sock_bind(l->sync, SYNC_RCVBUF)))
		return rc;
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (mnl_socket_setsockopt(l->mc, NETLINK_ADD_MEMBERSHIP, (void *)&groups[i], sizeof(groups[i])))
			return -errno;
	return 0;
}

/* How long to wait, and whether for the wake fd alone: while a batch
 * fills, the thread sleeps out its delay and then reads what came at once
 * (a notification is a datagram: waking for each one would cost a system
 * call and a context switch per route, on a box whose CPUs the kernel's
 * own inserts need). */
static int poll_wait(const struct listener *l, struct timespec *ts)
{
	uint64_t ns = (uint64_t)IDLE_POLL_MS * 1000000, now = time_now_ns();
	int only_wake = 0;
	if (l->st == NL_SWEEP)
		ns = 0;
	else if (l->batch.n) {
		uint64_t waited = now - l->batch_first_ns;
		ns = waited >= BATCH_DELAY_NS ? 0 : BATCH_DELAY_NS - waited;
		only_wake = 1;
	} else if (l->st == NL_BACKOFF)
		ns = l->until_ns <= now ? 0 : MIN(l->until_ns - now, ns);
	*ts = (struct timespec){ (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	return only_wake;
}

/* One turn: whatever is due. */
static void turn(struct listener *l, const struct pollfd *p)
{
	if (p[2].revents & POLLIN) {
		uint64_t v;
		if (read(l->wake, &v, sizeof(v)) < 0)
			v = 0;
	}
	if (atomic_exchange(&l->resync, false)) {
		if (l->st == NL_LIVE)
			resync_start(l, "lcp resync");
		else
			l->lost = true; /* runs again when this one ends */
	}
	receive(l, l->mc); /* whether poll looked or not: EAGAIN costs one call */
	if (l->st == NL_BACKOFF && mc_drain(l) && time_now_ns() >= l->until_ns)
		dump_start(l); /* right after a drain that read mc empty: nothing older than the dump is left */
	receive(l, l->sync);
	if (l->st == NL_DUMP && time_now_ns() - l->dump_seen_ns > DUMP_STALL_NS) {
		l->lost = true; /* an answer gone missing (never seen): start over */
		l->dump = (int)N_DUMPS - 1;
		dump_next(l);
	}
	if (l->st == NL_SWEEP)
		sweep_step(l);
	if (l->batch.n && time_now_ns() - l->batch_first_ns >= BATCH_DELAY_NS)
		batch_flush(l);
}

static void *listener_main(void *arg)
{
	struct listener *l = arg;
	int rc = sockets_open(l);
	if (rc) {
		base_log("lcp-nl", "%s: no listener: %s", ns_name(l), strerror(-rc));
		return NULL;
	}
	dump_start(l);
	while (!atomic_load(&l->stop)) {
		struct timespec ts;
		short ev = poll_wait(l, &ts) ? 0 : POLLIN;
		struct pollfd p[3] = { { mnl_socket_get_fd(l->mc), ev, 0 },
				       { mnl_socket_get_fd(l->sync), ev, 0 },
				       { l->wake, POLLIN, 0 } };
		ppoll(p, 3, &ts, NULL);
		turn(l, p);
	}
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
	l->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rc = l->wake < 0 ? -errno : -pthread_create(&l->thread, NULL, listener_main, l);
	if (rc) {
		if (l->wake >= 0)
			close(l->wake);
		free(l);
		goto out;
	}
	pthread_setname_np(l->thread, "sluice-nl");
	listeners[n_listeners] = l;
	__atomic_store_n(&n_listeners, n_listeners + 1, __ATOMIC_RELEASE); /* the stats thread reads it unlocked */
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
		if (l->mc)
			mnl_socket_close(l->mc);
		if (l->sync)
			mnl_socket_close(l->sync);
		free(l->batch.p);
		free(l->held.p);
		free(l);
	}
	__atomic_store_n(&n_listeners, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&listeners_lock);
}

uint32_t lcp_nl_n_listeners(void)
{
	return __atomic_load_n(&n_listeners, __ATOMIC_ACQUIRE);
}

const char *lcp_nl_listener_netns(uint32_t i)
{
	return i < n_listeners ? listeners[i]->netns : "";
}
