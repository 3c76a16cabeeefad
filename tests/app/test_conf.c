/* startup.conf parser: one table of configs, valid and invalid. Valid ones
 * assert effective values (printed in config syntax) and warnings; invalid
 * ones assert the exact line, column and message. For every invalid config
 * the sluice binary (argv[1]) must print the same line under --check as
 * when started with it, and exit 2 both times.
 */
#include <check.h>

#include "tests/check_run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app/conf.h"
#include "app/conf_private.h"
#include "sluice_version.h"

/* A driver only this test has, so interface blocks can parse. */
struct test_drv_config {
	uint32_t rx_queues;
	char host_if[16];
};
static const struct conf_key test_drv_keys[] = {
	{ .name = "rx-queues", .type = CONF_UINT, .def = "1", .min = 1, .max = 16,
	  CONF_FIELD(struct test_drv_config, rx_queues) },
	{ .name = "host-if", .type = CONF_STRING, CONF_FIELD(struct test_drv_config, host_if) },
	{ 0 },
};
static const struct conf_driver test_drv = {
	.name = "test", .keys = test_drv_keys, .size = sizeof(struct test_drv_config),
};
CONF_DRIVER_REGISTER(test_drv)

#define MAX_EXPECT 6

struct conf_case {
	const char *text;
	/* valid: "section.key=value" or "section.block.key=value" */
	const char *expect[MAX_EXPECT];
	const char *warning; /* "LINE:COL: message" */
	/* invalid: position and message; %N stands for the highest core, %D
	 * for the registered drivers (this test's and whatever is linked) */
	uint32_t line, col;
	const char *msg;
	bool test_driver; /* the binary does not know the test driver */
};

