#!/usr/bin/env python3
"""Route sets for the netlink scale test and bench/lcp, as `ip -batch` files.

  lcp_routes.py N SEED VIA DEV OUT_PREFIX

With an IPv6 VIA (a colon in it), IPv6 prefixes instead: lengths /40 to
/64 by fours, /96 and /128 in turn, drawn from 2001:db8:100::/40 to
2001:db8:ffff::/48 (clear of the tests' own 2001:db8:1::/64 and
2001:db8:2::/64).

Writes OUT_PREFIX.add ("route add P via VIA dev DEV proto static") and
OUT_PREFIX.del ("route del P"), N distinct prefixes, lengths /16 to /32 in
turn (so a seventh-odd of them are /25../32 and land in the FIB's second
level, its tbl8 groups), drawn with SEED from 11.0.0.0 to 99.255.255.255
(clear of the tests' own 10/8). The /25../32 ones fall under at most
16,384 distinct /24s, so the tbl8 groups they need stay within the FIB's
default 65,536 at 500,000 routes: a full Internet table has few routes
longer than /24, and those cluster.
"""
import ipaddress
import random
import sys

V6_LENGTHS = (40, 44, 48, 52, 56, 60, 64, 96, 128)


def v6_prefixes(n, rnd):
    """n distinct IPv6 prefixes (text), lengths V6_LENGTHS in turn."""
    seen = set()
    i = 0
    while len(seen) < n:
        plen = V6_LENGTHS[i % len(V6_LENGTHS)]
        i += 1
        a = (0x20010db8 << 96) | (rnd.randint(0x100, 0xffff) << 80) | rnd.getrandbits(80)
        a &= ((1 << 128) - 1) ^ ((1 << (128 - plen)) - 1)
        if (a, plen) in seen:
            continue
        seen.add((a, plen))
        yield f"{ipaddress.IPv6Address(a)}/{plen}"


def main():
    n, seed, via, dev, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    rnd = random.Random(seed)
    if ":" in via:
        with open(out + ".add", "w") as add, open(out + ".del", "w") as dele:
            for p in v6_prefixes(n, rnd):
                add.write(f"route add {p} via {via} dev {dev} proto static\n")
                dele.write(f"route del {p}\n")
        return
    lo, hi = 11 << 24, (100 << 24) - 1
    groups = [rnd.randint(lo, hi) & 0xffffff00 for _ in range(16384)]
    seen = set()
    with open(out + ".add", "w") as add, open(out + ".del", "w") as dele:
        i = 0
        while len(seen) < n:
            plen = 16 + i % 17
            i += 1
            if plen > 24:
                a = rnd.choice(groups) | rnd.getrandbits(8)
            else:
                a = rnd.randint(lo, hi)
            a &= (0xffffffff << (32 - plen)) & 0xffffffff
            if (a, plen) in seen:
                continue
            seen.add((a, plen))
            p = f"{a >> 24}.{(a >> 16) & 255}.{(a >> 8) & 255}.{a & 255}/{plen}"
            add.write(f"route add {p} via {via} dev {dev} proto static\n")
            dele.write(f"route del {p}\n")


if __name__ == "__main__":
    main()
