/* sluice: read startup.conf (loading the plugins its plugins section
 * enables, docs/plugins.md), start the data plane in a fixed order (config,
 * buffers, interfaces, graph, threads, cli) with one log line per stage, run
 * the main thread's loop, and on SIGINT/SIGTERM shut down in reverse: stop
 * the CLI and the inputs, drain every frame, stop the workers, log node
 * counters and buffer accounting, and return every buffer.
 *
 *   sluice [-c FILE]            run (the embedded default without -c)
 *   sluice --check [-c FILE]    print the effective configuration, or the error
 *   (a lone FILE argument is taken as -c FILE)
 *
 * Under systemd (Type=notify, app/sluice.service.in) it sends READY=1 once
 * the graph runs and the CLI listens, and STOPPING=1 as shutdown begins.
 *
 * Exit status: 0 after a clean shutdown or a good --check, 1 when a start-up
 * stage fails, 2 for a configuration error (nothing was started).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef SLUICE_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "app/app_cli.h"
#include "app/conf.h"
#include "app/exit_report.h"
#include "app/plugin_loader.h"
#include "app/statseg.h"
#include "app/statseg_http.h"
#include "cli/cli.h"
#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/dist/dist_graph.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip6/ip6_route.h"
#include "nodes/lcp/lcp_nl.h"
#include "nodes/pg/pg.h"
#include "nodes/sched/sched_io.h"
#include "sched/timer.h"

#define EXIT_CONFIG 2

struct app {
	struct sluice_config cfg;
	struct graph *g;
	struct dist *dist; /* distributor { enable } with workers */
	FILE *log;
	bool buffers_up, pg_attached, cli_up, pidfile_written, timers_up, statseg_up;
	uint32_t n_devs; /* interfaces created, in config order */
	char err[1024]; /* the failing stage's reason, for its log line */
};

static atomic_bool stop_requested;
static volatile sig_atomic_t n_signals;
static struct graph_thread *_Atomic signal_wakes; /* thread 0, asleep in epoll_wait perhaps */

/* The first signal asks the main loop to stop; a second one means the
 * shutdown itself is stuck, so leave at once. */
static void on_signal(int sig)
{
	if (n_signals++)
		_exit(128 + sig);
	atomic_store(&stop_requested, true);
	struct graph_thread *t = atomic_load(&signal_wakes);
	if (t)
		graph_thread_kick(t, GRAPH_WAKE_CONTROL); /* async-signal-safe */
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); /* CLI clients that hang up must not kill us */
}

static void usage(FILE *f)
{
	fprintf(f, "usage: sluice [[-c] FILE]\n"
		   "       sluice --check [[-c] FILE]\n"
		   "  -c, --config FILE  startup configuration (default: the built-in one)\n"
		   "      --check        print the effective configuration and exit (2 on error)\n");
}

/* Tell systemd (NOTIFY_SOCKET) where start-up is; nothing without it. */
static void notify_systemd(const char *state)
{
#ifdef SLUICE_HAVE_LIBSYSTEMD
	sd_notify(0, state);
#else
	(void)state;
#endif
}

/* ---- config ---- */

static void log_conf_msg(const struct app_conf_msg *m, const char *kind)
{
	char line[1024];
	app_conf_msg_format(m, kind, line, sizeof(line));
	base_log("config", "%s", line);
}

/* Parse the file (or the default); on error the message is logged exactly
 * as --check prints it. */
static int load_config(struct sluice_config *cfg, const char *path)
{
	struct app_conf_msg err;
	int rc = path ? sluice_config_load(cfg, path, &err)
		      : sluice_config_parse(cfg, "(default)", app_conf_default_text, &err);
	if (rc) {
		log_conf_msg(&err, "error");
		return rc;
	}
	for (uint32_t i = 0; i < cfg->n_warnings; i++)
		log_conf_msg(&cfg->warnings[i], "warning");
	return 0;
}