static const struct conf_case cases[] = {
	/* ---- valid ---- */
	{ .text = "", { "buffers.buffers-per-numa=16384", "unix.cli-listen=/run/sluice/cli.sock", "unix.cli-mode=0600",
		"unix.nodaemon=nodaemon", "cpu.idle-max=1ms", "trace.max-packets=1024" } },
	{ .text = "# only a comment\n// and another\n", { "buffers.data-size=2048" } },
	{ .text = "unix { daemon log /tmp/s.log pidfile /tmp/s.pid cli-listen 127.0.0.1:5002 cli-mode 0660 exec setup.cli }",
	  { "unix.daemon=daemon", "unix.log=/tmp/s.log", "unix.pidfile=/tmp/s.pid", "unix.cli-listen=127.0.0.1:5002",
	    "unix.cli-mode=0660", "unix.exec=setup.cli" } },
	{ .text = "unix {\n  nodaemon  # stay in front\n}\n", { "unix.nodaemon=nodaemon" } },
	{ .text = "unix { log \"/tmp/my log.txt\" }", { "unix.log=\"/tmp/my log.txt\"" } },
	{ .text = "unix { exec \"a\\\"b\" }", { "unix.exec=\"a\\\"b\"" } },
	{ .text = "unix { cli-listen ./cli.sock cli-mode 600 }", { "unix.cli-listen=./cli.sock", "unix.cli-mode=0600" } },
	/* CLI access: defaults, every key, loopback TCP without a password */
	{ .text = "unix { }", { "unix.cli-group=\"\"", "unix.cli-max-sessions=8", "unix.cli-idle-timeout=5m",
		"unix.cli-max-line=4094", "unix.cli-password-file=\"\"", "unix.cli-file-dir=\"\"" } },
	{ .text = "unix { cli-group root cli-max-sessions 2 cli-idle-timeout 2s cli-max-line 128 cli-file-dir /tmp }",
	  { "unix.cli-group=root", "unix.cli-max-sessions=2", "unix.cli-idle-timeout=2s", "unix.cli-max-line=128",
	    "unix.cli-file-dir=/tmp" } },
	{ .text = "unix { cli-idle-timeout 120s cli-max-sessions 1024 cli-max-line 64 }",
	  { "unix.cli-idle-timeout=2m", "unix.cli-max-sessions=1024", "unix.cli-max-line=64" } },
	{ .text = "unix { cli-idle-timeout 0s }", { "unix.cli-idle-timeout=0ns" } },
	{ .text = "unix { cli-idle-timeout 1h }", { "unix.cli-idle-timeout=1h" } },
	{ .text = "unix { cli-listen 127.0.0.2:5002 }", { "unix.cli-listen=127.0.0.2:5002" } },
	{ .text = "unix { cli-listen [::1]:5002 }", { "unix.cli-listen=[::1]:5002" } },
	{ .text = "unix { cli-listen localhost:5002 }", { "unix.cli-listen=localhost:5002" } },
	{ .text = "buffers { data-size 4K page-size 2M buffers-per-numa 0x8000 }",
	  { "buffers.data-size=4096", "buffers.page-size=2M", "buffers.buffers-per-numa=32768" } },
	{ .text = "buffers { page-size 1G }", { "buffers.page-size=1G" } },
	{ .text = "buffers { page-size 4096 data-size 9216 }", { "buffers.page-size=4096", "buffers.data-size=9216" } },
	{ .text = "cpu { main-core 0 corelist-workers 1 }", { "cpu.corelist-workers=1", "cpu.main-core=0" } },
	{ .text = "cpu { workers 1 }", { "cpu.workers=1", "cpu.corelist-workers=" } },
	{ .text = "cpu {\n  main-core 0\n  corelist-workers 0-1\n}", { "cpu.corelist-workers=0-1" },
	  .warning = "3:20: worker core 0 is also main-core: the main thread and a worker share it" },
	{ .text = "cpu { idle-mode poll idle-max 500us }", { "cpu.idle-mode=-", "cpu.rx-mode=polling", "cpu.idle-max=500us" },
	  .warning = "1:17: idle-mode is replaced by rx-mode: taken as rx-mode polling" },
	{ .text = "cpu { idle-mode sleep }", { "cpu.rx-mode=adaptive" },
	  .warning = "1:17: idle-mode is replaced by rx-mode: taken as rx-mode adaptive" },
	{ .text = "cpu { rx-mode interrupt }", { "cpu.rx-mode=interrupt", "cpu.idle-mode=-" } },
	{ .text = "cpu { idle-max 1000000ns }", { "cpu.idle-max=1ms" } },
	{ .text = "cpu { stall-warn 250ms }", { "cpu.stall-warn=250ms" } },
	{ .text = "cpu { stall-warn 0s }", { "cpu.stall-warn=0ns" } },
	{ .text = "sched { }", { "sched.class-queue-depth=1024", "sched.max-held=4096" } },
	{ .text = "event-logger { }", { "event-logger.size=4096" } },
	{ .text = "event-logger { size 65536 }", { "event-logger.size=65536" } },
	{ .text = "sched { class-queue-depth 4096 }", { "sched.class-queue-depth=4096" } },
	/* the stats segment: 32M, 100ms and the socket beside the CLI's by default */
	{ .text = "statseg { }", { "statseg.size=32M", "statseg.update-interval=100ms", "statseg.socket-name=\"\"" } },
	{ .text = "statseg { socket-name /run/x/stats.sock size 64m update-interval 1s }",
	  { "statseg.socket-name=/run/x/stats.sock", "statseg.size=64M", "statseg.update-interval=1s" } },
	/* the Prometheus endpoint: loopback, or anything with allow-remote */
	{ .text = "statseg { prometheus 127.0.0.1:9482 }",
	  { "statseg.prometheus=127.0.0.1:9482", "statseg.prometheus-allow-remote=off" } },
	{ .text = "statseg { prometheus [::1]:9482 }", { "statseg.prometheus=[::1]:9482" } },
	{ .text = "statseg { prometheus localhost:9482 }", { "statseg.prometheus=localhost:9482" } },
	{ .text = "statseg { prometheus 0.0.0.0:9482 prometheus-allow-remote yes }",
	  { "statseg.prometheus=0.0.0.0:9482", "statseg.prometheus-allow-remote=on" } },
	{ .text = "unix{nodaemon}cpu{main-core 0}buffers{data-size 2048}", { "cpu.main-core=0" } },
	{ .text = "trace { max-packets 100 start-node pg-input start-count 10 }",
	  { "trace.max-packets=100", "trace.start-node=pg-input", "trace.start-count=10" } },
	{ .text = "packet-generator {\n  s0 { rate 1mpps size 64-128 next-node error-drop }\n}",
	  { "packet-generator.s0.rate=1mpps", "packet-generator.s0.size=64-128",
	    "packet-generator.s0.next-node=error-drop" } },
	{ .text = "linux-cp {\n  default-netns ctl\n  eth0 { host-if s-eth0 }\n  eth1 { host-if s-eth1  netns other }\n}",
	  { "linux-cp.default-netns=ctl", "linux-cp.eth0.host-if=s-eth0", "linux-cp.eth0.netns=\"\"",
	    "linux-cp.eth1.host-if=s-eth1", "linux-cp.eth1.netns=other" } },
	{ .text = "packet-generator { a { limit 5 } b { rate 10kpps disabled } }",
	  { "packet-generator.a.limit=5", "packet-generator.b.rate=10kpps", "packet-generator.b.disabled=disabled" } },
	{ .text = "interfaces {\n  eth0 { driver test host-if veth0 rx-queues 2 }\n  eth1 { driver test }\n}",
	  { "interfaces.eth0.rx-queues=2", "interfaces.eth0.host-if=veth0", "interfaces.eth1.rx-queues=1" } },
	/* rx-burst: every interface's, whatever its driver; a frame by default */
	{ .text = "interfaces {\n  a { driver null  rx-burst 32 }\n  b { driver test  rx-burst 1 }\n  c { driver null }\n}",
	  { "interfaces.a.rx-burst=32", "interfaces.b.rx-burst=1", "interfaces.c.rx-burst=256" } },
	{ .text = "interfaces { a { driver null  rx-burst 0x100  l2-xconnect b }  b { driver null } }",
	  { "interfaces.a.rx-burst=256", "interfaces.a.l2-xconnect=b" } },
	/* af-packet's rx-ring: auto by default */
	{ .text = "interfaces {\n  a { driver af-packet  host-if veth0  rx-ring frame }\n"
		  "  b { driver af-packet  host-if veth1 }\n  c { driver af-packet  host-if veth2  rx-ring block }\n}",
	  { "interfaces.a.rx-ring=frame", "interfaces.b.rx-ring=auto", "interfaces.c.rx-ring=block" } },
	/* rx-mode: every interface's; default follows cpu { rx-mode } */
	{ .text = "interfaces { a { driver null  rx-mode interrupt }  b { driver null } }",
	  { "interfaces.a.rx-mode=interrupt", "interfaces.b.rx-mode=default" } },
	{ .text = "interfaces { a { driver null  ip6-address \"2001:db8:1::1/64 fe80::1/64\" } }",
	  { "interfaces.a.ip6-address=\"2001:db8:1::1/64 fe80::1/64\"" } },
	{ .text = "interfaces { a { driver null  ip6-ra \"interval 10s prefix 2001:db8:1::/64 valid 600\" } b { driver null  ip6-ra on } }",
	  { "interfaces.a.ip6-ra=\"interval 10s prefix 2001:db8:1::/64 valid 600\"", "interfaces.b.ip6-ra=on" } },
	/* shapers and classes: `sched shaper interface` and `sched class`'s words */
	{ .text = "interfaces { a { driver null  shaper \"rate 10mbit burst 32k\" } b { driver null } }",
	  { "interfaces.a.shaper=\"rate 10mbit burst 32k\"" } },
	{ .text = "sched-classes {\n  ef { priority 0  match \"dscp 46\" }\n"
		  "  bulk { priority 7  weight 3  type ordered  match \"protocol tcp\" }\n}",
	  { "sched-classes.ef.priority=0", "sched-classes.ef.weight=1", "sched-classes.ef.type=atomic",
	    "sched-classes.ef.match=\"dscp 46\"" } },
	{ .text = "sched-classes {\n  bulk { priority 7  weight 3  type ordered  match \"protocol tcp\" }\n"
		  "  mine { priority 3  match \"interface a\" }\n}",
	  { "sched-classes.bulk.priority=7", "sched-classes.bulk.weight=3", "sched-classes.bulk.type=ordered",
	    "sched-classes.bulk.match=\"protocol tcp\"", "sched-classes.mine.match=\"interface a\"" } },

	/* the IPv6 FIB's size and pages */
	{ .text = "ip6 { fib-groups 1048576  fib-memory 4k }", { "ip6.fib-groups=1048576", "ip6.fib-memory=4k" } },
	/* plugins { }: `plugin NAME { }` blocks behind a keyword (app/plugin_conf.c) */
	{ .text = "plugins { path /opt/p  plugin default { disable }  plugin a.so { enable } }", { "plugins.path=/opt/p" } },
	{ .text = "plugins { plugin \"b c.so\" { disable } }", { "plugins.path=" SLUICE_PLUGIN_DIR } },
	{ .text = "unix { nodaemon }", { "ip6.fib-groups=65536", "ip6.fib-memory=auto" } },

	/* ---- unknown section ---- */
	{ .text = "shaper { }", .line = 1, .col = 1,
	  .msg = "unknown section 'shaper': expected one of unix, cpu, buffers, interfaces, packet-generator, trace, event-logger, distributor, sched, sched-classes, statseg, linux-cp, ip6, plugins" },
	{ .text = "unix { }\nscheduler { enable }", .line = 2, .col = 1,
	  .msg = "unknown section 'scheduler': expected one of unix, cpu, buffers, interfaces, packet-generator, trace, event-logger, distributor, sched, sched-classes, statseg, linux-cp, ip6, plugins" },
	{ .text = "}", .line = 1, .col = 1,
	  .msg = "unexpected '}': expected a section name (one of unix, cpu, buffers, interfaces, packet-generator, trace, event-logger, distributor, sched, sched-classes, statseg, linux-cp, ip6, plugins)" },
	{ .text = "sched { ring-size 100 }", .line = 1, .col = 19,
	  .msg = "'ring-size 100': expected a power of two, got 100" },
	{ .text = "sched { class-queue-depth 1000 }", .line = 1, .col = 27,
	  .msg = "'class-queue-depth 1000': expected a power of two, got 1000" },
	{ .text = "sched {\n  class-queue-depth 32\n}", .line = 2, .col = 21,
	  .msg = "bad value '32' for 'class-queue-depth': out of range: expected 64 to 65536" },
	{ .text = "event-logger { size 1000 }", .line = 1, .col = 21,
	  .msg = "'size 1000': expected a power of two, got 1000" },
	{ .text = "event-logger { size 8 }", .line = 1, .col = 21,
	  .msg = "bad value '8' for 'size': out of range: expected 16 to 1048576" },
	{ .text = "statseg { socket-name 127.0.0.1:9000 }", .line = 1, .col = 23,
	  .msg = "'socket-name 127.0.0.1:9000': expected a unix socket path (starting with / or .)" },
	{ .text = "linux-cp { eth0 { host-if s-eth0-far-too-long } }", .line = 1, .col = 27,
	  .msg = "bad value 's-eth0-far-too-long' for 'host-if': longer than 15 characters" },
	{ .text = "plugins { plugin a.so { enable disable } }", .line = 1, .col = 18,
	  .msg = "plugin 'a.so': expected one of enable, disable" },
	{ .text = "plugins { plugin a.so { } }", .line = 1, .col = 18,
	  .msg = "plugin 'a.so': expected one of enable, disable" },
	{ .text = "plugins { plugin { enable } }", .line = 1, .col = 18,
	  .msg = "expected a plugin name after 'plugin', found '{'" },
	{ .text = "plugins { plugin a.so enable }", .line = 1, .col = 23,
	  .msg = "expected '{' after 'plugin a.so', found 'enable'" },
	{ .text = "plugins {\n plugin a.so { enable }\n plugin a.so { disable }\n}", .line = 3, .col = 9,
	  .msg = "duplicate plugin name 'a.so' (first at line 2)" },
	{ .text = "plugins { plugin a { enable } }", .line = 1, .col = 1,
	  .msg = "section 'plugins': plugin 'a': expected NAME.so (a file of path) or default" },
	{ .text = "plugins { a.so { enable } }", .line = 1, .col = 11,
	  .msg = "unknown key 'a.so' in section 'plugins': expected one of path" },
	{ .text = "plugins { path }", .line = 1, .col = 16, .msg = "missing value for 'path': found '}'" },
	{ .text = "ip6 { fib-groups 0 }", .line = 1, .col = 18,
	  .msg = "bad value '0' for 'fib-groups': out of range: expected 1 to 8388608" },
	{ .text = "ip6 {\n  fib-memory huge\n}", .line = 2, .col = 14,
	  .msg = "bad value 'huge' for 'fib-memory': expected one of: auto, hugetlb, 4k" },
	{ .text = "linux-cp { eth0 { netns ctl } }", .line = 1, .col = 12,
	  .msg = "interface 'eth0': expected host-if NAME (the Linux TAP mirroring the port)" },
	{ .text = "statseg { size 4k }", .line = 1, .col = 16,
	  .msg = "bad value '4k' for 'size': out of range: expected 65536 to 1G" },
	{ .text = "statseg { prometheus 0.0.0.0:9482 }", .line = 1, .col = 22,
	  .msg = "'prometheus 0.0.0.0:9482': not a loopback address: metrics served to the network need "
		 "prometheus-allow-remote yes" },
	{ .text = "statseg {\n  prometheus [2001:db8::1]:9482\n}", .line = 2, .col = 14,
	  .msg = "'prometheus [2001:db8::1]:9482': not a loopback address: metrics served to the network need "
		 "prometheus-allow-remote yes" },
	{ .text = "statseg { prometheus 127.0.0.1 }", .line = 1, .col = 22,
	  .msg = "'prometheus 127.0.0.1': expected HOST:PORT with a numeric IPv4 host, [IPv6] or localhost, and a "
		 "port 1..65535 (not '127.0.0.1')" },
	{ .text = "statseg { prometheus example.com:80 }", .line = 1, .col = 22,
	  .msg = "'prometheus example.com:80': expected HOST:PORT with a numeric IPv4 host, [IPv6] or localhost, and "
		 "a port 1..65535 (not 'example.com:80')" },
	{ .text = "unix nodaemon", .line = 1, .col = 6, .msg = "expected '{' after 'unix', found 'nodaemon'" },
	{ .text = "unix", .line = 1, .col = 5, .msg = "expected '{' after 'unix', found end of file" },
	{ .text = "unix { }\ncpu { }\nunix { daemon }", .line = 3, .col = 1, .msg = "duplicate section 'unix' (first at line 1)" },

	/* ---- unknown key ---- */
	{ .text = "unix {\n  log /tmp/x\n  foo bar\n}", .line = 3, .col = 3,
	  .msg = "unknown key 'foo' in section 'unix': expected one of nodaemon, daemon, log, pidfile, cli-listen, "
		 "cli-mode, cli-group, cli-max-sessions, cli-idle-timeout, cli-max-line, cli-password-file, cli-file-dir, "
		 "exec" },
	{ .text = "cpu { main-cores 1 }", .line = 1, .col = 7,
	  .msg = "unknown key 'main-cores' in section 'cpu': expected one of main-core, corelist-workers, workers, "
		 "skip-cores, rx-mode, idle-mode, idle-max, stall-warn" },
	{ .text = "trace { enable }", .line = 1, .col = 9,
	  .msg = "unknown key 'enable' in section 'trace': expected one of max-packets, start-node, start-count" },
	{ .text = "unix { foo { } }", .line = 1, .col = 8,
	  .msg = "unknown key 'foo' in section 'unix': expected one of nodaemon, daemon, log, pidfile, cli-listen, "
		 "cli-mode, cli-group, cli-max-sessions, cli-idle-timeout, cli-max-line, cli-password-file, cli-file-dir, "
		 "exec" },
	{ .text = "unix { \"log\" x }", .line = 1, .col = 8,
	  .msg = "unexpected '\"log\"' in section 'unix': expected a key or '}'" },
	{ .text = "packet-generator { { } }", .line = 1, .col = 20,
	  .msg = "unexpected '{' in section 'packet-generator': expected a key or a stream or '}'" },
	{ .text = "unix { log /a\n log /b }", .line = 2, .col = 2, .msg = "duplicate key 'log' (first at line 1)" },

	/* ---- missing or bad value, range ---- */
	{ .text = "unix { log }", .line = 1, .col = 12, .msg = "missing value for 'log': found '}'" },
	{ .text = "unix { log", .line = 1, .col = 11, .msg = "missing value for 'log': found end of file" },
	{ .text = "unix { log { } }", .line = 1, .col = 12, .msg = "missing value for 'log': found '{'" },
	{ .text = "buffers { data-size 2Q }", .line = 1, .col = 21,
	  .msg = "bad value '2Q' for 'data-size': expected a size such as 2048, 64K, 2M or 1G" },
	{ .text = "buffers {\n  buffers-per-numa 100\n}", .line = 2, .col = 20,
	  .msg = "bad value '100' for 'buffers-per-numa': out of range: expected 1024 to 16777216" },
	{ .text = "buffers { buffers-per-numa 99999999999999999999999 }", .line = 1, .col = 28,
	  .msg = "bad value '99999999999999999999999' for 'buffers-per-numa': out of range: expected 1024 to 16777216" },
	{ .text = "buffers { data-size 1M }", .line = 1, .col = 21,
	  .msg = "bad value '1M' for 'data-size': out of range: expected 256 to 65535" },
	{ .text = "cpu { idle-max 10ms\n stall-warn 10ms }", .line = 2, .col = 13,
	  .msg = "'stall-warn 10ms': must exceed idle-max (an idle thread sleeps that long between loops)" },
	{ .text = "buffers { page-size 8K }", .line = 1, .col = 21, .msg = "'page-size 8K': expected 0 (automatic), 4K, 2M or 1G" },
	{ .text = "unix { cli-mode 0800 }", .line = 1, .col = 17,
	  .msg = "bad value '0800' for 'cli-mode': expected an octal mode such as 0600" },
	{ .text = "unix { cli-listen localhost:99999 }", .line = 1, .col = 19,
	  .msg = "bad value 'localhost:99999' for 'cli-listen': expected a port from 1 to 65535 after 'localhost:'" },
	{ .text = "unix { cli-listen sock }", .line = 1, .col = 19,
	  .msg = "bad value 'sock' for 'cli-listen': expected a socket path (starting with / or .) or HOST:PORT" },
	{ .text = "unix {\n  cli-listen 0.0.0.0:5002\n}", .line = 2, .col = 14,
	  .msg = "'cli-listen 0.0.0.0:5002': not a loopback address: a CLI reachable from the network needs "
		 "cli-password-file" },
	{ .text = "unix { cli-listen [::]:5002 }", .line = 1, .col = 19,
	  .msg = "'cli-listen [::]:5002': not a loopback address: a CLI reachable from the network needs "
		 "cli-password-file" },
	{ .text = "unix { cli-listen 10.1.2.3:5002 }", .line = 1, .col = 19,
	  .msg = "'cli-listen 10.1.2.3:5002': not a loopback address: a CLI reachable from the network needs "
		 "cli-password-file" },
	{ .text = "unix { cli-listen example.com:5002 }", .line = 1, .col = 19,
	  .msg = "'cli-listen example.com:5002': not a loopback address: a CLI reachable from the network needs "
		 "cli-password-file" },
	{ .text = "unix {\n  cli-mode 0660\n  cli-group no-such-group-here\n}", .line = 3, .col = 13,
	  .msg = "'cli-group no-such-group-here': no group 'no-such-group-here' on this system" },
	{ .text = "unix { cli-max-sessions 0 }", .line = 1, .col = 25,
	  .msg = "bad value '0' for 'cli-max-sessions': out of range: expected 1 to 1024" },
	{ .text = "unix { cli-max-sessions 1025 }", .line = 1, .col = 25,
	  .msg = "bad value '1025' for 'cli-max-sessions': out of range: expected 1 to 1024" },
	{ .text = "unix { cli-max-line 4095 }", .line = 1, .col = 21,
	  .msg = "bad value '4095' for 'cli-max-line': out of range: expected 64 to 4094" },
	{ .text = "unix { cli-max-line 63 }", .line = 1, .col = 21,
	  .msg = "bad value '63' for 'cli-max-line': out of range: expected 64 to 4094" },
	{ .text = "unix { cli-idle-timeout 5 }", .line = 1, .col = 25,
	  .msg = "bad value '5' for 'cli-idle-timeout': expected a duration such as 500us, 10ms or 2s" },
	{ .text = "unix { cli-idle-timeout 1500ms }", .line = 1, .col = 25,
	  .msg = "'cli-idle-timeout 1500ms': expected whole seconds" },
	{ .text = "unix { cli-idle-timeout 25h }", .line = 1, .col = 25,
	  .msg = "bad value '25h' for 'cli-idle-timeout': out of range: expected 0ns to 24h" },
	{ .text = "unix { cli-file-dir /nonexistent/sluice }", .line = 1, .col = 21,
	  .msg = "'cli-file-dir /nonexistent/sluice': No such file or directory" },
	{ .text = "unix { cli-file-dir /etc/passwd }", .line = 1, .col = 21,
	  .msg = "'cli-file-dir /etc/passwd': Not a directory" },
	{ .text = "unix { cli-password-file /nonexistent/pw }", .line = 1, .col = 26,
	  .msg = "'cli-password-file /nonexistent/pw': /nonexistent/pw: No such file or directory" },
	{ .text = "cpu { idle-mode fast }", .line = 1, .col = 17,
	  .msg = "bad value 'fast' for 'idle-mode': expected one of: -, poll, sleep" },
	{ .text = "cpu { rx-mode polling idle-mode poll }", .line = 1, .col = 33,
	  .msg = "'idle-mode poll': idle-mode is replaced by rx-mode: give rx-mode only" },
	{ .text = "cpu { rx-mode fast }", .line = 1, .col = 15,
	  .msg = "bad value 'fast' for 'rx-mode': expected one of: polling, interrupt, adaptive" },
	{ .text = "cpu { idle-max 5 }", .line = 1, .col = 16,
	  .msg = "bad value '5' for 'idle-max': expected a duration such as 500us, 10ms or 2s" },
	{ .text = "cpu { idle-max 10s }", .line = 1, .col = 16,
	  .msg = "bad value '10s' for 'idle-max': out of range: expected 1us to 1s" },
	{ .text = "cpu { main-core -1 }", .line = 1, .col = 17,
	  .msg = "bad value '-1' for 'main-core': expected an unsigned integer" },
	{ .text = "cpu { corelist-workers 1- }", .line = 1, .col = 24,
	  .msg = "bad value '1-' for 'corelist-workers': expected a cpu list such as 1-3,5" },
	{ .text = "cpu { corelist-workers 3-1 }", .line = 1, .col = 24,
	  .msg = "bad value '3-1' for 'corelist-workers': expected a cpu list such as 1-3,5" },
	{ .text = "cpu { corelist-workers 1,1 }", .line = 1, .col = 24,
	  .msg = "bad value '1,1' for 'corelist-workers': cpu 1 listed twice" },
	{ .text = "trace { start-count 5 }", .line = 1, .col = 21, .msg = "'start-count 5': start-node and start-count go together" },
	{ .text = "trace { max-packets 10 start-node pg-input start-count 50 }", .line = 1, .col = 56,
	  .msg = "'start-count 50': start-count 50 exceeds max-packets 10" },
	{ .text = "packet-generator { s0 { rate fast } }", .line = 1, .col = 30,
	  .msg = "bad value 'fast' for 'rate': expected a packet rate such as 1000, 10kpps or 1mpps" },
	{ .text = "unix { log \"/tmp/x }\n", .line = 1, .col = 12,
	  .msg = "unterminated string: expected '\"' before the end of the line" },

	/* ---- cores ---- */
	{ .text = "cpu { main-core 9999 }", .line = 1, .col = 17,
	  .msg = "'main-core 9999': core 9999 does not exist (this machine has cores 0-%N)" },
	{ .text = "cpu {\n  corelist-workers 0,4000\n}", .line = 2, .col = 20,
	  .msg = "'corelist-workers 0,4000': core 4000 does not exist (this machine has cores 0-%N)" },
	{ .text = "cpu { workers 1 corelist-workers 1 }", .line = 1, .col = 15,
	  .msg = "'workers 1': give either workers or corelist-workers, not both" },
	{ .text = "cpu { workers 63 }", .line = 1, .col = 15,
	  .msg = "'workers 63': not enough cores for 63 workers from skip-cores 0 up besides main-core 0 "
		 "(this machine has cores 0-%N)" },

	/* ---- braces ---- */
	{ .text = "unix {\n  nodaemon\n", .line = 1, .col = 6,
	  .msg = "unclosed '{' of section 'unix': expected '}' before the end of the file" },
	{ .text = "packet-generator {\n  s0 { rate 10 }\n", .line = 1, .col = 18,
	  .msg = "unclosed '{' of section 'packet-generator': expected '}' before the end of the file" },
	{ .text = "packet-generator {\n  s0 { rate 10\n", .line = 2, .col = 6,
	  .msg = "unclosed '{' of stream 's0': expected '}' before the end of the file" },

	/* ---- blocks and interfaces ---- */
	{ .text = "packet-generator {\n  s0 { }\n  s0 { }\n}", .line = 3, .col = 3,
	  .msg = "duplicate stream name 's0' (first at line 2)" },
	{ .text = "interfaces { eth0 { driver no-such-driver host-if veth0 } }", .line = 1, .col = 28,
	  .msg = "unknown driver 'no-such-driver' for interface 'eth0': known drivers: %D", .test_driver = true },
	{ .text = "interfaces {\n  a { driver test }\n  a { driver test }\n}", .line = 3, .col = 3,
	  .msg = "duplicate interface name 'a' (first at line 2)", .test_driver = true },
	{ .text = "interfaces { eth0 { rx-queues 1 driver test } }", .line = 1, .col = 21,
	  .msg = "interface 'eth0' needs its driver first: expected 'driver', found 'rx-queues'", .test_driver = true },
	{ .text = "interfaces { eth0 { driver test rx-desc 512 } }", .line = 1, .col = 33,
	  .msg = "unknown key 'rx-desc' in interface 'eth0' (driver test): expected one of rx-queues, host-if, "
		 "l2-xconnect, rx-burst, rx-mode, ip6-address, ip6-ra, shaper, feature-enable, feature-disable",
	  .test_driver = true },
	/* the keys every interface takes are listed after the driver's */
	{ .text = "interfaces { eth0 { driver null  rx-burts 8 } }", .line = 1, .col = 34,
	  .msg = "unknown key 'rx-burts' in interface 'eth0' (driver null): expected one of rx-queues, tx-queues, "
		 "rx-recycle, rx-size, l2-xconnect, rx-burst, rx-mode, ip6-address, ip6-ra, shaper, feature-enable, feature-disable" },
	{ .text = "interfaces { eth0 { driver test rx-queues 17 } }", .line = 1, .col = 43,
	  .msg = "bad value '17' for 'rx-queues': out of range: expected 1 to 16", .test_driver = true },
	{ .text = "interfaces { an-interface-name-far-too-long-for-us { driver test } }", .line = 1, .col = 14,
	  .msg = "interface name 'an-interface-name-far-too-long-for-us' is longer than 31 characters",
	  .test_driver = true },
	{ .text = "interfaces { a { driver null  rx-mode sleepy } }", .line = 1, .col = 39,
	  .msg = "bad value 'sleepy' for 'rx-mode': expected one of: default, polling, interrupt, adaptive" },
	{ .text = "interfaces {\n  a { driver af-packet  host-if veth0\n      rx-ring fast }\n}", .line = 3, .col = 15,
	  .msg = "bad value 'fast' for 'rx-ring': expected one of: auto, frame, block" },
	{ .text = "interfaces { a { driver af-packet  host-if veth0  rx-ring }\n}", .line = 1, .col = 59,
	  .msg = "missing value for 'rx-ring': found '}'" },
	{ .text = "interfaces { a { driver null  rx-burst 0 } }", .line = 1, .col = 40,
	  .msg = "bad value '0' for 'rx-burst': out of range: expected 1 to 256" },
	{ .text = "interfaces {\n  a { driver null\n      rx-burst 257 }\n}", .line = 3, .col = 16,
	  .msg = "bad value '257' for 'rx-burst': out of range: expected 1 to 256" },
	{ .text = "interfaces { a { driver null  rx-burst lots } }", .line = 1, .col = 40,
	  .msg = "bad value 'lots' for 'rx-burst': expected an unsigned integer" },
	{ .text = "interfaces { a { driver null  rx-burst 32x } }", .line = 1, .col = 40,
	  .msg = "bad value '32x' for 'rx-burst': expected an unsigned integer" },
	{ .text = "interfaces { a { driver null  rx-burst -1 } }", .line = 1, .col = 40,
	  .msg = "bad value '-1' for 'rx-burst': expected an unsigned integer" },
	{ .text = "interfaces {\n  a { driver test  l2-xconnect b }\n}", .line = 1, .col = 1,
	  .msg = "section 'interfaces': interface 'a' (line 2): l2-xconnect b: expected another interface of this section",
	  .test_driver = true },
	{ .text = "interfaces {\n  a { driver test  l2-xconnect a }\n}", .line = 1, .col = 1,
	  .msg = "section 'interfaces': interface 'a' (line 2): l2-xconnect a: an interface cannot be cross-connected to itself",
	  .test_driver = true },
	{ .text = "interfaces {\n  a { driver null  ip6-address \"2001:db8::1/64 2001:db8::2\" }\n}", .line = 1, .col = 1,
	  .msg = "section 'interfaces': interface 'a' (line 2): ip6-address 2001:db8::2: expected X:X::X:X/L" },
	{ .text = "interfaces {\n  a { driver null  ip6-ra \"interval 2\" }\n}", .line = 1, .col = 1,
	  .msg = "section 'interfaces': interface 'a' (line 2): ip6-ra: interval 2 s not in 4..1800" },
	{ .text = "interfaces {\n  a { driver null  ip6-ra \"prefix 2001:db8::/64 valid 10 preferred 20\" }\n}",
	  .line = 1, .col = 1,
	  .msg = "section 'interfaces': interface 'a' (line 2): ip6-ra: prefix 1: preferred 20 s beyond valid 10 s" },
	{ .text = "interfaces {\n  a { driver null  shaper \"rate fast\" }\n}", .line = 1, .col = 1,
	  .msg = "section 'interfaces': interface 'a' (line 2): shaper: rate fast: expected a rate such as 100kbit, 10mbit or 1gbit" },
	{ .text = "interfaces {\n  a { driver null  shaper \"burst 16k\" }\n}", .line = 1, .col = 1,
	  .msg = "section 'interfaces': interface 'a' (line 2): shaper: expected rate R above 0 (for example \"rate 10mbit\")" },
	{ .text = "interfaces {\n  a { driver null  shaper \"rate 1mbit peak 2mbit\" }\n}", .line = 1, .col = 1,
	  .msg = "section 'interfaces': interface 'a' (line 2): shaper: expected \"rate R [burst B]\" (for example \"rate 10mbit burst 16k\")" },
	{ .text = "sched-classes {\n  ef { match \"dscp 46\" }\n}", .line = 2, .col = 3,
	  .msg = "class 'ef': expected priority (`sched class`'s priority P and match ...)" },
	{ .text = "sched-classes {\n  ef { priority 0 }\n}", .line = 2, .col = 3,
	  .msg = "class 'ef': expected match (`sched class`'s priority P and match ...)" },
	{ .text = "sched-classes {\n  ef { priority 8  match \"dscp 46\" }\n}", .line = 2, .col = 17,
	  .msg = "bad value '8' for 'priority': out of range: expected 0 to 7" },
	{ .text = "sched-classes {\n  ef { priority 0  match \"dscp 64\" }\n}", .line = 2, .col = 26,
	  .msg = "'match dscp 64': expected dscp 0..63" },
	{ .text = "sched-classes {\n  ef { priority 0  match \"colour red\" }\n}", .line = 2, .col = 26,
	  .msg = "'match colour red': expected \"dscp D\", \"protocol icmp|tcp|udp\" or \"interface NAME\"" },
	{ .text = "sched-classes {\n  ef { priority 0  match \"protocol sctp\" }\n}", .line = 2, .col = 26,
	  .msg = "'match protocol sctp': expected protocol icmp, tcp or udp" },
	{ .text = "sched-classes {\n  ef { priority 0  type lazy  match \"dscp 1\" }\n}", .line = 2, .col = 25,
	  .msg = "bad value 'lazy' for 'type': expected one of: atomic, ordered, parallel" },
	{ .text = "interfaces {\n  a { driver null  ip6-ra \"interval\" }\n}", .line = 1, .col = 1,
	  .msg = "section 'interfaces': interface 'a' (line 2): ip6-ra: bad or misplaced 'interval': expected on, off "
		 "or [interval S] [lifetime S] [prefix X:X::X:X/L [valid S] [preferred S]]" },
};

