#!/usr/bin/env python3
"""Seeds for the flow-tag harness (fuzz_dist.c): one frame per file, one of
each kind of frame the distributor's software hash tells apart, with and
without an 802.1Q tag. Run from anywhere: python3 tests/fuzz/gen_dist_seeds.py
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'seeds', 'dist')
MACS = bytes.fromhex('02000000000a02aa00000001')
VLAN = b'\x81\x00\x00\x64'


def ip4(proto, l4, frag=0, ihl=5):
    opts = bytes(max(ihl - 5, 0) * 4)
    return struct.pack('!BBHHHBBH4s4s', 0x40 | ihl, 0, 20 + len(opts) + len(l4), 1, frag, 64, proto, 0,
                       bytes([10, 1, 0, 2]), bytes([10, 2, 0, 2])) + opts + l4


def ip6(nh, l4):
    return struct.pack('!IHBB', 0x60000000, len(l4), nh, 64) + bytes(range(1, 17)) + bytes(range(17, 33)) + l4


PORTS = struct.pack('!HH', 40000, 5201) + bytes(16)
SEEDS = {
    'runt-13': MACS[:13],
    'arp': MACS + b'\x08\x06' + bytes(28),
    'qinq-88a8': MACS + b'\x88\xa8\x00\x64\x81\x00\x00\x65\x08\x00' + ip4(17, PORTS),
    'vlan-short': MACS + b'\x81\x00\x00',
    'vlan-arp': MACS + VLAN + b'\x08\x06' + bytes(28),
    'ip4-tcp': MACS + b'\x08\x00' + ip4(6, PORTS),
    'ip4-udp': MACS + b'\x08\x00' + ip4(17, PORTS),
    'ip4-icmp': MACS + b'\x08\x00' + ip4(1, PORTS),
    'ip4-udp-first-fragment': MACS + b'\x08\x00' + ip4(17, PORTS, frag=0x2000),
    'ip4-udp-later-fragment': MACS + b'\x08\x00' + ip4(17, PORTS, frag=0x00b9),
    'ip4-udp-df': MACS + b'\x08\x00' + ip4(17, PORTS, frag=0x4000),
    'ip4-udp-options': MACS + b'\x08\x00' + ip4(17, PORTS, ihl=6),
    'ip4-udp-ihl-3': MACS + b'\x08\x00' + ip4(17, PORTS, ihl=3),
    'ip4-udp-ports-cut': MACS + b'\x08\x00' + ip4(17, PORTS)[:23],
    'ip4-version-6': MACS + b'\x08\x00' + b'\x65' + ip4(17, PORTS)[1:],
    'ip4-udp-jumbo': MACS + b'\x08\x00' + ip4(17, PORTS + bytes(3000)),
    'vlan-ip4-udp': MACS + VLAN + b'\x08\x00' + ip4(17, PORTS),
    'ip6-tcp': MACS + b'\x86\xdd' + ip6(6, PORTS),
    'ip6-udp': MACS + b'\x86\xdd' + ip6(17, PORTS),
    'ip6-icmp6': MACS + b'\x86\xdd' + ip6(58, PORTS),
    'ip6-udp-ports-cut': MACS + b'\x86\xdd' + ip6(17, PORTS)[:43],
    'ip6-version-4': MACS + b'\x86\xdd' + b'\x40' + ip6(17, PORTS)[1:],
    'vlan-ip6-tcp': MACS + VLAN + b'\x86\xdd' + ip6(6, PORTS),
}

os.makedirs(OUT, exist_ok=True)
for f in os.listdir(OUT):
    os.remove(os.path.join(OUT, f))
for name, frame in SEEDS.items():
    with open(os.path.join(OUT, name), 'wb') as f:
        f.write(frame)
print('%d seeds' % len(SEEDS))