static int check_config(struct sluice_config *cfg, const char *path)
{
	if (load_config(cfg, path))
		return EXIT_CONFIG;
	char *text = sluice_config_format(cfg);
	if (!text) {
		base_log("config", "out of memory");
		return 1;
	}
	fputs(text, stdout);
	free(text);
	return 0;
}

/* ---- daemon ---- */

/* Detach from the terminal: fork twice around setsid so the daemon can
 * never reacquire one. The working directory is kept so that relative
 * paths in the configuration keep meaning what they meant. */
static int daemonize(struct app *a)
{
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	setsid();
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	int fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		if (a->log) /* the log file has the lines from now on */
			dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	return 0;
}

static int open_log(struct app *a)
{
	const char *path = a->cfg.unix_conf.log;
	if (!path[0])
		return 0;
	a->log = fopen(path, "a");
	if (!a->log) {
		snprintf(a->err, sizeof(a->err), "log %s: %s", path, strerror(errno));
		return -errno;
	}
	setvbuf(a->log, NULL, _IOLBF, 0);
	base_log_set_file(a->log);
	return 0;
}

static int write_pidfile(struct app *a)
{
	const char *path = a->cfg.unix_conf.pidfile;
	if (!path[0])
		return 0;
	FILE *f = fopen(path, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0) {
		snprintf(a->err, sizeof(a->err), "pidfile %s: %s", path, strerror(errno));
		return -errno;
	}
	a->pidfile_written = true;
	return 0;
}

static int stage_process(struct app *a)
{
	int rc = open_log(a);
	if (rc == 0 && a->cfg.unix_conf.daemon && (rc = daemonize(a)) != 0)
		snprintf(a->err, sizeof(a->err), "daemon: %s", strerror(-rc));
	if (rc == 0)
		rc = write_pidfile(a);
	return rc;
}

/* ---- start-up stages ---- */

static int stage_buffers(struct app *a)
{
	int rc = buffer_main_init(&a->cfg.buffers, a->err, sizeof(a->err));
	if (rc)
		return rc;
	a->buffers_up = true; /* buffer_main_init logged the stage's line */
	return 0;
}

/* Create every interface (admin down until the threads run). An error
 * names the block's line so that a person can find it in the file. */
static int stage_interfaces(struct app *a)
{
	const struct conf_interfaces *ifs = &a->cfg.interfaces;
	char why[256], names[256] = "";
	size_t off = 0;
	/* Before the first IPv6 address makes the FIB (the ip6 section). */
	if (ip6_fib_conf_apply(&a->cfg.ip6, why, sizeof(why))) {
		snprintf(a->err, sizeof(a->err), "%s: ip6: %s", a->cfg.file, why);
		return -EINVAL;
	}
	/* Before any interface starts: af-packet picks its ring by the mode. */
	static const enum dev_rx_mode rx_modes[] = { [GRAPH_CONF_RX_POLLING] = DEV_RX_MODE_POLLING,
						     [GRAPH_CONF_RX_INTERRUPT] = DEV_RX_MODE_INTERRUPT,
						     [GRAPH_CONF_RX_ADAPTIVE] = DEV_RX_MODE_ADAPTIVE };
	dev_rx_mode_set_default(rx_modes[a->cfg.cpu.rx_mode]);
	for (uint32_t i = 0; i < ifs->n; i++) {
		const struct conf_interface *ifc = &ifs->ifs[i];
		struct device *dev = dev_create_conf(ifc->name, ifc->driver, ifc->driver_conf, why, sizeof(why));
		if (!dev) {
			snprintf(a->err, sizeof(a->err), "%s:%u: interface %s: %s", a->cfg.file, ifc->line, ifc->name,
				 why);
			return -EINVAL;
		}
		dev_set_rx_burst(dev, ifc->rx_burst); /* in range: the parser checked it */
		if (ifc->rx_mode != DEV_RX_MODE_DEFAULT)
			(void)dev_set_rx_mode(dev, -1, (enum dev_rx_mode)ifc->rx_mode); /* a choice the parser checked */
		if (app_ip6_addresses(ifc, dev->index, why, sizeof(why)) || app_ip6_ra(ifc, dev->index, why, sizeof(why)) ||
		    app_interface_features(ifc, dev->index, why, sizeof(why))) {
			snprintf(a->err, sizeof(a->err), "%s:%u: interface %s: %s", a->cfg.file, ifc->line, ifc->name,
				 why);
			return -EINVAL;
		}
		a->n_devs++;
		if (off < sizeof(names))
			off += (size_t)snprintf(names + off, sizeof(names) - off, " %s", ifc->name);
	}
	/* Cross-connects once every interface exists; the parser checked
	 * that each names another interface of the section. */
	for (uint32_t i = 0; i < ifs->n; i++) {
		const struct conf_interface *ifc = &ifs->ifs[i];
		if (ifc->l2_xconnect[0] && dev_set_xconnect(dev_by_name(ifc->name), dev_by_name(ifc->l2_xconnect))) {
			snprintf(a->err, sizeof(a->err), "%s:%u: interface %s: cannot cross-connect to %s",
				 a->cfg.file, ifc->line, ifc->name, ifc->l2_xconnect);
			return -EINVAL;
		}
	}
	base_log("interfaces", "%u created%s", ifs->n, ifs->n ? names : "");
	return 0;
}

