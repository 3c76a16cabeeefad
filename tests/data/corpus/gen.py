#!/usr/bin/env python3
"""The hardening corpus: hostile and special frames, each with the exact
counters sluice must show for it. Writes manifest.txt (read by
tests/hardening/test_corpus.c) and one seed per case for the packet fuzz
harness (tests/fuzz/seeds/pkt/, the harness's record format).

The topology is tests/fuzz/pkt_graph.h's:
  host A 10.1.0.2 -- a 10.1.0.1/24 [sluice] b 10.2.0.1/24 -- host B 10.2.0.2
                     c (L2, cross-connected to b)
  routes: 10.66.0.0/16 blackhole, 10.67.0.0/16 unreachable, 10.68.0.0/16
  prohibit, 10.9.0.0/16 via A and via B (ECMP)
Run from anywhere: python3 tests/data/corpus/gen.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = os.path.join(HERE, '..', '..', 'fuzz', 'seeds', 'pkt')

MAC = {'a': bytes.fromhex('02000000000a'), 'b': bytes.fromhex('02000000000b'),
       'c': bytes.fromhex('02000000000c'), 'ha': bytes.fromhex('02aa00000001'),
       'hb': bytes.fromhex('02bb00000001'), 'bcast': b'\xff' * 6,
       'mcast': bytes.fromhex('01005e000001'), 'other': bytes.fromhex('02cc00000001')}
A1, HA, B1, HB = '10.1.0.1', '10.1.0.2', '10.2.0.1', '10.2.0.2'
PORT = {'a': 0, 'b': 1, 'c': 2, 'x': 3}

# The counters named in the expectations (node, string), as the nodes spell them.
RUNT = ('ethernet-input', 'runt (shorter than an Ethernet header)')
NOT_FOR_US = ('ethernet-input', "destination MAC not this interface's (L3)")
UNKNOWN_TYPE = ('ethernet-input', 'unknown ethertype on an L3 interface')
IP6_NOT_ENABLED = ('ip6-input', 'IPv6 not enabled on the interface')
NO_IF = ('ethernet-input', 'no such rx interface')
TAGGED = ('ethernet-input', 'VLAN or QinQ tag on an untagged interface')
IP_SHORT = ('ip4-input', 'shorter than an IPv4 header')
IP_VERSION = ('ip4-input', 'IP version not 4')
IP_IHL = ('ip4-input', 'header length below 5 words')
IP_HDR_BEYOND = ('ip4-input', 'header longer than the frame')
IP_LEN_BEYOND = ('ip4-input', 'total length beyond the frame')
IP_LEN_BELOW = ('ip4-input', 'total length below the header length')
IP_CSUM = ('ip4-input', 'bad header checksum')
IP_MCAST = ('ip4-input', 'multicast or broadcast destination (not forwarded)')
IP_MARTIAN = ('ip4-input', 'martian source or destination address')
IP_L2BCAST = ('ip4-input', 'unicast IP in a link-layer broadcast or multicast')
NO_ROUTE = ('ip4-lookup', 'no route')
TTL_EXPIRED = ('ip4-rewrite', 'TTL expired: ICMP time-exceeded sent')
FRAG_NEEDED = ('ip4-rewrite', 'over MTU with DF: ICMP fragmentation-needed sent')
RATE_LIMITED = ('ip4-rewrite', 'ICMP error rate-limited (packet dropped)')
NOT_ALLOWED = ('ip4-rewrite', 'no ICMP error allowed for the packet (dropped)')
NO_FRAG = ('ip4-rewrite', 'over MTU without DF (fragmentation not supported)')
ARP_REPLIED = ('arp-input', 'ARP request for us answered')
ARP_CONSUMED = ('arp-input', 'ARP for us consumed (sender learnt)')
ARP_NOT_US = ('arp-input', 'ARP target not our address')
ARP_SHORT = ('arp-input', 'ARP packet too short')
ARP_NOT_IP4 = ('arp-input', 'ARP not Ethernet/IPv4')
ARP_OPCODE = ('arp-input', 'ARP opcode neither request nor reply')
PUNT_PROTO = ('ip4-local', 'punt: protocol not handled')
PUNT_ICMP = ('ip4-local', 'punt: ICMP type not handled')
PUNT_FRAG = ('ip4-local', 'punt: fragment (no reassembly)')
ECHO_REPLIED = ('icmp4-echo', 'echo replies sent')
ECHO_CSUM = ('icmp4-echo', 'bad ICMP checksum')
ECHO_SHORT = ('icmp4-echo', 'echo request shorter than an ICMP header')
ARP_HELD = ('ip4-arp', 'held for ARP resolution')
ARP_REQ = ('ip4-arp', 'ARP request sent')
ARP_SUBNET_BCAST = ('ip4-arp', 'subnet broadcast destination (not resolved)')
BLACKHOLE = ('ip4-lookup', 'blackhole route (dropped)')
UNREACH_SENT = ('ip4-rewrite', 'unreachable route: ICMP host-unreachable sent')
PROHIBIT_SENT = ('ip4-rewrite', 'prohibit route: ICMP administratively-prohibited sent')


def csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def ip(a):
    return bytes(int(x) for x in a.split('.'))


def eth(dst, src, etype):
    return MAC.get(dst, dst) + MAC.get(src, src) + struct.pack('!H', etype)


def ip4(src, dst, payload, proto=17, ttl=64, frag=0, options=b'', total=None, ihl=None, version=4,
        bad_csum=False, dscp=0):
    hl = 20 + len(options)
    ihl = hl // 4 if ihl is None else ihl
    total = hl + len(payload) if total is None else total
    h = struct.pack('!BBHHHBBH4s4s', version << 4 | ihl, dscp << 2, total, 0x1234, frag, ttl, proto, 0,
                    ip(src), ip(dst)) + options
    c = csum(h)
    if bad_csum:
        c ^= 0x5555
    return h[:10] + struct.pack('!H', c) + h[12:] + payload


def icmp(type_, code=0, body=b'\x12\x34\x00\x01' + bytes(range(16)), bad_csum=False):
    m = struct.pack('!BBH', type_, code, 0) + body
    c = csum(m) ^ (0x5555 if bad_csum else 0)
    return m[:2] + struct.pack('!H', c) + m[4:]


def udp(n=30):
    return bytes((i * 7 + 1) & 0xff for i in range(n))


def arp(op, sha, spa, tha, tpa, htype=1, ptype=0x0800, hlen=6, plen=4, pad=True):
    body = struct.pack('!HHBBH', htype, ptype, hlen, plen, op) + MAC.get(sha, sha) + ip(spa) + \
        MAC.get(tha, tha) + ip(tpa)
    return body + (bytes(18) if pad else b'')


def v4(dmac, src, dst, payload=None, smac='ha', **kw):
    return eth(dmac, smac, 0x0800) + ip4(src, dst, udp() if payload is None else payload, **kw)


def fwd(**kw):
    """A UDP packet from A to B, through a."""
    return v4('a', HA, HB, **kw)


cases = []


def case(part, name, why, frames, expect=(), tx=None):
    """frames: [(port, bytes)]; expect: [((node, string), count)]; tx: {port: n}."""
    cases.append((part, name, why, frames, expect, tx or {}))


M, S = 'malformed', 'special'
# ---- malformed: each in a named error counter of the node that rejected it
case(M, 'runt-0', 'empty frame', [('a', b'')], [(RUNT, 1)])
case(M, 'runt-13', 'one byte short of an Ethernet header', [('a', fwd()[:13])], [(RUNT, 1)])
case(M, 'runt-13-l2', 'runt on the cross-connected port too', [('c', fwd()[:13])], [(RUNT, 1)])
case(M, 'no-rx-interface', 'rx_if names no interface', [('x', fwd())], [(NO_IF, 1)])
case(M, 'ip4-truncated-19', 'IPv4 header cut at 19 bytes', [('a', fwd()[:14 + 19])], [(IP_SHORT, 1)])
case(M, 'ip4-truncated-0', 'ethertype IPv4 and nothing after', [('a', fwd()[:14])], [(IP_SHORT, 1)])
case(M, 'ip4-version-6', 'version 6 under ethertype 0x0800', [('a', fwd(version=6))], [(IP_VERSION, 1)])
case(M, 'ip4-ihl-0', 'IHL 0', [('a', fwd(ihl=0))], [(IP_IHL, 1)])
case(M, 'ip4-ihl-4', 'IHL 4', [('a', fwd(ihl=4))], [(IP_IHL, 1)])
case(M, 'ip4-ihl-beyond-frame', 'IHL 15 (60 bytes) in a 40-byte packet',
     [('a', fwd(ihl=15, payload=udp(20), total=40))], [(IP_HDR_BEYOND, 1)])
case(M, 'ip4-length-beyond-frame', 'total length one byte past the frame',
     [('a', fwd(total=51))], [(IP_LEN_BEYOND, 1)])
case(M, 'ip4-length-65535', 'total length 65535 in a 64-byte frame', [('a', fwd(total=65535))],
     [(IP_LEN_BEYOND, 1)])
case(M, 'ip4-length-below-header', 'total length 19', [('a', fwd(total=19))], [(IP_LEN_BELOW, 1)])
case(M, 'ip4-length-below-options', 'IHL 6 and total length 22',
     [('a', fwd(options=b'\x01\x01\x01\x00', total=22))], [(IP_LEN_BELOW, 1)])
case(M, 'ip4-bad-checksum', 'header checksum off', [('a', fwd(bad_csum=True))], [(IP_CSUM, 1)])
case(M, 'ttl-0', 'TTL 0 to be forwarded: time-exceeded to A', [('a', fwd(ttl=0))],
     [(TTL_EXPIRED, 1)], {'a': 1})
case(M, 'ttl-1', 'TTL 1 to be forwarded: time-exceeded to A', [('a', fwd(ttl=1))],
     [(TTL_EXPIRED, 1)], {'a': 1})
case(M, 'arp-short', 'ARP cut at 27 bytes',
     [('a', eth('bcast', 'ha', 0x0806) + arp(1, 'ha', HA, bytes(6), A1, pad=False)[:27])], [(ARP_SHORT, 1)])
case(M, 'arp-hlen-8', 'hardware length 8',
     [('a', eth('bcast', 'ha', 0x0806) + arp(1, 'ha', HA, bytes(6), A1, hlen=8))], [(ARP_NOT_IP4, 1)])
case(M, 'arp-plen-16', 'protocol length 16',
     [('a', eth('bcast', 'ha', 0x0806) + arp(1, 'ha', HA, bytes(6), A1, plen=16))], [(ARP_NOT_IP4, 1)])
case(M, 'arp-htype-6', 'hardware type IEEE 802',
     [('a', eth('bcast', 'ha', 0x0806) + arp(1, 'ha', HA, bytes(6), A1, htype=6))], [(ARP_NOT_IP4, 1)])
case(M, 'arp-ptype-ipv6', 'protocol type 0x86dd',
     [('a', eth('bcast', 'ha', 0x0806) + arp(1, 'ha', HA, bytes(6), A1, ptype=0x86dd))], [(ARP_NOT_IP4, 1)])
case(M, 'arp-opcode-3', 'RARP request opcode',
     [('a', eth('bcast', 'ha', 0x0806) + arp(3, 'ha', HA, bytes(6), A1))], [(ARP_OPCODE, 1)])
case(M, 'icmp-truncated', 'echo request to the router, 4 bytes of ICMP',
     [('a', v4('a', HA, A1, icmp(8)[:4], proto=1))], [(ECHO_SHORT, 1)])
case(M, 'icmp-bad-checksum', 'echo request to the router, ICMP checksum off',
     [('a', v4('a', HA, A1, icmp(8, bad_csum=True), proto=1))], [(ECHO_CSUM, 1)])
case(M, 'martian-src-loopback', 'source 127.0.0.1', [('a', v4('a', '127.0.0.1', HB))], [(IP_MARTIAN, 1)])
case(M, 'martian-src-zero', 'source 0.0.0.0', [('a', v4('a', '0.0.0.0', HB))], [(IP_MARTIAN, 1)])
case(M, 'martian-src-this-net', 'source 0.1.2.3', [('a', v4('a', '0.1.2.3', HB))], [(IP_MARTIAN, 1)])
case(M, 'martian-src-multicast', 'source 224.0.0.5', [('a', v4('a', '224.0.0.5', HB))], [(IP_MARTIAN, 1)])
case(M, 'martian-src-class-e', 'source 240.0.0.1', [('a', v4('a', '240.0.0.1', HB))], [(IP_MARTIAN, 1)])
case(M, 'martian-dst-loopback', 'destination 127.0.0.1', [('a', v4('a', HA, '127.0.0.1'))], [(IP_MARTIAN, 1)])
case(M, 'martian-dst-zero', 'destination 0.0.0.0', [('a', v4('a', HA, '0.0.0.0'))], [(IP_MARTIAN, 1)])
case(M, 'dst-multicast', 'destination 224.0.0.1 (no multicast routing)', [('a', v4('a', HA, '224.0.0.1'))],
     [(IP_MCAST, 1)])
case(M, 'dst-limited-broadcast', 'destination 255.255.255.255', [('a', v4('a', HA, '255.255.255.255'))],
     [(IP_MCAST, 1)])
case(M, 'dst-class-e', 'destination 240.0.0.1', [('a', v4('a', HA, '240.0.0.1'))], [(IP_MCAST, 1)])
case(M, 'not-for-us-mac', "another station's unicast MAC on an L3 port", [('a', v4('other', HA, HB))],
     [(NOT_FOR_US, 1)])
case(M, 'no-route', 'destination 8.8.8.8, no default route', [('a', v4('a', HA, '8.8.8.8'))], [(NO_ROUTE, 1)])

# ---- valid but special: forwarded, answered, or counted under a named reason
case(S, 'forward', 'plain UDP from A to B', [('a', fwd())], [], {'b': 1})
case(S, 'forward-padded', 'a 28-byte packet in a 60-byte frame: padding trimmed, forwarded',
     [('a', fwd(payload=udp(8)) + bytes(60 - 42))], [], {'b': 1})
case(S, 'forward-mtu', 'exactly the 1500-byte MTU', [('a', fwd(payload=udp(1480)))], [], {'b': 1})
case(S, 'echo-request', 'ping the router: answered', [('a', v4('a', HA, A1, icmp(8), proto=1))],
     [(ECHO_REPLIED, 1)], {'a': 1})
case(S, 'echo-request-ttl-1', 'ping the router with TTL 1: local delivery, answered',
     [('a', v4('a', HA, A1, icmp(8), proto=1, ttl=1))], [(ECHO_REPLIED, 1)], {'a': 1})
case(S, 'echo-request-far-side', "ping b's address through a: answered",
     [('a', v4('a', HA, B1, icmp(8), proto=1))], [(ECHO_REPLIED, 1)], {'a': 1})
case(S, 'arp-request', 'who has 10.1.0.1: answered',
     [('a', eth('bcast', 'ha', 0x0806) + arp(1, 'ha', HA, bytes(6), A1))], [(ARP_REPLIED, 1)], {'a': 1})
case(S, 'arp-reply', 'B says where it is: learnt, consumed',
     [('b', eth('b', 'hb', 0x0806) + arp(2, 'hb', HB, 'b', B1))], [(ARP_CONSUMED, 1)])
case(S, 'arp-other-target', 'who has 10.1.0.99: not ours',
     [('a', eth('bcast', 'ha', 0x0806) + arp(1, 'ha', HA, bytes(6), '10.1.0.99'))], [(ARP_NOT_US, 1)])
case(S, 'fragment-first', 'first fragment (MF) forwarded', [('a', fwd(frag=0x2000))], [], {'b': 1})
case(S, 'fragment-last', 'non-first fragment forwarded', [('a', fwd(frag=0x00b9))], [], {'b': 1})
case(S, 'fragment-to-router', 'a fragment for the router: no reassembly',
     [('a', v4('a', HA, A1, icmp(8), proto=1, frag=0x2000))], [(PUNT_FRAG, 1)])
case(S, 'options-nop', 'IHL 6 with NOP options: forwarded untouched',
     [('a', fwd(options=b'\x01\x01\x01\x00'))], [], {'b': 1})
case(S, 'options-record-route', 'record route option: forwarded',
     [('a', fwd(options=b'\x07\x0b\x04' + bytes(8) + b'\x00'))], [], {'b': 1})
case(S, 'options-to-router', 'echo request with options: answered',
     [('a', v4('a', HA, A1, icmp(8), proto=1, options=b'\x01\x01\x01\x00'))], [(ECHO_REPLIED, 1)], {'a': 1})
case(S, 'udp-to-router', 'UDP to the router: no local service', [('a', v4('a', HA, A1))], [(PUNT_PROTO, 1)])
case(S, 'icmp-timestamp-to-router', 'ICMP timestamp request to the router: not handled',
     [('a', v4('a', HA, A1, icmp(13), proto=1))], [(PUNT_ICMP, 1)])
case(S, 'vlan-8100', '802.1Q tag on an untagged L3 port',
     [('a', eth('a', 'ha', 0x8100) + b'\x00\x64\x08\x00' + ip4(HA, HB, udp()))], [(TAGGED, 1)])
case(S, 'qinq-88a8', '802.1ad outer tag on an untagged L3 port',
     [('a', eth('a', 'ha', 0x88a8) + b'\x00\x64\x81\x00\x00\x65\x08\x00' + ip4(HA, HB, udp()))], [(TAGGED, 1)])
case(S, 'qinq-9100', 'pre-standard QinQ tag on an untagged L3 port',
     [('a', eth('a', 'ha', 0x9100) + b'\x00\x64\x08\x00' + ip4(HA, HB, udp()))], [(TAGGED, 1)])
case(S, 'vlan-on-l2-port', 'a tagged frame on the cross-connected port: carried as it is',
     [('c', eth('hb', 'ha', 0x8100) + b'\x00\x64\x08\x00' + ip4(HA, HB, udp()))], [], {'b': 1})
case(S, 'unknown-ethertype', 'ethertype 0x88b5 (local experimental)',
     [('a', eth('a', 'ha', 0x88b5) + bytes(46))], [(UNKNOWN_TYPE, 1)])
case(S, 'ipv6', 'IPv6 to ip6-input, which drops it: IPv6 is not enabled on the port',
     [('a', eth('a', 'ha', 0x86dd) + b'\x60' + bytes(39) + udp(8))], [(IP6_NOT_ENABLED, 1)])
case(S, 'l2-broadcast-unicast-ip', 'unicast IP to B in an Ethernet broadcast (RFC 1812 5.3.4)',
     [('a', v4('bcast', HA, HB))], [(IP_L2BCAST, 1)])
case(S, 'l2-multicast-unicast-ip', 'unicast IP to the router in an Ethernet multicast',
     [('a', v4('mcast', HA, A1, icmp(8), proto=1))], [(IP_L2BCAST, 1)])
# The packet fuzz harness defines scheduling classes (tests/fuzz/fuzz_pkt.c:
# ef = DSCP 46, from-c = rx interface c, icmp, udp); these reach each class
# through sched-ingress there. Here, with no class defined, they are plain.
case(S, 'dscp-ef', 'UDP marked DSCP 46 (EF): forwarded like any other', [('a', fwd(dscp=46))], [], {'b': 1})
case(S, 'vlan-dscp-ef', 'EF under an 802.1Q tag on an untagged L3 port',
     [('a', eth('a', 'ha', 0x8100) + b'\x00\x64\x08\x00' + ip4(HA, HB, udp(), dscp=46))], [(TAGGED, 1)])
case(S, 'mixed-classes', 'one burst of every class interleaved: each forwarded, answered or counted',
     [('a', fwd()), ('a', v4('a', HA, A1, icmp(8), proto=1)), ('a', fwd(dscp=46)),
      ('c', eth('hb', 'ha', 0x0800) + ip4(HA, HB, udp())),
      ('a', eth('bcast', 'ha', 0x0806) + arp(1, 'ha', HA, bytes(6), A1)), ('a', fwd(dscp=46)),
      ('a', v4('a', HA, B1, icmp(8), proto=1)), ('a', fwd()), ('a', v4('a', HA, HB, proto=6))],
     [(ECHO_REPLIED, 2), (ARP_REPLIED, 1)], {'a': 3, 'b': 6})
case(S, 'jumbo-df', '3000 bytes (two buffers) with DF on a 1500 MTU: fragmentation-needed to A',
     [('a', fwd(payload=udp(2980), frag=0x4000))], [(FRAG_NEEDED, 1)], {'a': 1})
case(S, 'jumbo-no-df', '3000 bytes (two buffers) without DF: no fragmentation here, counted',
     [('a', fwd(payload=udp(2980)))], [(NO_FRAG, 1)])
case(S, 'jumbo-to-router', '4000-byte echo request (two buffers) to the router: answered across the chain, '
     'and the 4000-byte reply (no DF) is over the 1500 MTU back to A: counted, not fragmented',
     [('a', v4('a', HA, A1, icmp(8, body=b'\x00\x01\x00\x01' + udp(3972)), proto=1))],
     [(ECHO_REPLIED, 1), (NO_FRAG, 1)])
case(S, 'jumbo-to-router-bad-checksum', '4000-byte echo request whose ICMP checksum is wrong: '
     'checked over both buffers, dropped',
     [('a', v4('a', HA, A1, icmp(8, body=b'\x00\x01\x00\x01' + udp(3972), bad_csum=True), proto=1))],
     [(ECHO_CSUM, 1)])
case(S, 'icmp-error-about-icmp-error', 'TTL 1 destination-unreachable: no error about an error',
     [('a', v4('a', HA, HB, icmp(3, 1), proto=1, ttl=1))], [(NOT_ALLOWED, 1)])
case(S, 'ttl-1-rate-limited', '12 expiring packets at once: 10 answered (the burst), 2 counted',
     [('a', fwd(ttl=1))] * 12, [(TTL_EXPIRED, 10), (RATE_LIMITED, 2)], {'a': 10})
case(S, 'unresolved-next-hop', 'to 10.2.0.3, unknown: held, ARP request out of b',
     [('a', v4('a', HA, '10.2.0.3'))], [(ARP_HELD, 1), (ARP_REQ, 1)], {'b': 1})
case(S, 'subnet-broadcast', "to 10.2.0.255, b's subnet broadcast: not resolved",
     [('a', v4('a', HA, '10.2.0.255'))], [(ARP_SUBNET_BCAST, 1)])
case(S, 'route-blackhole', 'to 10.66.0.1, a blackhole route: dropped, counted apart from no route',
     [('a', v4('a', HA, '10.66.0.1'))], [(BLACKHOLE, 1)])
case(S, 'route-unreachable', 'to 10.67.0.1, an unreachable route: ICMP host unreachable (3/1) to A',
     [('a', v4('a', HA, '10.67.0.1'))], [(UNREACH_SENT, 1)], {'a': 1})
case(S, 'route-prohibit', 'to 10.68.0.1, a prohibit route: ICMP administratively prohibited (3/13) to A',
     [('a', v4('a', HA, '10.68.0.1'))], [(PROHIBIT_SENT, 1)], {'a': 1})


def main():
    os.makedirs(SEEDS, exist_ok=True)
    for f in os.listdir(SEEDS):
        os.remove(os.path.join(SEEDS, f))
    out = ['# The hardening corpus, written by gen.py (edit that, then run it).',
           '# case PART NAME / why TEXT / frame PORT HEX (PORT a, b, c, or x: no such',
           '# interface) / expect NODE COUNT ERROR-STRING: every non-zero error counter',
           '# after the case, exactly / tx A B C: packets sent per port / end', '']
    for part, name, why, frames, expect, tx in cases:
        out.append('case %s %s' % (part, name))
        out.append('why %s' % why)
        seed = b''
        for port, fr in frames:
            out.append('frame %s %s' % (port, fr.hex()))
            seed += struct.pack('!BH', PORT[port], len(fr)) + fr
        for (node, string), n in expect:
            out.append('expect %s %d %s' % (node, n, string))
        out.append('tx %d %d %d' % (tx.get('a', 0), tx.get('b', 0), tx.get('c', 0)))
        out.append('end')
        out.append('')
        with open(os.path.join(SEEDS, '%s-%s' % (part, name)), 'wb') as f:
            f.write(seed)
    with open(os.path.join(HERE, 'manifest.txt'), 'w') as f:
        f.write('\n'.join(out))
    print('%d cases' % len(cases))


main()
