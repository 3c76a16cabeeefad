#!/usr/bin/env bash
# Install the Debian packages sluice needs, only those missing.
#   scripts/deps.sh          build and run
#   scripts/deps.sh test     also what the tests use
set -euo pipefail

# libmicrohttpd-dev: the HTTP server of the Prometheus endpoint (statseg { prometheus }).
# libmnl-dev: linux-cp's netlink listener (libnl 3.7 has no nexthop-object
# type, which FRR uses by default; libmnl is the minimal, well-kept one).
# libsystemd-dev: sd_notify for the unit's Type=notify (app/main.c; the
# build works without it, with a Type=simple unit: meson -Dsystemd=disabled).
build_pkgs=(gcc pkg-config meson ninja-build libnuma-dev libcli-dev libcrypt-dev libcjson-dev libpcap-dev check libmicrohttpd-dev libmnl-dev libsystemd-dev)
# prometheus (server and promtool) and curl: tests/statseg/test_prometheus.sh
# scrapes the endpoint with a real Prometheus and lints it with promtool.
# tshark: tests/integration/test_dispatch_trace.sh reads the pcapng dispatch
# trace back (tshark -r) and its per-record comments (frame.comment).
# frr: tests/integration/lcp_frr_*.sh peer sluice with FRR's zebra, bgpd
# and ospfd through its linux-cp TAPs (issue 20's real control plane).
# ndisc6: tests/ip6/test_ip6_netns.sh solicits sluice's MAC with a real
# Neighbor Solicitation from a Linux host (ndisc6 prints the advertised one;
# its rltraceroute6 is tests/integration/ip6_nd_netns.sh's traceroute6).
# iputils-tracepath: ip6_nd_netns.sh's tracepath -6 finds a link's MTU from
# sluice's Packet Too Big.
# gcc-aarch64-linux-gnu: tests/nic/cross_aarch64.sh builds drivers/ for
# aarch64, whose I/O barriers (drivers/pci/io_barrier.h) differ from x86-64's;
# libc6-dev-arm64-cross, its C library headers (only a Recommends of the
# compiler, which --no-install-recommends leaves out).
# debhelper dpkg-dev fakeroot lintian: tests/package/test_package.sh builds
# the Debian package (dpkg-buildpackage, dh with the meson buildsystem) and
# lints it; systemd (systemd-analyze verify, systemd-sysusers for the
# package's group) and man-db (man -w, man --warnings) check what it installs
# (also tests/app/test_install.sh's man pages).
test_pkgs=(debhelper dpkg-dev fakeroot lintian systemd man-db iproute2 iputils-ping iperf3 tcpdump ethtool tcpreplay graphviz expect tmux strace procps python3 clang libclang-rt-14-dev prometheus curl tshark frr ndisc6 iputils-tracepath gcc-aarch64-linux-gnu libc6-dev-arm64-cross)

want=("${build_pkgs[@]}")
if [ "${1:-}" = test ]; then
	want+=("${test_pkgs[@]}")
fi

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# Wait for another apt run (unattended upgrades, a parallel job) to finish.
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
