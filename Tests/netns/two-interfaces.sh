#!/usr/bin/env bash
# A host with two interfaces on two segments: host-m joins host-a's segment (10.81.0.0/24 and
# IPv6 link-local) and host-b's (10.82.0.0/24 and IPv6 link-local), each through its own veth pair.
# host-m finds both peers, lists host-a once though it hears it over IPv4 and IPv6 (both
# addresses kept under one identity), and sends a hex to each by name over TLS; host-a and host-b,
# on separate segments, never list each other; a DNS-SD browser (python-zeroconf) on host-a's
# segment gets host-m's address on that segment alone. Each check is counted; the last line says how many
# passed and failed. Touches only the namespaces it makes; everything is removed on exit. Every
# wait is bounded.
#
# Usage: two-interfaces.sh BIN_DIR   (needs root, iproute2 and python3-zeroconf)
set -euo pipefail
bin=${1:?usage: two-interfaces.sh BIN_DIR}
tag=hexdm$$
work=$(mktemp -d /tmp/hexd-netnsm-XXXXXX)
pids=()

label=netns-two-interfaces
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

make_hosts m a b
# Segment 1 joins host-m's "ma" to host-a's "am"; segment 2 host-m's "mb" to host-b's "bm".
for side in a b; do
    number=$([ "$side" = a ] && echo 81 || echo 82)
    ip link add "m$side$$" netns "$tag-m" type veth peer name "${side}m$$" netns "$tag-$side"
    ip -n "$tag-m" addr add "10.$number.0.1/24" dev "m$side$$"
    ip -n "$tag-$side" addr add "10.$number.0.2/24" dev "${side}m$$"
    ip -n "$tag-m" link set "m$side$$" up
    ip -n "$tag-$side" link set "${side}m$$" up
done

for host in m a b; do
    ip netns exec "$tag-$host" "$bin/hexd" --data-dir "$work/$host" --name "host-$host" \
        --announce-interval 0.5 2>"$work/$host.log" &
    pids+=($!)
done

# Waits, at most 10 s, until host-m lists host-a with an address of each family, and host-b.
for _ in $(seq 100); do
    peers=$(ctl m peers --json 2>/dev/null || true)
    if echo "$peers" | grep -q '"name":"host-b"' \
        && echo "$peers" | grep '"name":"host-a"' | grep -q '10\.81\.0\.2' \
        && echo "$peers" | grep '"name":"host-a"' | grep -q 'fe80::'; then
        break
    fi
    sleep 0.1
done
peers=$(ctl m peers --json)
echo "$peers" | grep -q '"name":"host-b"' || fail "host-m does not list host-b: $peers"
pass "host-m found host-b on its second interface"
count=$(echo "$peers" | grep -c '"name":"host-a"' || true)
[ "$count" = 1 ] || fail "host-m lists host-a $count times: $peers"
addresses=$(echo "$peers" | python3 -c 'import json, sys
for line in sys.stdin:
    peer = json.loads(line)
    if peer["name"] == "host-a": print(" ".join(peer["addresses"]))')
echo "$addresses" | grep -q "10\.81\.0\.2" && echo "$addresses" | grep -Eq "fe80::[0-9a-f:]+%ma$$" \
    || fail "host-a is not listed with an address of each family: $addresses"
pass "host-m lists host-a once, at $addresses"
ctl m status | grep -q "ma$$" && ctl m status | grep -q "mb$$" || fail "host-m's status: $(ctl m status)"
pass "host-m's status names both interfaces"

for peer in a b; do
    out=$(ctl m send --to "host-$peer" -d "to host-$peer" "https://example.com/$peer") \
        || fail "send to host-$peer: $out"
    echo "$out" | grep -q "^stored by host-$peer .* over TLS" || fail "not stored over TLS: $out"
    ctl "$peer" inbox | grep -q "\"to host-$peer\"" || fail "host-$peer's inbox lacks the hex"
    pass "a hex went to host-$peer by name, over TLS: $out"
done

# DNS-SD answers name only the addresses of the link the question came on (RFC 6762, 15).
found=$(browser=a browse 4 10 3)
echo "$found" | grep '"name": "host-m\._hexd' | grep -q '"10\.81\.0\.1"' \
    || fail "zeroconf on host-a's segment did not find host-m at 10.81.0.1: $found"
echo "$found" | grep '"name": "host-m\._hexd' | grep -q '10\.82\.' \
    && fail "host-m told host-a's segment its address on the other one: $found"
pass "asked by DNS-SD from host-a's segment, host-m answers with that segment's address alone"

# Beacons never cross host-m: broadcasts are not forwarded, IPv6 beacons have a hop limit of 1.
ctl a peers | grep -q host-b && fail "host-a lists host-b, on another segment: $(ctl a peers)"
ctl b peers | grep -q host-a && fail "host-b lists host-a, on another segment: $(ctl b peers)"
pass "host-a and host-b, on separate segments, do not list each other"
echo "$label: $passed passed, 0 failed"
