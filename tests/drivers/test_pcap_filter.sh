#!/bin/bash
# Filtered trace and capture on a live graph, with libpcap's language,
# checked against the real tcpdump. Interfaces of the pcap driver replay
# files this script writes (rx-loops 1), so every run sees the same frames:
#   - `trace add pcap-input 1000 filter "udp port 53"` over a mix of UDP 53,
#     TCP 80, UDP 123 and ARP traces exactly the UDP 53 frames (a frame the
#     filter refuses uses up none of the 1000);
#   - an unfiltered `pcap capture rx` of one replay and a filtered one of
#     another: `tcpdump -r` of the filtered file prints, byte for byte, what
#     `tcpdump -r` of the unfiltered file prints with the same expression;
#   - `pcap capture drop node ip4-rewrite reason "..."` while IPv4 flows
#     are routed, some with TTL 1 and no ICMP error allowed (non-first
#     fragments: RFC 1812 §4.3.2.7), some to no route: the file holds
#     exactly the TTL-1 frames, as received (from their Ethernet header);
#   - bad expressions print libpcap's error and arm nothing; unknown nodes
#     and reasons are refused; `pcap capture status` shows the selection.
# Needs tcpdump and python3 (scripts/deps.sh test); no namespace, no root
# beyond what sluice's startup asks. The trap stops sluice and removes the
# files even on failure; every wait is bounded.
#
#   test_pcap_filter.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
ns_a= ns_b= if_a= if_b=
tmp=$(mktemp -d /tmp/sluice-filter-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
for tool in tcpdump python3 timeout; do
	command -v "$tool" > /dev/null || fail "$tool not found (scripts/deps.sh test installs it)"
done

# gen.py OUT MIX|ROUTED [DST_MAC]: a pcap of Ethernet frames with valid IPv4
# header checksums. MIX: 100 frames cycling UDP 53, TCP 80, UDP 123 (and an
# ARP request every tenth). ROUTED (to DST_MAC, from 10.1.0.2): 20 UDP to
# 10.9.0.1 (routed), 7 non-first fragments to 10.9.0.1 with TTL 1, 5 UDP to
# 10.8.0.1 (no route), interleaved.
cat > "$tmp/gen.py" <<'PY'
import struct, sys
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
def ip4(src, dst, proto, payload, ttl=64, frag=0):
    a = lambda s: bytes(int(x) for x in s.split("."))
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 7, frag, ttl, proto, 0, a(src), a(dst))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + payload
def eth(dst, ethertype, payload):
    return dst + bytes.fromhex("02aabbccdd01") + struct.pack("!H", ethertype) + payload
def udp(sport, dport, n):
    return struct.pack("!HHHH", sport, dport, 8 + n, 0) + bytes(range(n))
def tcp(sport, dport):
    return struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 0x50, 0x18, 512, 0, 0) + b"tcp!"
out, kind = sys.argv[1], sys.argv[2]
frames = []
if kind == "mix":
    other = bytes.fromhex("02aabbccdd02")
    for i in range(100):
        if i % 10 == 9:
            arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, bytes(6), bytes(4), bytes(6), bytes(4))
            frames.append(eth(b"\xff" * 6, 0x0806, arp))
        elif i % 3 == 0:
            frames.append(eth(other, 0x0800, ip4("10.1.0.2", "10.9.0.1", 17, udp(1000 + i, 53, 20))))
        elif i % 3 == 1:
            frames.append(eth(other, 0x0800, ip4("10.1.0.2", "10.9.0.1", 6, tcp(2000 + i, 80))))
        else:
            frames.append(eth(other, 0x0800, ip4("10.1.0.2", "10.9.0.1", 17, udp(3000 + i, 123, 30))))
else:
    mac = bytes.fromhex(sys.argv[3].replace(":", ""))
    for i in range(32):
        if i % 4 == 1 and i < 28:
            frames.append(eth(mac, 0x0800, ip4("10.1.0.2", "10.9.0.1", 17, bytes(range(i, i + 30)), ttl=1, frag=100)))  # 64 bytes: no padding
        elif i % 6 == 5:
            frames.append(eth(mac, 0x0800, ip4("10.1.0.2", "10.8.0.1", 17, udp(4000 + i, 9, 10))))
        else:
            frames.append(eth(mac, 0x0800, ip4("10.1.0.2", "10.9.0.1", 17, udp(5000 + i, 9, 10))))
