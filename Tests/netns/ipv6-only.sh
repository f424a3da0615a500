#!/usr/bin/env bash
# Two hexd "hosts" in two network namespaces joined by a veth pair with IPv6 only: link-local
# addresses and a ULA each (fd00::1, fd00::2), no IPv4 at all. They find each other through hexd's
# link-local multicast group, and `peers` shows the other at its link-local address with its zone,
# in brackets; a hex goes by name, by bracketed address, and through `hexctl raw`, over TLS where
# the peer is known; host-a has net.ipv6.bindv6only=1 and host-b 0. Then two more daemons whose
# link comes up after they started find each other at once. Each check is counted; the last line
# says how many passed and failed.
# Touches only the namespaces it makes; everything is removed on exit. Every wait is bounded.
#
# Usage: ipv6-only.sh BIN_DIR   (needs root and iproute2)
set -euo pipefail
bin=${1:?usage: ipv6-only.sh BIN_DIR}
tag=hexd6$$
work=$(mktemp -d /tmp/hexd-netns6-XXXXXX)
pids=()

label=netns6
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

make_hosts a b
# Whatever the host's default for IPv6 sockets, hexd's take IPv6 alone beside its IPv4 ones.
ip netns exec "$tag-a" sysctl -qw net.ipv6.bindv6only=1
ip netns exec "$tag-b" sysctl -qw net.ipv6.bindv6only=0
ip link add "va$$" netns "$tag-a" type veth peer name "vb$$" netns "$tag-b"
ip -n "$tag-a" addr add fd00::1/64 dev "va$$" nodad
ip -n "$tag-b" addr add fd00::2/64 dev "vb$$" nodad
ip -n "$tag-a" link set "va$$" up
ip -n "$tag-b" link set "vb$$" up
if ip -n "$tag-a" -4 addr show dev "va$$" | grep -q "inet "; then fail "va$$ has an IPv4 address"; fi

interval=0.5
started=$(milliseconds)
for host in a b; do
    ip netns exec "$tag-$host" "$bin/hexd" --data-dir "$work/$host" --name "host-$host" \
        --announce-interval "$interval" 2>"$work/$host.log" &
    pids+=($!)
done

wait_for_each_other
found=$(($(milliseconds) - started))
ctl a peers | grep -q host-b || fail "host-a does not list host-b: $(ctl a status)"
ctl b peers | grep -q host-a || fail "host-b does not list host-a"
pass "the hosts found each other over IPv6 alone in ${found} ms (from their start)"

endpoint=$(ctl a peers --json | python3 -c 'import json, sys
for line in sys.stdin:
    peer = json.loads(line)
    if peer["name"] == "host-b": print(peer["endpoint"])')
echo "$endpoint" | grep -Eq "^\[fe80::[0-9a-f:]+%va$$\]:18521$" \
    || fail "host-a lists host-b at $endpoint, not a bracketed link-local address with its zone"
pass "host-a lists host-b at $endpoint"
ctl a status | grep -q "va$$ fe80::.* ff02::4865:7864%va$$" || fail "host-a's status: $(ctl a status)"
pass "host-a's status says its beacons go to ff02::4865:7864 on va$$"

out=$(ctl a send --to host-b -d "by name over IPv6" https://example.com/v6) || fail "send by name: $out"
echo "$out" | grep -q "^stored by host-b .* over TLS" || fail "not stored over TLS: $out"
pass "a hex went to host-b by name, over TLS: $out"
out=$(ctl a send --to "[fd00::2]:18521" -d "by address" https://example.com/ula) || fail "send to [fd00::2]: $out"
echo "$out" | grep -q "^stored by \[fd00::2\]:18521 over TLS" || fail "not stored: $out"
pass "a hex went to [fd00::2]:18521 over TLS: $out"
line='{"versionID":"1.0","operationType":"Store","jmObjectType":"Hex","jmObject":{"hexDescription":"raw",'
line+='"links":[]},"messageID":"6F9619FF-8B86-4011-B42D-00C04FC964FF"}'
out=$(echo "$line" | ctl a raw "[fd00::2]:18521" - --timeout 2) || fail "raw: $out"
echo "$out" | grep -q '"status":"stored"' || fail "raw was not stored: $out"
pass "hexctl raw reached [fd00::2]:18521"
ctl b inbox | grep -q '"by name over IPv6"' || fail "host-b's inbox lacks the hex"

# A link that comes up while hexd runs: host-c and host-d announce every 60 s, and their link is
# down when they start. Each hears of the change from the kernel and asks at once, so they find
# each other within seconds of the link's addresses, not at their next beacon.
make_hosts c d
ip link add "vc$$" netns "$tag-c" type veth peer name "vd$$" netns "$tag-d"
for host in c d; do
    ip netns exec "$tag-$host" "$bin/hexd" --data-dir "$work/$host" --name "host-$host" \
        --announce-interval 60 2>"$work/$host.log" &
    pids+=($!)
done
for _ in $(seq 100); do [ -S "$work/c/hexd.sock" ] && [ -S "$work/d/hexd.sock" ] && break; sleep 0.1; done
sleep 1
ip -n "$tag-c" link set "vc$$" up
ip -n "$tag-d" link set "vd$$" up
wait_for_link_local "$tag-c:vc$$" "$tag-d:vd$$"
addressed=$(milliseconds)
for _ in $(seq 100); do
    ctl c peers 2>/dev/null | grep -q host-d && ctl d peers 2>/dev/null | grep -q host-c && break
    sleep 0.1
done
ctl c peers | grep -q host-d && ctl d peers | grep -q host-c \
    || fail "a link that came up while they ran: host-c and host-d did not find each other within 10 s"
pass "a link that came up while they ran: found each other $(($(milliseconds) - addressed)) ms after its \
addresses, with beacons every 60 s"
# Each change of the link woke host-c's discovery; afterwards it is idle again.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
before=$(ticks "${pids[2]}")
sleep 3
used=$(( ($(ticks "${pids[2]}") - before) * 1000 / $(getconf CLK_TCK) ))
[ "$used" -lt 300 ] || fail "host-c used $used ms of CPU in the 3 s after its link changed: it does not rest"
pass "after the link changed, host-c rests: $used ms of CPU in 3 s"
echo "netns6: $passed passed, 0 failed"