static const char *sluice_bin;

/* msg with %N replaced by the highest core number of this machine and %D
 * by the registered driver names. */
static void expand(const char *msg, char *out, size_t len)
{
	const char *n = strstr(msg, "%N"), *d = strstr(msg, "%D");
	char drivers[256];
	if (n) {
		snprintf(out, len, "%.*s%ld%s", (int)(n - msg), msg, sysconf(_SC_NPROCESSORS_CONF) - 1, n + 2);
	} else if (d) {
		conf_driver_names(drivers, sizeof(drivers));
		snprintf(out, len, "%.*s%s%s", (int)(d - msg), msg, drivers, d + 2);
	} else {
		snprintf(out, len, "%s", msg);
	}
}

/* The value of "section.key" or "section.block.key" in config syntax. */
static void effective(const struct sluice_config *cfg, const char *path, char *out, size_t len)
{
	char sect[64], rest[64];
	ck_assert_int_eq(sscanf(path, "%63[^.].%63s", sect, rest), 2);
	const struct app_section *as = app_section_find(sect);
	ck_assert_ptr_nonnull(as);
	const uint8_t *obj = (const uint8_t *)cfg + as->offset;
	const struct conf_key *keys = as->sec->keys;
	char *dot = strchr(rest, '.');
	if (dot) {
		*dot = 0;
		if (as->interfaces) {
			const struct conf_interfaces *ifs = (const void *)obj;
			obj = NULL;
			const char *key = strchr(dot + 1, '.') ? "" : dot + 1;
			for (uint32_t i = 0; i < ifs->n; i++) {
				if (strcmp(ifs->ifs[i].name, rest) != 0)
					continue;
				/* The driver's keys, else every interface's own. */
				bool own = !conf_key_find(ifs->ifs[i].driver->keys, key);
				obj = own ? (const void *)&ifs->ifs[i] : ifs->ifs[i].driver_conf;
				keys = own ? app_interface_keys : ifs->ifs[i].driver->keys;
			}
		} else {
			const struct conf_block *b = as->sec->block;
			uint32_t n;
			memcpy(&n, obj + b->count_offset, sizeof(n));
			const uint8_t *base = obj + b->array_offset;
			obj = NULL;
			for (uint32_t i = 0; i < n; i++)
				if (strcmp((const char *)base + i * b->elem_size + b->name_offset, rest) == 0)
					obj = base + i * b->elem_size;
			keys = b->keys;
		}
		ck_assert_msg(obj, "no block %s", rest);
		memmove(rest, dot + 1, strlen(dot + 1) + 1);
	}
	const struct conf_key *k = conf_key_find(keys, rest);
	ck_assert_msg(k, "no key %s", path);
	conf_value_format(k, obj, out, len);
}