with open(out, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i, fr in enumerate(frames):
        fr = fr + bytes(max(0, 60 - len(fr)))
        f.write(struct.pack("<IIII", 1000, i, len(fr), len(fr)) + fr)
print(len(frames))
PY

cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock }
CONF
netns_start_sluice

ctl() { timeout 5 "$sluicectl" -s "$tmp/cli.sock" "$@" > "$tmp/out" 2>&1; }
ok() { ctl "$@" || { cat "$tmp/out" >&2; fail "'$*' failed"; }; }
# Well spelt but refused: non-zero, an error line matching $1, no usage.
refused() {
	local want=$1
	shift
	if ctl "$@"; then fail "'$*' succeeded"; fi
	grep -q "^error: .*$want" "$tmp/out" || { cat "$tmp/out" >&2; fail "'$*': no error '$want'"; }
	! grep -q "^usage: " "$tmp/out" || fail "'$*' printed usage"
}
# Wait until interface $1 has received $2 frames (5 s).
rx_wait() {
	local n=0
	for _ in $(seq 50); do
		ctl show interface "$1" json
		n=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d=d["interfaces"] if isinstance(d,dict) else d; d=d[0] if isinstance(d,list) else d; print(d["counters"]["RX-packets"])' "$tmp/out")
		[ "$n" -ge "$2" ] && return 0
		sleep 0.1
	done
	fail "$1 received $n of $2 frames"
}
# The packets of pcap file $1 as tcpdump prints them with filter $2: no
# time stamps, every byte in hex.
dump() {
	timeout 10 tcpdump -r "$1" -nn -t -xx "$2" 2> "$tmp/dump_err" || { cat "$tmp/dump_err" >&2; fail "tcpdump -r $1"; }
}
n_traced() {
	ctl show trace json && python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["packets"]))' "$tmp/out"
}

n_mix=$(python3 "$tmp/gen.py" "$tmp/mix.pcap" mix) || fail "gen mix"
n_dns=$(dump "$tmp/mix.pcap" "udp port 53" | grep -c '^IP ')
[ "$n_dns" -eq 30 ] || fail "the mix holds $n_dns UDP 53 frames, expected 30"

# ---- bad expressions: libpcap's error, nothing armed ----
refused "syntax error" trace add pcap-input 5 filter '"udp port"'
refused "syntax error" pcap capture rx max 10 file "$tmp/bad.pcap" filter '"tcp and and"'
[ -e "$tmp/bad.pcap" ] && fail "a refused capture made its file"
refused "no node named 'nosuch'" pcap capture drop node nosuch max 10 file "$tmp/bad.pcap"
refused "no error 'no such reason'" pcap capture drop node ip4-rewrite reason '"no such reason"' max 10 file "$tmp/bad.pcap"
ok pcap capture status
grep -q "pcap capture: off" "$tmp/out" || fail "status after refusals: $(cat "$tmp/out")"

# ---- replay 1: trace filtered, capture unfiltered ----
ok trace add pcap-input 1000 filter '"udp port 53"'
grep -q "matching 'udp port 53'" "$tmp/out" || fail "trace add: $(cat "$tmp/out")"
ok pcap capture rx max 1000 file "$tmp/all.pcap"
ok create interface c0 driver pcap rx-file "$tmp/mix.pcap"
ok set interface state c0 up
rx_wait c0 "$n_mix"
ok pcap capture off
grep -q "$n_mix packet(s) written" "$tmp/out" || fail "unfiltered capture: $(cat "$tmp/out")"
n=$(n_traced) || fail "show trace json"
[ "$n" -eq "$n_dns" ] || fail "traced $n packets, expected the $n_dns UDP 53 frames"
ctl show trace max 1000
[ "$(grep -c "^Packet " "$tmp/out")" -eq "$n_dns" ] || fail "show trace: $(head -20 "$tmp/out")"
ok clear trace
echo "trace filter: $n of $n_mix frames traced, the $n_dns UDP 53 ones"

