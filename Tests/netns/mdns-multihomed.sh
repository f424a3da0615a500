#!/usr/bin/env bash
# A host with two interfaces on one link (a laptop on Ethernet and Wi-Fi to one LAN), in network
# namespaces on one bridge: host-m joins it twice (10.69.0.2 and 10.69.0.12), host-a once, and
# host-z browses with python-zeroconf. host-m hears its own mDNS probes on its other interface,
# proposing that interface's addresses; they are its own, not another host's (RFC 6762, 8.2, breaks
# ties between two hosts). Checked: host-m publishes `_hexd._tcp` under its own name within 5 s,
# never says another host probes for it, is found by the browser under that name, and host-a lists
# it once. Each check is counted; the last line says how many passed and failed. Touches only the
# namespaces it makes; every wait is bounded.
#
# Usage: mdns-multihomed.sh BIN_DIR   (needs root, iproute2 and python3-zeroconf)
set -euo pipefail
bin=${1:?usage: mdns-multihomed.sh BIN_DIR}
tag=hexdh$$
work=$(mktemp -d /tmp/hexd-mdns-multihomed-XXXXXX)
pids=()
label=mdns-multihomed
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

make_bridge
join_bridge a 10.69.0.1/24
join_bridge m 10.69.0.2/24
join_bridge z 10.69.0.3/24
# host-m's second interface on the same bridge.
ip link add "tm$$" netns "$tag-m" type veth peer name "qm$$" netns "$tag-br"
ip -n "$tag-br" link set "qm$$" master br0 up
ip -n "$tag-m" addr add 10.69.0.12/24 brd + dev "tm$$"
ip -n "$tag-m" link set "tm$$" up
wait_for_link_local "$tag-m:sm$$" "$tag-m:tm$$" "$tag-a:sa$$" "$tag-z:sz$$"

for host in m a; do
    ip netns exec "$tag-$host" "$bin/hexd" --data-dir "$work/$host" --name "host-$host" --mdns on \
        --log-level debug 2>"$work/$host.log" &
    pids+=($!)
done
ctl m wait --timeout 10 >/dev/null || fail "host-m's hexd did not start"
ctl a wait --timeout 10 >/dev/null || fail "host-a's hexd did not start"

# Its three probes are 250 ms apart, then it announces: well within 5 s unless it probes again.
wait_until 'grep -q "published by DNS-SD as host-m._hexd._tcp.local." "$work/m.log"' 50 ||
    fail "host-m did not publish within 5 s: $(grep -c "probes for" "$work/m.log") probes taken for another host's"
pass "host-m published as host-m._hexd._tcp.local. with two interfaces on one link"
sleep 2
heard=$(grep -c "another host probes" "$work/m.log" || true)
[ "$heard" = 0 ] || fail "host-m took its own probe for another host's $heard times"
pass "host-m never took its own probe, heard on its other interface, for another host's"

found=$(browse 4 10 2)
echo "$found" | grep -q '"name": "host-m._hexd._tcp.local."' || fail "python-zeroconf did not find host-m: $found"
pass "python-zeroconf finds host-m under its own name"

wait_until '[ "$(ctl a peers 2>/dev/null | grep -c host-m)" = 1 ]' 100 ||
    fail "host-a does not list host-m once: $(ctl a peers 2>&1)"
pass "host-a lists host-m once"

echo "$label: $passed passed, 0 failed"