static void check_valid(const struct conf_case *c, struct sluice_config *cfg)
{
	for (int i = 0; i < MAX_EXPECT && c->expect[i]; i++) {
		char path[128], val[512];
		const char *eq = strchr(c->expect[i], '=');
		snprintf(path, sizeof(path), "%.*s", (int)(eq - c->expect[i]), c->expect[i]);
		effective(cfg, path, val, sizeof(val));
		ck_assert_str_eq(val, eq + 1);
	}
	if (c->warning) {
		char w[600];
		ck_assert_uint_eq(cfg->n_warnings, 1);
		snprintf(w, sizeof(w), "%u:%u: %s", cfg->warnings[0].line, cfg->warnings[0].col, cfg->warnings[0].msg);
		ck_assert_str_eq(w, c->warning);
	} else {
		ck_assert_uint_eq(cfg->n_warnings, 0);
	}
}

/* Run the binary on file; returns its exit status and its stderr. */
static int run_bin(const char *args, const char *file, char *out, size_t len)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "timeout 10 '%s' %s -c '%s' 2>&1 >/dev/null", sluice_bin, args, file);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t n = fread(out, 1, len - 1, p);
	out[n] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* --check and a real start print the same error line and both exit 2. */
static void check_binary(const struct conf_case *c, const char *expected_line)
{
	char dir[] = "/tmp/sluice-conf-XXXXXX", file[64], check_out[2048], run_out[2048];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/case.conf", dir);
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fputs(c->text, f);
	fclose(f);
	ck_assert_int_eq(run_bin("--check", file, check_out, sizeof(check_out)), 2);
	ck_assert_int_eq(run_bin("", file, run_out, sizeof(run_out)), 2);
	ck_assert_str_eq(check_out, run_out);
	if (!c->test_driver) {
		char want[2048];
		snprintf(want, sizeof(want), "sluice: config: %s:%s\n", file, expected_line);
		ck_assert_str_eq(check_out, want);
	}
	unlink(file);
	rmdir(dir);
}

