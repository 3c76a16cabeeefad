#!/usr/bin/env python3
"""Is sluice's FIB, as far as Linux gave it, exactly the kernel's table?

  lcp_fib_equal.py KERNEL_JSON FIB_JSON [SAMPLE]

KERNEL_JSON: `ip -j route show table main` (or `ip -6 -j ...`); FIB_JSON:
sluice's `show ip fib json` (or `show ip6 fib json`). The kernel's side:
every route that is not `proto kernel` (those map to sluice's own connected
and local routes), unicast via a gateway, as prefix -> gateway; blackhole,
unreachable and prohibit routes as prefix -> their type. sluice's side:
every route whose source is linux/..., prefix -> next hop, or its kind for
those three ("drop" read as blackhole). Prefixes and addresses compared in
ipaddress's form, so both families' spellings meet.
Prints the counts and the first differences; exits 1 when the two differ.
With SAMPLE, also prints SAMPLE random prefixes checked one by one (a spot
check that reads the same as the whole comparison: both sides, one key).
"""
import ipaddress
import json
import random
import sys


REFUSING = ("blackhole", "unreachable", "prohibit")


def norm(prefix):
    return str(ipaddress.ip_network(prefix, strict=False))


def norm_addr(a):
    return str(ipaddress.ip_address(a))


def kernel_routes(path):
    out = {}
    for r in json.load(open(path)):
        if r.get("protocol") == "kernel":
            continue
        dst = r["dst"]
        v6 = ":" in dst or ":" in r.get("gateway", "")
        if dst == "default":
            dst = "::/0" if v6 else "0.0.0.0/0"
        elif "/" not in dst:
            dst += "/128" if v6 else "/32"
        dst = norm(dst)
        if r.get("type") in REFUSING:
            out[dst] = r["type"]
        elif "gateway" in r:
            out[dst] = norm_addr(r["gateway"])
    return out


def fib_routes(path):
    out = {}
    for r in json.load(open(path))["routes"]:
        if not r.get("source", "").startswith("linux/"):
            continue
        kind = "blackhole" if r["kind"] == "drop" else r["kind"]
        out[norm(r["prefix"])] = kind if kind in REFUSING else norm_addr(r["next_hop"])
    return out


def main():
    k, f = kernel_routes(sys.argv[1]), fib_routes(sys.argv[2])
    only_k = sorted(set(k) - set(f))
    only_f = sorted(set(f) - set(k))
    differ = sorted(p for p in set(k) & set(f) if k[p] != f[p])
    if len(sys.argv) > 3:
        keys = sorted(k)
        sample = random.Random(1).sample(keys, min(int(sys.argv[3]), len(keys)))
        bad = [p for p in sample if f.get(p) != k[p]]
        print(f"spot check: {len(sample)} random kernel routes, {len(sample) - len(bad)} equal in sluice's FIB")
    print(f"kernel {len(k)} routes, sluice's FIB {len(f)} from linux; only in the kernel {len(only_k)}, "
          f"only in sluice {len(only_f)}, different next hop {len(differ)}")
    for p in only_k[:5]:
        print(f"  only in the kernel: {p} via {k[p]}")
    for p in only_f[:5]:
        print(f"  only in sluice: {p} via {f[p]}")
    for p in differ[:5]:
        print(f"  {p}: kernel {k[p]}, sluice {f[p]}")
    sys.exit(1 if only_k or only_f or differ else 0)


if __name__ == "__main__":
    main()
