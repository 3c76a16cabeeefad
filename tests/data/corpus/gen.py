#!/usr/bin/env python3
"""The hardening corpus: hostile and special frames, each with the exact
counters sluice must show for it. Writes manifest.txt (read by
tests/hardening/test_corpus.c) and one seed per case for the packet fuzz
harness (tests/fuzz/seeds/pkt/, the harness's record format).

The topology is tests/fuzz/pkt_graph.h's:
  host A 10.1.0.2 -- a 10.1.0.1/24 [sluice] b 10.2.0.1/24 -- host B 10.2.0.2
  2001:db8:1::2      2001:db8:1::1/64    2001:db8:2::1/64     2001:db8:2::2
                     c (L2, cross-connected to b)
  routes: 10.66.0.0/16 blackhole, 10.67.0.0/16 unreachable, 10.68.0.0/16
  prohibit, 10.9.0.0/16 via A and via B (ECMP); 2001:db8:66::/48
  blackhole, 2001:db8:67::/48 unreachable, 2001:db8:68::/48 prohibit
Run from anywhere: python3 tests/data/corpus/gen.py
"""
import os
import socket
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
# IPv6 (nodes/ip6)
I6 = 'ip6-input'
I6_SHORT = (I6, 'shorter than an IPv6 header')
I6_VERSION = (I6, 'IP version not 6')
I6_LEN_BEYOND = (I6, 'payload length beyond the frame')
I6_SRC_MCAST = (I6, 'multicast source address')
I6_LOOPBACK = (I6, 'loopback source or destination address')
I6_DST_UNSPEC = (I6, 'unspecified destination address')
I6_V4 = (I6, 'IPv4-mapped or -compatible address')
I6_MCAST_SCOPE = (I6, 'multicast of interface-local or reserved scope')
I6_NOT_JOINED = (I6, 'link-scope multicast group not joined')
I6_MCAST_ROUTING = (I6, 'multicast beyond link scope (not forwarded)')
I6_L2_GROUP = (I6, 'unicast IPv6 in a link-layer broadcast or multicast')
I6_SRC_UNSPEC = (I6, 'unspecified source in transit')
I6_LINK_LOCAL = (I6, 'link-local source or destination in transit')
I6_HOP_LIMIT = (I6, 'hop limit exceeded in transit')
I6_EXT_MANY = (I6, 'more than 8 extension headers')
I6_EXT_LONG = (I6, 'extension headers longer than 512 bytes')
I6_EXT_TRUNC = (I6, 'extension header beyond the packet')
I6_HBH_NOT_FIRST = (I6, 'Hop-by-Hop header not first')
I6_OPT_MANY = (I6, 'more than 16 options in an options header')
I6_OPT_TRUNC = (I6, 'option beyond its header')
I6_OPT_DISCARD = (I6, 'unrecognized option (discard silently)')
I6_OPT_UNKNOWN = (I6, 'unrecognized option (Parameter Problem)')
I6_RH0 = (I6, 'Routing Header type 0 with segments left (RFC 5095)')
I6_RH_UNKNOWN = (I6, 'unrecognized Routing type with segments left')
I6_RH0_TRANSIT = (I6, 'Routing Header type 0 in transit (dropped: policy)')
I6_ICMP_SENT = (I6, 'ICMPv6 error sent')
I6_ICMP_LIMITED = (I6, 'ICMPv6 error rate-limited (packet dropped)')
I6_ICMP_NOT_ALLOWED = (I6, 'ICMPv6 error not allowed (packet dropped)')
L6_NO_ROUTE = ('ip6-lookup', 'no route')
L6_UNREACH = ('ip6-lookup', 'no route: ICMPv6 destination unreachable sent')
L6_BLACKHOLE = ('ip6-lookup', 'blackhole route (dropped)')
L6_UNREACH_ROUTE = ('ip6-lookup', 'unreachable route: ICMPv6 no route sent')
L6_PROHIBIT_ROUTE = ('ip6-lookup', 'prohibit route: ICMPv6 administratively prohibited sent')
L6_REFUSED_SILENT = ('ip6-lookup', 'unreachable or prohibit route: dropped without ICMPv6 (rate, or not allowed)')
R6_PTB = ('ip6-rewrite', 'over MTU: ICMPv6 packet too big sent')
R6_LIMITED = ('ip6-rewrite', 'over MTU: ICMPv6 error rate-limited (dropped)')
R6_NOT_ALLOWED = ('ip6-rewrite', 'over MTU: no ICMPv6 error allowed (dropped)')
ECHO6_UNSPEC = ('icmp6-echo', 'echo request from the unspecified address')
LO6_FRAG = ('ip6-local', 'fragment to sluice (no reassembly)')
LO6_SHORT = ('ip6-local', 'ICMPv6 shorter than its header')
LO6_CSUM = ('ip6-local', 'bad ICMPv6 checksum')
LO6_MLD = ('ip6-local', 'MLD message (counted, not answered)')
LO6_TYPE = ('ip6-local', 'ICMPv6 type not handled')
LO6_PROTO = ('ip6-local', 'protocol not handled')
ECHO6_REPLIED = ('icmp6-echo', 'echo replies sent')
ND_NA_SENT = ('ip6-nd', 'Neighbor Advertisements sent')
ND_HOP_LIMIT = ('ip6-nd', 'ND hop limit not 255')
ND_NOT_OURS = ('ip6-nd', 'NS target not this interface\'s address')
ND_NA_UNSOLICITED = ('ip6-nd', 'NA for an address never solicited')
ND_TARGET_MCAST = ('ip6-nd', 'ND target is multicast')


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