START_TEST(test_case)
{
	const struct conf_case *c = &cases[_i];
	static struct sluice_config cfg;
	struct app_conf_msg err;
	int rc = sluice_config_parse(&cfg, "t.conf", c->text, &err);
	if (!c->msg) {
		ck_assert_msg(rc == 0, "case %d: %s:%u:%u: %s", _i, err.file, err.line, err.col, err.msg);
		check_valid(c, &cfg);
		return;
	}
	char msg[1024], line[1200];
	expand(c->msg, msg, sizeof(msg));
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_msg(err.line == c->line && err.col == c->col, "case %d: at %u:%u, expected %u:%u (%s)", _i,
		      err.line, err.col, c->line, c->col, err.msg);
	ck_assert_str_eq(err.msg, msg);
	ck_assert_str_eq(err.file, "t.conf");
	snprintf(line, sizeof(line), "%u:%u: error: %s", c->line, c->col, msg);
	if (sluice_bin)
		check_binary(c, line);
}
END_TEST

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, mode), 0);
}

/* Parse `unix { cli-listen 0.0.0.0:5002 cli-password-file PW }` with PW
 * holding text at mode; return the message ("" when it parsed). The error
 * points at the value of cli-password-file (line 2, column 21). */
static void password_case(const char *dir, const char *text, mode_t mode, char *msg, size_t len)
{
	char pw[128], conf[512];
	static struct sluice_config cfg;
	struct app_conf_msg err;
	snprintf(pw, sizeof(pw), "%s/pw", dir);
	write_file(pw, text, mode);
	snprintf(conf, sizeof(conf), "unix {\n  cli-password-file %s\n  cli-listen 0.0.0.0:5002\n}\n", pw);
	int rc = sluice_config_parse(&cfg, "t.conf", conf, &err);
	snprintf(msg, len, "%s", rc ? err.msg : "");
	if (rc) {
		ck_assert_uint_eq(err.line, 2);
		ck_assert_uint_eq(err.col, 21);
	} else {
		ck_assert_str_eq(cfg.unix_conf.cli_password_file, pw);
	}
	unlink(pw);
}