# ---- replay 2: capture filtered; the same packets as tcpdump -r all | EXPR ----
expr='udp port 53 or (tcp and dst port 80 and tcp[13] & 8 != 0)'
ok pcap capture rx max 1000 file "$tmp/filtered.pcap" filter "\"$expr\""
ok pcap capture status
grep -qF "  filter: $expr" "$tmp/out" || fail "status: $(cat "$tmp/out")"
ok create interface c1 driver pcap rx-file "$tmp/mix.pcap"
ok set interface state c1 up
rx_wait c1 "$n_mix"
ok pcap capture off
dump "$tmp/all.pcap" "$expr" > "$tmp/want.txt"
dump "$tmp/filtered.pcap" "" > "$tmp/got.txt"
n=$(grep -c '^IP ' "$tmp/got.txt")
[ "$n" -eq 60 ] || fail "filtered capture holds $n packets, expected 60 (30 UDP 53, 30 TCP 80)"
cmp -s "$tmp/want.txt" "$tmp/got.txt" || { diff "$tmp/want.txt" "$tmp/got.txt" | head >&2; fail "filtered capture differs from tcpdump -r of the unfiltered one"; }
echo "capture filter: $n packets, byte for byte what tcpdump -r reads with '$expr'"
n=$(n_traced)
[ "$n" -eq 0 ] || fail "clear trace left $n packets traced or the trace armed"

# ---- drops by node and reason: TTL 1 with no ICMP error allowed ----
reason="no ICMP error allowed for the packet (dropped)"
printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00\x01\x00\x00\x00' > "$tmp/routed.pcap"
ok create interface r0 driver pcap rx-file "$tmp/routed.pcap"
ok show ip interface
mac=$(grep "^r0 " "$tmp/out" | grep -o '[0-9a-f]\{2\}\(:[0-9a-f]\{2\}\)\{5\}' | head -1)
[ -n "$mac" ] || fail "no MAC of r0 in show ip interface: $(cat "$tmp/out")"
# The driver has read the file's header only: the frames go after it.
python3 "$tmp/gen.py" "$tmp/routed-full.pcap" routed "$mac" > /dev/null || fail "gen routed"
tail -c +25 "$tmp/routed-full.pcap" >> "$tmp/routed.pcap"
ok set interface ip address r0 10.1.0.1/24
ok set ip neighbor r0 10.1.0.254 02:aa:bb:cc:dd:fe static
ok ip route add 10.9.0.0/24 via 10.1.0.254 r0
ok pcap capture drop node ip4-rewrite reason "\"$reason\"" max 100 file "$tmp/ttl.pcap"
ok pcap capture status
grep -qF "drops of node ip4-rewrite, reason: $reason" "$tmp/out" || fail "status: $(cat "$tmp/out")"
ok set interface state r0 up
rx_wait r0 32
ok show errors
grep -q "no route" "$tmp/out" || fail "no frame was dropped for another reason: $(cat "$tmp/out")"
ok pcap capture off
grep -q "7 packet(s) written" "$tmp/out" || fail "drop capture: $(cat "$tmp/out")"
dump "$tmp/routed-full.pcap" "ip[8] = 1" > "$tmp/want.txt"
dump "$tmp/ttl.pcap" "" > "$tmp/got.txt"
[ "$(grep -c '^IP ' "$tmp/want.txt")" -eq 7 ] || fail "the routed file holds $(grep -c '^IP ' "$tmp/want.txt") TTL-1 frames"
cmp -s "$tmp/want.txt" "$tmp/got.txt" || { diff "$tmp/want.txt" "$tmp/got.txt" | head >&2; fail "the drop capture is not the TTL-1 frames"; }
echo "drop capture: the 7 TTL-1 frames ip4-rewrite dropped ('$reason'), as received"

netns_stop_sluice
echo "PASS"