A6, HA6, B6, HB6 = '2001:db8:1::1', '2001:db8:1::2', '2001:db8:2::1', '2001:db8:2::2'
LL_A, LL_HA = 'fe80::ff:fe00:a', 'fe80::aa:ff:fe00:1'  # EUI-64 of a's MAC, A's
SN_A6 = 'ff02::1:ff00:1'  # solicited-node group of 2001:db8:1::1


def ip6a(a):
    return socket.inet_pton(socket.AF_INET6, a)


def ip6(src, dst, payload, nh=17, hlim=64, plen=None, version=6, tc=0):
    plen = len(payload) if plen is None else plen
    return struct.pack('!IHBB', version << 28 | tc << 20, plen, nh, hlim) + ip6a(src) + ip6a(dst) + payload


def icmp6(src, dst, type_, code=0, body=b'\x12\x34\x00\x01' + bytes(range(16)), bad_csum=False):
    """An ICMPv6 message, checksummed over the pseudo-header (RFC 8200 8.1)."""
    m = struct.pack('!BBH', type_, code, 0) + body
    c = csum(ip6a(src) + ip6a(dst) + struct.pack('!IxxxB', len(m), 58) + m) ^ (0x5555 if bad_csum else 0)
    return m[:2] + struct.pack('!H', c) + m[4:]