/* A password file lets a non-loopback address through; a file others may
 * read, a malformed line, no line, a user twice or a hash crypt(3) does not
 * know are refused at the key's position, naming the file's own line. The
 * binary's --check says the same. */
START_TEST(test_password_file)
{
	char dir[] = "/tmp/sluice-pw-XXXXXX", msg[600], want[600];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	password_case(dir, "# operators\nadmin:s3cret\nops:$6$saltsalt$As4wrv0kZlfch1du9WeH7qhskyLriQWySXrZzynnvi46nFnNxjdpl6ksRegrrKexvhIa/Iny8S8uF3fVWTMuC1\n",
		      0600, msg, sizeof(msg));
	ck_assert_str_eq(msg, "");
	password_case(dir, "admin:s3cret\n", 0640, msg, sizeof(msg));
	ck_assert_str_eq(msg, "");
	password_case(dir, "admin:s3cret\n", 0644, msg, sizeof(msg));
	snprintf(want, sizeof(want), "'cli-password-file %s/pw': %s/pw: mode 0644 lets others read or write it (chmod o-rw)",
		 dir, dir);
	ck_assert_str_eq(msg, want);
	password_case(dir, "admin:s3cret\n", 0602, msg, sizeof(msg));
	snprintf(want, sizeof(want), "'cli-password-file %s/pw': %s/pw: mode 0602 lets others read or write it (chmod o-rw)",
		 dir, dir);
	ck_assert_str_eq(msg, want);
	password_case(dir, "admin:s3cret\njust-a-word\n", 0600, msg, sizeof(msg));
	snprintf(want, sizeof(want), "'cli-password-file %s/pw': %s/pw:2: expected USER:PASSWORD or USER:$HASH", dir, dir);
	ck_assert_str_eq(msg, want);
	password_case(dir, "admin:\n", 0600, msg, sizeof(msg));
	snprintf(want, sizeof(want), "'cli-password-file %s/pw': %s/pw:1: expected USER:PASSWORD or USER:$HASH", dir, dir);
	ck_assert_str_eq(msg, want);
	password_case(dir, "# nobody\n\n", 0600, msg, sizeof(msg));
	snprintf(want, sizeof(want), "'cli-password-file %s/pw': %s/pw: no USER:PASSWORD line", dir, dir);
	ck_assert_str_eq(msg, want);
	password_case(dir, "a:x\nb:y\na:z\n", 0600, msg, sizeof(msg));
	snprintf(want, sizeof(want), "'cli-password-file %s/pw': %s/pw:3: user 'a' listed twice", dir, dir);
	ck_assert_str_eq(msg, want);
	password_case(dir, "a:$9$nothing\n", 0600, msg, sizeof(msg));
	snprintf(want, sizeof(want), "'cli-password-file %s/pw': %s/pw:1: a hash this system's crypt(3) does not know",
		 dir, dir);
	ck_assert_str_eq(msg, want);

	if (sluice_bin) {
		char pw[128], conf[128], out[2048], text[512];
		snprintf(pw, sizeof(pw), "%s/pw", dir);
		snprintf(conf, sizeof(conf), "%s/c.conf", dir);
		write_file(pw, "admin:s3cret\n", 0644);
		snprintf(text, sizeof(text), "unix {\n  cli-password-file %s\n  cli-listen 0.0.0.0:5002\n}\n", pw);
		write_file(conf, text, 0644);
		ck_assert_int_eq(run_bin("--check", conf, out, sizeof(out)), 2);
		snprintf(want, sizeof(want),
			 "sluice: config: %s:2:21: error: 'cli-password-file %s': %s: mode 0644 lets others read or write "
			 "it (chmod o-rw)\n",
			 conf, pw, pw);
		ck_assert_str_eq(out, want);
		unlink(pw);
		unlink(conf);
	}
	rmdir(dir);
}
END_TEST