/* Place rx queues round-robin on the workers (thread 0 when there are
 * none, or when thread 0 is the distributor's rx thread), then bring every
 * interface up. */
static int devices_up(struct app *a, uint32_t n_workers)
{
	const struct conf_interfaces *ifs = &a->cfg.interfaces;
	if (a->dist)
		n_workers = 0;
	/* The workers already poll their lists: rebuilding them frees the old
	 * ones, so the workers are parked meanwhile, as for the CLI's
	 * set interface rx-placement. */
	graph_barrier_sync(a->g);
	int rc = dev_rx_placement_round_robin(n_workers ? 1 : 0, n_workers);
	graph_barrier_release(a->g);
	for (uint32_t i = 0; rc == 0 && i < a->n_devs; i++) {
		rc = dev_set_admin_up(dev_by_name(ifs->ifs[i].name), true);
		if (rc)
			snprintf(a->err, sizeof(a->err), "interface %s: %s", ifs->ifs[i].name, strerror(-rc));
	}
	return rc;
}

static int stage_graph(struct app *a)
{
	struct graph_config gc;
	graph_config_from_conf(&gc, &a->cfg.cpu, &a->cfg.trace);
	gc.elog_size = a->cfg.elog.size; /* event-logger { size N } */
	a->g = graph_create(&gc, a->err, sizeof(a->err));
	if (!a->g)
		return -ENOMEM;
	int rc = graph_add_registered(a->g, a->err, sizeof(a->err));
	if (rc == 0)
		rc = graph_build(a->g, a->err, sizeof(a->err));
	if (rc == 0) /* arcs to the tx nodes of the interfaces made so far and later */
		rc = dev_graph_attach(a->g, a->err, sizeof(a->err));
	if (rc == 0 && (rc = pg_attach(a->g, a->err, sizeof(a->err))) == 0)
		a->pg_attached = true;
	if (rc == 0)
		rc = pg_conf_apply(&a->cfg.pg, a->err, sizeof(a->err));
	if (rc == 0 && a->cfg.trace.start_count)
		rc = graph_trace_add(a->g, a->cfg.trace.start_node, a->cfg.trace.start_count, a->err,
				     sizeof(a->err));
	if (rc == 0)
		base_log("graph", "%u nodes, %u generator stream(s)", graph_n_nodes(a->g), pg_stream_count());
	return rc;
}

/* A core that exists but that this process may not use (a container's
 * cpuset) costs placement, not correctness: warn and run unpinned. */
static void pin_main_thread(struct app *a)
{
	char err[256];
	if (graph_main_pin(a->g, (int)a->cfg.cpu.main_core, err, sizeof(err)))
		base_log("threads", "warning: %s", err);
}