def ext(nh, body=b'\x01\x04\x00\x00\x00\x00'):
    """An extension header of the common layout: Next Header, length in 8-byte units past the first."""
    assert (2 + len(body)) % 8 == 0
    return bytes([nh, (2 + len(body)) // 8 - 1]) + body


def rh(nh, type_, segments_left, addrs=1):
    return bytes([nh, 2 * addrs, type_, segments_left]) + bytes(4) + ip6a(HB6) * addrs


def v6(dmac, src, dst, payload=None, smac='ha', **kw):
    if dmac.startswith('3333'):
        dmac = bytes.fromhex(dmac)  # an IPv6 multicast MAC (RFC 2464 7)
    return eth(dmac, smac, 0x86dd) + ip6(src, dst, udp() if payload is None else payload, **kw)


def fwd6(**kw):
    """A UDP packet from A to B over IPv6, through a."""
    return v6('a', HA6, HB6, **kw)


def echo6(dst, src=HA6, dmac='a', hlim=64, **kw):
    return v6(dmac, src, dst, icmp6(src, dst, 128, **kw), nh=58, hlim=hlim)


def ns(target, src=HA6, dst=SN_A6, hlim=255, dmac='3333ff000001'):
    body = bytes(4) + ip6a(target) + b'\x01\x01' + MAC['ha']
    return eth(bytes.fromhex(dmac), 'ha', 0x86dd) + ip6(src, dst, icmp6(src, dst, 135, body=body), nh=58,
                                                        hlim=hlim)


def na(target, src=HA6, dst=A6, hlim=255, flags=0x60000000):
    body = struct.pack('!I', flags) + ip6a(target) + b'\x02\x01' + MAC['ha']
    return eth('a', 'ha', 0x86dd) + ip6(src, dst, icmp6(src, dst, 136, body=body), nh=58, hlim=hlim)


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


# ---- IPv6 (RFC 8200, RFC 4291, RFC 4443, RFC 4861, RFC 5095): malformed
case(M, 'ip6-truncated-39', 'IPv6 header cut at 39 bytes', [('a', fwd6()[:14 + 39])], [(I6_SHORT, 1)])
case(M, 'ip6-version-4', 'version 4 under ethertype 0x86dd', [('a', fwd6(version=4))], [(I6_VERSION, 1)])
case(M, 'ip6-payload-beyond-frame', 'payload length one byte past the frame',
     [('a', fwd6(plen=len(udp()) + 1))], [(I6_LEN_BEYOND, 1)])
case(M, 'ip6-payload-65535', 'payload length 65535 in a 84-byte frame', [('a', fwd6(plen=65535))],
     [(I6_LEN_BEYOND, 1)])
case(M, 'ip6-hop-limit-0', 'hop limit 0 to be forwarded: Time Exceeded to A', [('a', fwd6(hlim=0))],
     [(I6_HOP_LIMIT, 1), (I6_ICMP_SENT, 1)], {'a': 1})
case(M, 'ip6-hop-limit-1', 'hop limit 1 to be forwarded: Time Exceeded to A', [('a', fwd6(hlim=1))],
     [(I6_HOP_LIMIT, 1), (I6_ICMP_SENT, 1)], {'a': 1})
case(M, 'ip6-ext-chain-100', 'a chain of 100 Destination Options headers',
     [('a', fwd6(payload=b''.join(ext(60) for _ in range(99)) + ext(17) + udp(), nh=60))], [(I6_EXT_MANY, 1)])
case(M, 'ip6-ext-too-long', 'one 528-byte Destination Options header (the bound is 512)',
     [('a', fwd6(payload=ext(17, b'\x01\x04' + bytes(4) + b'\x01\xff' + bytes(255) + b'\x01\xff' +
                            bytes(255) + b'\x01\x04' + bytes(4)) + udp(), nh=60))], [(I6_EXT_LONG, 1)])
case(M, 'ip6-ext-truncated', 'a Destination Options header of 16 bytes in an 8-byte payload',
     [('a', fwd6(payload=bytes([17, 1, 1, 4, 0, 0, 0, 0]), nh=60))], [(I6_EXT_TRUNC, 1)])
case(M, 'ip6-ext-truncated-4', 'Next Header says Hop-by-Hop, 4 bytes follow',
     [('a', fwd6(payload=bytes([17, 0, 1, 0]), nh=0))], [(I6_EXT_TRUNC, 1)])
case(M, 'ip6-hbh-not-first', 'Hop-by-Hop after a Destination Options header: Parameter Problem to A',
     [('a', fwd6(payload=ext(0) + ext(17) + udp(), nh=60))], [(I6_HBH_NOT_FIRST, 1), (I6_ICMP_SENT, 1)],
     {'a': 1})
case(M, 'ip6-opt-too-many', 'a Hop-by-Hop header of 22 Pad1 options',
     [('a', fwd6(payload=ext(17, bytes(22)) + udp(), nh=0))], [(I6_OPT_MANY, 1)])
case(M, 'ip6-opt-truncated', 'a PadN option of 10 bytes in a 6-byte option area',
     [('a', fwd6(payload=ext(17, b'\x01\x0a' + bytes(4)) + udp(), nh=0))], [(I6_OPT_TRUNC, 1)])
case(M, 'ip6-opt-discard', 'unrecognized Hop-by-Hop option, action 01: discarded silently',
     [('a', fwd6(payload=ext(17, b'\x41\x04' + bytes(4)) + udp(), nh=0))], [(I6_OPT_DISCARD, 1)])
case(M, 'ip6-opt-unknown', 'unrecognized Hop-by-Hop option, action 10: Parameter Problem code 2 to A',
     [('a', fwd6(payload=ext(17, b'\x81\x04' + bytes(4)) + udp(), nh=0))],
     [(I6_OPT_UNKNOWN, 1), (I6_ICMP_SENT, 1)], {'a': 1})
case(M, 'ip6-rh0-to-router', 'Routing Header type 0 with segments left to a: Parameter Problem to A',
     [('a', v6('a', HA6, A6, rh(17, 0, 1) + udp(), nh=43))], [(I6_RH0, 1), (I6_ICMP_SENT, 1)], {'a': 1})
case(M, 'ip6-rh0-transit', 'Routing Header type 0 with segments left through a: dropped by policy',
     [('a', fwd6(payload=rh(17, 0, 1) + udp(), nh=43))], [(I6_RH0_TRANSIT, 1)])
case(M, 'ip6-rh-unknown-to-router', 'Routing type 253 with segments left to a: Parameter Problem to A',
     [('a', v6('a', HA6, A6, rh(17, 253, 1) + udp(), nh=43))], [(I6_RH_UNKNOWN, 1), (I6_ICMP_SENT, 1)],
     {'a': 1})
case(M, 'ip6-src-multicast', 'source ff02::1', [('a', v6('a', 'ff02::1', HB6))], [(I6_SRC_MCAST, 1)])
case(M, 'ip6-src-multicast-to-router', 'echo request from ff05::2 to a',
     [('a', echo6(A6, src='ff05::2'))], [(I6_SRC_MCAST, 1)])
case(M, 'ip6-dst-loopback', 'destination ::1', [('a', v6('a', HA6, '::1'))], [(I6_LOOPBACK, 1)])
case(M, 'ip6-src-loopback', 'source ::1', [('a', v6('a', '::1', HB6))], [(I6_LOOPBACK, 1)])
case(M, 'ip6-dst-unspecified', 'destination ::', [('a', v6('a', HA6, '::'))], [(I6_DST_UNSPEC, 1)])
case(M, 'ip6-dst-v4-mapped', 'destination ::ffff:10.2.0.2', [('a', v6('a', HA6, '::ffff:10.2.0.2'))],
     [(I6_V4, 1)])
case(M, 'ip6-mcast-scope-1', 'destination ff01::1 (interface-local) on the wire',
     [('a', v6('333300000001', HA6, 'ff01::1'))], [(I6_MCAST_SCOPE, 1)])
case(M, 'ip6-mcast-not-joined', 'a solicited-node group of an address a does not have',
     [('a', v6('3333ff000099', HA6, 'ff02::1:ff00:99'))], [(I6_NOT_JOINED, 1)])
case(M, 'ip6-mcast-site', 'destination ff05::1:3 (no multicast routing)',
     [('a', v6('333300010003', HA6, 'ff05::1:3'))], [(I6_MCAST_ROUTING, 1)])
case(M, 'ip6-l2-broadcast-unicast', 'unicast IPv6 to B in an Ethernet broadcast',
     [('a', v6('bcast', HA6, HB6))], [(I6_L2_GROUP, 1)])
case(M, 'ip6-src-unspecified-transit', 'source :: to B', [('a', v6('a', '::', HB6))], [(I6_SRC_UNSPEC, 1)])
case(M, 'ip6-link-local-transit', 'source fe80::aa:ff:fe00:1 to B (RFC 4291 2.5.6)',
     [('a', v6('a', LL_HA, HB6))], [(I6_LINK_LOCAL, 1)])
case(M, 'ip6-ns-hop-limit-64', 'Neighbor Solicitation for a\'s address with hop limit 64 (must be 255)',
     [('a', ns(A6, hlim=64))], [(ND_HOP_LIMIT, 1)])
case(M, 'ip6-ns-target-multicast', 'Neighbor Solicitation for ff02::1', [('a', ns('ff02::1'))],
     [(ND_TARGET_MCAST, 1)])
case(M, 'ip6-na-unsolicited', 'Neighbor Advertisement for 2001:db8:1::99, never solicited',
     [('a', na('2001:db8:1::99'))], [(ND_NA_UNSOLICITED, 1)])
case(M, 'ip6-icmp6-bad-checksum', 'echo request to a, ICMPv6 checksum off', [('a', echo6(A6, bad_csum=True))],
     [(LO6_CSUM, 1)])
case(M, 'ip6-icmp6-truncated', 'ICMPv6 of 3 bytes to a', [('a', v6('a', HA6, A6, b'\x80\x00\x00', nh=58))],
     [(LO6_SHORT, 1)])
case(M, 'ip6-no-route', 'destination 2001:db8:99::1, no default route: Destination Unreachable to A',
     [('a', v6('a', HA6, '2001:db8:99::1'))], [(L6_NO_ROUTE, 1), (L6_UNREACH, 1)], {'a': 1})

# ---- IPv6: valid but special
case(S, 'ipv6-forward', 'plain UDP over IPv6 from A to B', [('a', fwd6())], [], {'b': 1})
case(S, 'ipv6-forward-padded', 'no payload (Next Header 59) in a 60-byte frame: padding trimmed, forwarded',
     [('a', fwd6(payload=b'', nh=59) + bytes(6))], [], {'b': 1})
case(S, 'ipv6-forward-hop-limit-2', 'hop limit 2: forwarded with 1', [('a', fwd6(hlim=2))], [], {'b': 1})
case(S, 'ipv6-forward-ext', 'Hop-by-Hop (PadN), Destination Options, then UDP: forwarded',
     [('a', fwd6(payload=ext(60) + ext(17) + udp(), nh=0))], [], {'b': 1})
case(S, 'ipv6-forward-rh0-done', 'Routing Header type 0 with no segments left: forwarded',
     [('a', fwd6(payload=rh(17, 0, 0) + udp(), nh=43))], [], {'b': 1})
case(S, 'ipv6-fragment-transit', 'a non-first fragment in transit: forwarded, not reassembled',
     [('a', fwd6(payload=bytes([17, 0, 0, 0xb9, 0, 0, 0, 1]) + udp(), nh=44))], [], {'b': 1})
case(S, 'ipv6-fragment-to-router', 'a first fragment for a: no reassembly',
     [('a', v6('a', HA6, A6, bytes([58, 0, 0, 1, 0, 0, 0, 1]) + udp(), nh=44))], [(LO6_FRAG, 1)])
case(S, 'ipv6-dscp-ef', 'UDP over IPv6 with traffic class 0xb8 (DSCP 46): forwarded like any other',
     [('a', fwd6(tc=46 << 2))], [], {'b': 1})
case(S, 'ipv6-mtu', 'exactly the 1500-byte MTU', [('a', fwd6(payload=udp(1460)))], [], {'b': 1})
case(S, 'ipv6-packet-too-big', '1501 bytes of IPv6 for a 1500 MTU: Packet Too Big to A',
     [('a', fwd6(payload=udp(1461)))], [(R6_PTB, 1)], {'a': 1})
case(S, 'ipv6-echo', 'ping6 a\'s global address: answered', [('a', echo6(A6))], [(ECHO6_REPLIED, 1)], {'a': 1})
case(S, 'ipv6-echo-link-local', 'ping6 a\'s link-local address from A\'s: answered',
     [('a', echo6(LL_A, src=LL_HA))], [(ECHO6_REPLIED, 1)], {'a': 1})
case(S, 'ipv6-echo-far-side', 'ping6 b\'s address through a: answered', [('a', echo6(B6))],
     [(ECHO6_REPLIED, 1)], {'a': 1})
case(S, 'ipv6-echo-hop-limit-1', 'ping6 a with hop limit 1: local delivery, answered',
     [('a', echo6(A6, hlim=1))], [(ECHO6_REPLIED, 1)], {'a': 1})
case(S, 'ipv6-echo-all-nodes', 'ping6 ff02::1: answered', [('a', echo6('ff02::1', dmac='333300000001'))],
     [(ECHO6_REPLIED, 1)], {'a': 1})
case(S, 'ipv6-ns', 'Neighbor Solicitation for a\'s address: Neighbor Advertisement to A', [('a', ns(A6))],
     [(ND_NA_SENT, 1)], {'a': 1})
case(S, 'ipv6-udp-to-router', 'UDP to a\'s address: no local service', [('a', v6('a', HA6, A6))],
     [(LO6_PROTO, 1)])
case(S, 'ipv6-icmp6-error-about-error', 'hop limit 1 Destination Unreachable in transit: no error about an '
     'error', [('a', v6('a', HA6, HB6, icmp6(HA6, HB6, 1, 3), nh=58, hlim=1))],
     [(I6_HOP_LIMIT, 1), (I6_ICMP_NOT_ALLOWED, 1)])
case(S, 'ipv6-hop-limit-1-rate-limited', '12 expiring IPv6 packets at once: 10 answered (the burst), 2 counted',
     [('a', fwd6(hlim=1))] * 12, [(I6_HOP_LIMIT, 12), (I6_ICMP_SENT, 10), (I6_ICMP_LIMITED, 2)], {'a': 10})
case(S, 'ipv6-packet-too-big-rate-limited', '12 IPv6 packets over the MTU at once: 10 Packet Too Big, 2 counted',
     [('a', fwd6(payload=udp(1461)))] * 12, [(R6_PTB, 10), (R6_LIMITED, 2)], {'a': 10})
case(S, 'ipv6-too-big-icmp6-error', 'an ICMPv6 error over the MTU in transit: no Packet Too Big about it',
     [('a', v6('a', HA6, HB6, icmp6(HA6, HB6, 1, 3, body=bytes(4) + udp(1453)), nh=58))], [(R6_NOT_ALLOWED, 1)])
case(S, 'ipv6-echo-from-unspecified', 'echo request from :: to a: no one to answer',
     [('a', echo6(A6, src='::'))], [(ECHO6_UNSPEC, 1)])
case(S, 'ipv6-mld-report', 'an MLDv2 report to ff02::16 with a router alert: counted, not answered',
     [('a', v6('333300000016', LL_HA, 'ff02::16', bytes([58, 0, 5, 2, 0, 0, 1, 0]) +
               icmp6(LL_HA, 'ff02::16', 143, body=bytes(4)), nh=0, hlim=1))], [(LO6_MLD, 1)])
case(S, 'ipv6-icmp6-type-200', 'ICMPv6 type 200 (private experimentation) to a: not handled',
     [('a', v6('a', HA6, A6, icmp6(HA6, A6, 200), nh=58))], [(LO6_TYPE, 1)])
case(S, 'ipv6-route-blackhole', 'to 2001:db8:66::1, a blackhole route: dropped, counted apart from no route',
     [('a', v6('a', HA6, '2001:db8:66::1'))], [(L6_BLACKHOLE, 1)])
case(S, 'ipv6-route-unreachable', 'to 2001:db8:67::1, an unreachable route: Destination Unreachable, code 0 '
     '(no route), to A', [('a', v6('a', HA6, '2001:db8:67::1'))], [(L6_UNREACH_ROUTE, 1)], {'a': 1})
case(S, 'ipv6-route-prohibit', 'to 2001:db8:68::1, a prohibit route: Destination Unreachable, code 1 '
     '(administratively prohibited), to A', [('a', v6('a', HA6, '2001:db8:68::1'))], [(L6_PROHIBIT_ROUTE, 1)],
     {'a': 1})
case(S, 'ipv6-route-unreachable-icmp6-error', 'an ICMPv6 error to 2001:db8:67::1 (unreachable route): no error '
     'about an error, dropped', [('a', v6('a', HA6, '2001:db8:67::1', icmp6(HA6, '2001:db8:67::1', 1, 3), nh=58))],
     [(L6_REFUSED_SILENT, 1)])
case(S, 'mixed-ipv4-ipv6', 'one burst of IPv4 and IPv6 interleaved: each forwarded or answered',
     [('a', fwd()), ('a', fwd6()), ('a', echo6(A6)), ('a', v4('a', HA, A1, icmp(8), proto=1)), ('a', fwd6()),
      ('a', fwd())], [(ECHO_REPLIED, 1), (ECHO6_REPLIED, 1)], {'a': 2, 'b': 4})


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