/* The printed effective configuration parses back to itself. */
START_TEST(test_round_trip)
{
	static struct sluice_config a, b;
	struct app_conf_msg err;
	const char *text = "unix { daemon log \"/tmp/a b\" cli-mode 0640 }\n"
			   "cpu { corelist-workers 1 idle-max 250us }\n"
			   "buffers { page-size 2M data-size 4096 }\n"
			   "interfaces { x { driver test host-if v0 } }\n"
			   "packet-generator { s { rate 5kpps size 60-70 src-ip 10.0.0.1-10.0.0.9 } }\n";
	ck_assert_int_eq(sluice_config_parse(&a, "a", text, &err), 0);
	char *first = sluice_config_format(&a);
	ck_assert_ptr_nonnull(first);
	ck_assert_msg(sluice_config_parse(&b, "a", first, &err) == 0, "%u:%u: %s\n%s", err.line, err.col, err.msg,
		      first);
	char *second = sluice_config_format(&b);
	ck_assert_str_eq(first, second);
	free(first);
	free(second);
}
END_TEST

/* The embedded default parses into the whole pipeline: one worker and the
 * distributor, the generator's pg0 cross-connected into a shaped nul0, two
 * streams of different DSCP entering ethernet-input on pg0, and the two
 * classes that match them. */
START_TEST(test_default_text)
{
	static struct sluice_config cfg;
	struct app_conf_msg err;
	ck_assert_int_eq(sluice_config_parse(&cfg, "(default)", app_conf_default_text, &err), 0);
	ck_assert_uint_eq(cfg.cpu.workers, 1);
	ck_assert(cfg.dist.enable);
	ck_assert_uint_eq(cfg.interfaces.n, 2);
	ck_assert_str_eq(cfg.interfaces.ifs[0].name, "pg0");
	ck_assert_str_eq(cfg.interfaces.ifs[0].l2_xconnect, "nul0");
	ck_assert_str_eq(cfg.interfaces.ifs[0].shaper, "");
	ck_assert_str_eq(cfg.interfaces.ifs[1].name, "nul0");
	ck_assert_str_eq(cfg.interfaces.ifs[1].driver->name, "null");
	ck_assert_str_eq(cfg.interfaces.ifs[1].l2_xconnect, "");
	uint64_t rate, burst;
	char why[256];
	ck_assert_int_eq(app_shaper_parse(cfg.interfaces.ifs[1].shaper, &rate, &burst, why, sizeof(why)), 0);
	ck_assert_uint_eq(rate, 2000000);
	ck_assert_uint_eq(burst, 16384);
	ck_assert_uint_eq(cfg.pg.n_streams, 2);
	static const uint8_t dscp[2] = { 46, 8 };
	for (uint32_t i = 0; i < 2; i++) {
		ck_assert_str_eq(cfg.pg.streams[i].next_node, "ethernet-input");
		ck_assert_uint_eq(cfg.pg.streams[i].rx_if, 0);
		ck_assert_uint_eq(cfg.pg.streams[i].dscp, dscp[i]);
		ck_assert_uint_gt(cfg.pg.streams[i].rate_pps, 0); /* paced: the main thread sleeps */
		ck_assert(cfg.pg.streams[i].enabled);
	}
	const struct app_sched_conf *sc = &cfg.sched_classes;
	ck_assert_uint_eq(sc->n_classes, 2);
	for (uint32_t i = 0; i < 2; i++) {
		ck_assert_str_eq(sc->classes[i].name, cfg.pg.streams[i].name);
		ck_assert_uint_eq(sc->classes[i].match_kind, SCHED_MATCH_DSCP);
		ck_assert_uint_eq(sc->classes[i].match_value, dscp[i]);
	}
	ck_assert_uint_lt(sc->classes[0].priority, sc->classes[1].priority);
}
END_TEST

/* `plugin default { disable }` turns the rule around; a plugin's own
 * block wins over it, in either order. */
START_TEST(test_plugin_enabled)
{
	static struct sluice_config cfg;
	struct app_conf_msg err;
	ck_assert_int_eq(sluice_config_parse(&cfg, "t", "", &err), 0);
	ck_assert(plugin_conf_enabled(&cfg.plugins, "any.so"));
	ck_assert_int_eq(sluice_config_parse(&cfg, "t",
					     "plugins { plugin a.so { enable } plugin default { disable } "
					     "plugin \"b c.so\" { disable } }",
					     &err),
			 0);
	ck_assert_uint_eq(cfg.plugins.n, 3);
	ck_assert_str_eq(cfg.plugins.plugins[2].name, "b c.so");
	ck_assert(plugin_conf_enabled(&cfg.plugins, "a.so"));
	ck_assert(!plugin_conf_enabled(&cfg.plugins, "b c.so"));
	ck_assert(!plugin_conf_enabled(&cfg.plugins, "other.so"));
	ck_assert_int_eq(sluice_config_parse(&cfg, "t", "plugins { plugin b.so { disable } }", &err), 0);
	ck_assert(!plugin_conf_enabled(&cfg.plugins, "b.so"));
	ck_assert(plugin_conf_enabled(&cfg.plugins, "other.so"));
	/* The keyword block prints back as written and parses to the same. */
	ck_assert_int_eq(sluice_config_parse(&cfg, "t", "plugins { plugin \"b c.so\" { disable } }", &err), 0);
	char *text = sluice_config_format(&cfg);
	ck_assert_ptr_nonnull(strstr(text, "plugins {\n  path " SLUICE_PLUGIN_DIR "\n  plugin \"b c.so\" {\n    disable\n  }\n}\n"));
	free(text);
}
END_TEST

/* A section added at run time (a plugin's, base/conf.h): defaults when
 * unwritten, parsed into its owner's struct, checked, printed after the
 * built-in ones, named in "unknown section" lists; a second one of the
 * same name in a file is a duplicate. */
struct extra_conf {
	uint32_t depth;
	char name[16];
};

static int extra_check(void *obj, struct conf_check *chk)
{
	const struct extra_conf *e = obj;
	if (e->depth == 13) {
		chk->key = "depth";
		snprintf(chk->msg, sizeof(chk->msg), "unlucky");
		return -EINVAL;
	}
	return 0;
}