/* The control threads (the watchdog; from linux-cp on sluice-tap, the stats
 * writer, /metrics, the CLI's) inherit the starting thread's CPUs: while
 * they start it runs on the CPUs no datapath thread uses, not main-core,
 * where they would take the datapath's time on a box with a core to spare. */
static void control_cpus(struct app *a, bool on)
{
	cpu_set_t set;
	if (!on) {
		pin_main_thread(a);
		return;
	}
	graph_cpu_config_control(&a->cfg.cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* distributor { enable }: thread 0 becomes the rx thread and hands every
 * packet to the workers. Without workers there is nobody to hand to: the
 * main thread runs the whole graph as before. */
static int start_distributor(struct app *a, uint32_t n_workers)
{
	const struct dist_conf *c = &a->cfg.dist;
	if (!c->enable)
		return 0;
	if (!n_workers) {
		base_log("distributor", "warning: enabled without workers; the main thread runs the whole graph");
		return 0;
	}
	struct dist_config dc = { .n_workers = n_workers, .backlog = c->backlog, .ring_lines = c->ring_lines };
	a->dist = dist_create(&dc, a->err, sizeof(a->err));
	if (!a->dist)
		return -ENOMEM;
	int rc = dist_graph_attach(a->g, a->dist, a->err, sizeof(a->err));
	if (rc == 0)
		base_log("distributor", "main thread receives for %u worker(s): backlog %u, rings of %u lines",
			  n_workers, c->backlog, c->ring_lines);
	return rc;
}

/* Hand out what the rx thread holds and wait (1 s at most) for the workers
 * to finish it, then, once they have stopped, take back what they never
 * got: every packet is sent or counted. */
static void drain_distributor(struct app *a)
{
	uint64_t left = dist_graph_drain(a->g, a->dist, 1000000000ull);
	if (left)
		base_log("distributor", "%llu packet(s) still with the workers after 1 s", (unsigned long long)left);
}

static void stop_distributor(struct app *a)
{
	uint64_t n = dist_graph_detach(a->g, a->dist);
	if (n)
		base_log("distributor", "%llu packet(s) dropped at shutdown (never reached a worker)",
			  (unsigned long long)n);
	dist_free(a->dist);
	a->dist = NULL;
}

static int stage_threads(struct app *a)
{
	int cpus[GRAPH_MAX_THREADS];
	uint32_t n = graph_cpu_config_workers(&a->cfg.cpu, cpus, ARRAY_LEN(cpus));
	pin_main_thread(a);
	int rc = n ? graph_workers_start(a->g, cpus, n, a->err, sizeof(a->err)) : 0;
	if (rc == 0)
		rc = start_distributor(a, n);
	if (rc == 0)
		rc = devices_up(a, n);
	if (rc == 0) { /* the watchdog is a control thread: off the datapath's CPUs */
		control_cpus(a, true);
		rc = graph_watchdog_start(a->g, a->cfg.cpu.stall_warn_ns, a->err, sizeof(a->err));
		control_cpus(a, false);
	}
	if (rc)
		return rc;
	char list[128];
	struct conf_key k = { .type = CONF_CPULIST, .offset = offsetof(struct graph_cpu_config, corelist_workers) };
	struct graph_cpu_config placed = { .corelist_workers.n = (uint16_t)n };
	for (uint32_t i = 0; i < n; i++)
		placed.corelist_workers.cpu[i] = (uint16_t)cpus[i];
	conf_value_format(&k, &placed, list, sizeof(list));
	base_log("threads", "main on core %u, %u worker(s)%s%s", a->cfg.cpu.main_core, n, n ? " on cores " : "",
		  list);
	return 0;
}

/* One timer service per datapath thread, run from the loop hook; after
 * the workers started, since each service belongs to a running thread. */
static int stage_timers(struct app *a)
{
	const struct timer_config *c = &a->cfg.sched;
	int rc = timer_services_install(a->g, c, a->err, sizeof(a->err));
	if (rc)
		return rc;
	a->timers_up = true;
	sched_io_set_max_held(a->cfg.sched.max_held);
	sched_io_set_class_depth(a->cfg.sched.class_depth);
	base_log("timers", "%u service(s): tick %lluns, %u levels, %u timers each", graph_n_threads(a->g),
		  (unsigned long long)c->tick_ns, c->levels, c->max_timers);
	return 0;
}

/* sched-classes and the interfaces' shapers (app/sched_conf.h): after the
 * timer services, which the shapers' releases run on, and before the main
 * loop produces a packet; with workers, after the distributor, so the
 * classes' queues in front of it are made. */
static int stage_sched(struct app *a)
{
	uint32_t n_shapers;
	int rc = app_sched_apply(a->g, &a->cfg.sched_classes, &a->cfg.interfaces, &n_shapers, a->err,
				 sizeof(a->err));
	if (rc == 0 && (a->cfg.sched_classes.n_classes || n_shapers))
		base_log("sched", "%u class(es), %u shaped interface(s)", a->cfg.sched_classes.n_classes, n_shapers);
	return rc;
}

/* linux-cp's pairs (docs/lcp.md), once the threads run: a TAP gets one tx
 * ring per datapath thread. */
static int stage_lcp(struct app *a)
{
	int rc = lcp_conf_apply(&a->cfg.lcp, a->err, sizeof(a->err));
	if (rc == 0 && a->cfg.lcp.n_pairs)
		base_log("linux-cp", "%u pair(s)", a->cfg.lcp.n_pairs);
	return rc;
}

/* The stats segment (docs/stats-segment.md): its socket follows the CLI
 * socket's mode and group. */
static int stage_statseg(struct app *a)
{
	const struct app_unix_config *u = &a->cfg.unix_conf;
	struct statseg_start_config sc = { .conf = &a->cfg.statseg, .cli_listen = u->cli_listen,
					   .socket_mode = (mode_t)u->cli_mode, .socket_group = u->cli_group, .g = a->g };
	int rc = statseg_start(&sc, a->err, sizeof(a->err));
	a->statseg_up = rc == 0;
	return rc ? rc : statseg_http_start(&a->cfg.statseg, statseg_reader_fd(), a->err, sizeof(a->err));
}

static int stage_cli(struct app *a)
{
	struct cli_server_config cc;
	cli_server_config_default(&cc);
	const struct app_unix_config *u = &a->cfg.unix_conf;
	snprintf(cc.listen, sizeof(cc.listen), "%s", u->cli_listen);
	cc.socket_mode = (mode_t)u->cli_mode;
	snprintf(cc.socket_group, sizeof(cc.socket_group), "%s", u->cli_group);
	cc.max_sessions = u->cli_max_sessions;
	cc.idle_timeout_s = (uint32_t)(u->cli_idle_timeout_ns / 1000000000ull);
	cc.max_line = u->cli_max_line;
	snprintf(cc.password_file, sizeof(cc.password_file), "%s", u->cli_password_file);
	snprintf(cc.file_dir, sizeof(cc.file_dir), "%s", u->cli_file_dir);
	cc.graph = a->g;
	app_cli_set_config(&a->cfg);
	int rc = cli_server_start(&cc, a->err, sizeof(a->err));
	if (rc)
		return rc;
	a->cli_up = true; /* the server logged the stage's line */
	if (a->cfg.unix_conf.exec[0]) {
		rc = cli_exec_file(a->cfg.unix_conf.exec, a->err, sizeof(a->err));
		if (rc == 0)
			base_log("cli", "ran %s", a->cfg.unix_conf.exec);
	}
	return rc;
}

/* ---- shutdown ---- */

/* Disable every input node on every thread (under the barrier), so that
 * what is in flight is all that remains. */
static void stop_inputs(struct graph *g)
{
	for (uint32_t n = 0; n < graph_n_nodes(g); n++)
		if (graph_node_reg(g, n)->type == NODE_TYPE_INPUT)
			for (uint32_t t = 0; t < graph_n_threads(g); t++)
				graph_node_set_state(g, t, n, NODE_STATE_DISABLED);
}

/* Undo whatever start-up did, in reverse; safe after a partial start. */
static int shutdown_app(struct app *a)
{
	uint64_t leaked = 0;
	if (a->cli_up)
		cli_server_stop();
	statseg_http_stop();
	lcp_nl_stop_all(); /* before the graph goes: a listener takes its barrier */
	if (a->statseg_up)
		statseg_stop();
	if (a->g) {
		if (a->dist)
			drain_distributor(a);
		stop_inputs(a->g);
		graph_main_poll(a->g); /* dispatches what thread 0 still holds */
		/* While the workers' runtimes exist: their nodes' counters too. */
		app_log_node_counters(a->g);
		graph_workers_stop(a->g);
		if (a->dist)
			stop_distributor(a);
		if (a->timers_up)
			timer_services_uninstall(a->g);
		/* Devices stop after the last frame reached their tx: pcap
		 * files are complete, ring buffers come back to the pools. */
		dev_delete_all();
		if (a->pg_attached)
			pg_detach();
		pg_stream_delete_all();
		dev_graph_detach(a->g);
		graph_destroy(a->g);
		ip4_main_free(); /* packets held for ARP, routes, the FIB */
		ip6_main_free(); /* IPv6 routes, adjacencies, the FIB */
	} else {
		dev_delete_all();
	}
	buffer_thread_unregister();
	if (a->buffers_up) {
		leaked = app_log_buffer_accounting();
		buffer_main_free();
	}
	if (a->pidfile_written)
		unlink(a->cfg.unix_conf.pidfile);
	base_log("exit", "done");
	base_log_set_file(NULL);
	if (a->log)
		fclose(a->log);
	return leaked ? 1 : 0;
}

static int start(struct app *a)
{
	static const struct {
		const char *name;
		int (*fn)(struct app *a);
	} stages[] = {
		{ "unix", stage_process }, { "buffers", stage_buffers }, { "interfaces", stage_interfaces },
		{ "graph", stage_graph },  { "threads", stage_threads }, { "timers", stage_timers },
		{ "sched", stage_sched },  { "linux-cp", stage_lcp }, { "statseg", stage_statseg }, { "cli", stage_cli },
	};
	int rc = 0;
	for (size_t i = 0; i < ARRAY_LEN(stages) && !rc; i++) {
		a->err[0] = 0;
		if (stages[i].fn == stage_lcp)
			control_cpus(a, true);
		if ((rc = stages[i].fn(a)))
			base_log(stages[i].name, "failed: %s", a->err[0] ? a->err : "unknown reason");
	}
	control_cpus(a, false);
	return rc ? -1 : 0;
}

static int run(const char *path)
{
	static struct app a; /* large (the config holds every table); lives for the process */
	if (load_config(&a.cfg, path))
		return EXIT_CONFIG;
	base_log("config", "%s: %u interface(s), %u stream(s), %u warning(s)", a.cfg.file, a.cfg.interfaces.n,
		  a.cfg.pg.n_streams, a.cfg.n_warnings);
	install_signals();
	if (start(&a)) {
		shutdown_app(&a);
		return 1;
	}
	base_log("main", "running; SIGINT or SIGTERM stops");
	notify_systemd("READY=1\nSTATUS=running");
	atomic_store(&signal_wakes, graph_thread_get(a.g, 0));
	graph_main_loop(a.g, &stop_requested);
	atomic_store(&signal_wakes, NULL);
	base_log("main", "stopping");
	notify_systemd("STOPPING=1\nSTATUS=stopping");
	return shutdown_app(&a);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	bool check = false;
	int c;
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': path = optarg; break;
		case 'k': check = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return EXIT_CONFIG;
		}
	}
	/* Plugins load while startup.conf is read, before anything starts. */
	sluice_config_set_plugin_loader(plugin_load_all);
	if (!path && optind == argc - 1)
		path = argv[optind++];
	if (optind < argc) {
		usage(stderr);
		return EXIT_CONFIG;
	}
	if (check) {
		static struct sluice_config cfg;
		return check_config(&cfg, path);
	}
	return run(path);
}