START_TEST(test_extra_section)
{
	static const struct conf_key keys[] = {
		{ .name = "depth", .type = CONF_UINT, .def = "64", .min = 1, .max = 4096, CONF_FIELD(struct extra_conf, depth) },
		{ .name = "name", .type = CONF_STRING, CONF_FIELD(struct extra_conf, name) },
		{ 0 },
	};
	static const struct conf_section sec = { .name = "extra", .size = sizeof(struct extra_conf), .keys = keys,
						 .check = extra_check };
	static struct extra_conf obj = { .depth = 7, .name = "stale" };
	static const struct conf_section_reg reg = { .sec = &sec, .obj = &obj };
	static struct sluice_config cfg;
	struct app_conf_msg err;
	uint32_t n0 = conf_section_count();
	conf_section_register(&reg);
	ck_assert_uint_eq(conf_section_count(), n0 + 1);
	ck_assert_ptr_eq(conf_section_get(n0), &reg);

	ck_assert_int_eq(sluice_config_parse(&cfg, "t", "", &err), 0);
	ck_assert_uint_eq(obj.depth, 64);
	ck_assert_str_eq(obj.name, "");
	ck_assert_int_eq(sluice_config_parse(&cfg, "t", "unix { }\nextra { depth 5 name x }\n", &err), 0);
	ck_assert_uint_eq(obj.depth, 5);
	ck_assert_str_eq(obj.name, "x");
	char *text = sluice_config_format(&cfg);
	ck_assert_ptr_nonnull(strstr(text, "}\nextra {\n  depth 5\n  name x\n}\n"));
	free(text);

	ck_assert_int_eq(sluice_config_parse(&cfg, "t", "extra {\n depth 13\n}", &err), -EINVAL);
	ck_assert_uint_eq(err.line, 2);
	ck_assert_uint_eq(err.col, 8);
	ck_assert_str_eq(err.msg, "'depth 13': unlucky");
	ck_assert_int_eq(sluice_config_parse(&cfg, "t", "extra { }\nextra { }", &err), -EINVAL);
	ck_assert_str_eq(err.msg, "duplicate section 'extra' (first at line 1)");
	ck_assert_int_eq(sluice_config_parse(&cfg, "t", "extra { size 1 }", &err), -EINVAL);
	ck_assert_str_eq(err.msg, "unknown key 'size' in section 'extra': expected one of depth, name");
	ck_assert_int_eq(sluice_config_parse(&cfg, "t", "nope { }", &err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "ip6, plugins, extra"));
}
END_TEST

/* The loader runs between the plugins section and the rest, with the
 * plugins section as written; its refusal is blamed on that section. */
static uint32_t loader_calls;
static char loader_path[PLUGIN_PATH_SIZE];

static int fake_loader(const struct plugin_conf *c, char *err, size_t errlen)
{
	loader_calls++;
	snprintf(loader_path, sizeof(loader_path), "%s", c->path);
	if (strcmp(c->path, "/refuse") == 0) {
		snprintf(err, errlen, "plugin /refuse/x.so: no");
		return -EINVAL;
	}
	return 0;
}

START_TEST(test_plugin_loader_hook)
{
	static struct sluice_config cfg;
	struct app_conf_msg err;
	sluice_config_set_plugin_loader(fake_loader);
	ck_assert_int_eq(sluice_config_parse(&cfg, "t", "unix { nodaemon }\nplugins { path /p }\nip6 { }", &err), 0);
	ck_assert_uint_eq(loader_calls, 1);
	ck_assert_str_eq(loader_path, "/p");
	ck_assert_str_eq(cfg.plugins.path, "/p");
	ck_assert_int_eq(sluice_config_parse(&cfg, "t", "unix { }\n\nplugins { path /refuse }", &err), -EINVAL);
	ck_assert_uint_eq(err.line, 3);
	ck_assert_str_eq(err.msg, "plugin /refuse/x.so: no");
	/* A malformed section before it: nothing is loaded, the second pass
	 * names the fault. */
	ck_assert_int_eq(sluice_config_parse(&cfg, "t", "unix { \nplugins { path /x }", &err), -EINVAL);
	ck_assert_uint_eq(loader_calls, 2);
	ck_assert_str_eq(err.msg, "unknown key 'plugins' in section 'unix': expected one of nodaemon, daemon, log, "
				  "pidfile, cli-listen, cli-mode, cli-group, cli-max-sessions, cli-idle-timeout, "
				  "cli-max-line, cli-password-file, cli-file-dir, exec");
	sluice_config_set_plugin_loader(NULL);
}
END_TEST

START_TEST(test_load_missing)
{
	static struct sluice_config cfg;
	struct app_conf_msg err;
	char line[600];
	ck_assert_int_eq(sluice_config_load(&cfg, "/nonexistent/x.conf", &err), -ENOENT);
	app_conf_msg_format(&err, "error", line, sizeof(line));
	ck_assert_str_eq(line, "/nonexistent/x.conf: error: cannot open: No such file or directory");
}
END_TEST

/* Values the tables do not use yet: bool, rate, MAC, IPv4. */
START_TEST(test_codec)
{
	struct v {
		bool b;
		uint64_t bps;
		uint8_t mac[6];
		uint32_t ip;
	} v = { 0 };
	static const struct conf_key keys[] = {
		{ .name = "b", .type = CONF_BOOL, CONF_FIELD(struct v, b) },
		{ .name = "r", .type = CONF_RATE, CONF_FIELD(struct v, bps) },
		{ .name = "m", .type = CONF_MAC, CONF_FIELD(struct v, mac) },
		{ .name = "i", .type = CONF_IP4, CONF_FIELD(struct v, ip) },
		{ 0 },
	};
	char err[256], out[64];
	ck_assert_int_eq(conf_value_parse(&keys[0], "enable", &v, err, sizeof(err)), 0);
	ck_assert(v.b);
	ck_assert_int_eq(conf_value_parse(&keys[0], "maybe", &v, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(conf_value_parse(&keys[1], "10mbit", &v, err, sizeof(err)), 0);
	ck_assert_uint_eq(v.bps, 10000000);
	conf_value_format(&keys[1], &v, out, sizeof(out));
	ck_assert_str_eq(out, "10mbit");
	ck_assert_int_eq(conf_value_parse(&keys[1], "10", &v, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(conf_value_parse(&keys[2], "02:00:0a:0b:0c:0d", &v, err, sizeof(err)), 0);
	conf_value_format(&keys[2], &v, out, sizeof(out));
	ck_assert_str_eq(out, "02:00:0a:0b:0c:0d");
	ck_assert_int_eq(conf_value_parse(&keys[2], "02:00:0a:0b:0c", &v, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(conf_value_parse(&keys[2], "0A:0B:0C:0D:0E:0F", &v, err, sizeof(err)), 0);
	conf_value_format(&keys[2], &v, out, sizeof(out));
	ck_assert_str_eq(out, "0a:0b:0c:0d:0e:0f");
	/* Signs and spaces that sscanf's %x takes, the length kept at 17. */
	static const char *const bad_macs[] = { "-1:00:0a:0b:0c:0d", "02:+1:0a:0b:0c:0d", "02: 1:0a:0b:0c:0d",
						"02:00:0a:0b:0c:-d", "02-00-0a-0b-0c-0d", "02:00:0a:0b:0c:0g" };
	for (size_t i = 0; i < sizeof(bad_macs) / sizeof(bad_macs[0]); i++) {
		ck_assert_msg(conf_value_parse(&keys[2], bad_macs[i], &v, err, sizeof(err)) == -EINVAL, "%s accepted",
			      bad_macs[i]);
		ck_assert_int_eq(conf_mac_parse(bad_macs[i], v.mac), -EINVAL);
	}
	ck_assert_int_eq(conf_value_parse(&keys[3], "10.1.2.3", &v, err, sizeof(err)), 0);
	ck_assert_uint_eq(v.ip, 0x0a010203);
	ck_assert_int_eq(conf_value_parse(&keys[3], "10.1.2.256", &v, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "expected an IPv4 address such as 10.0.0.1");
}
END_TEST

int main(int argc, char **argv)
{
	sluice_bin = argc > 1 ? argv[1] : NULL;
	Suite *s = suite_create("conf");
	TCase *tc = tcase_create("configs");
	tcase_add_loop_test(tc, test_case, 0, (int)ARRAY_LEN(cases));
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_password_file);
	tcase_add_test(tc, test_default_text);
	tcase_add_test(tc, test_load_missing);
	tcase_add_test(tc, test_plugin_enabled);
	tcase_add_test(tc, test_extra_section);
	tcase_add_test(tc, test_plugin_loader_hook);
	tcase_add_test(tc, test_codec);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
