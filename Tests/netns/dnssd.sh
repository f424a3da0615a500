#!/usr/bin/env bash
# DNS-SD against a stack hexd did not write (python-zeroconf), in network namespaces on one bridge
# with IPv4 and IPv6 link-local addresses:
#   - a browser in a third namespace finds host-a and host-b over IPv4 alone and over IPv6 alone,
#     each with its peer ID in TXT;
#   - host-c and host-d, whose namespaces drop every discovery beacon (nftables), find each other
#     by DNS-SD alone and exchange a hex over TLS, the key proven against the ID;
#   - hidden, host-a is no longer found by a fresh browse, host-b stops listing it, and host-b,
#     paired with it, still sends to its address; visible for 5 s, it is found, then hides by itself;
#   - a stopped host-b's goodbye removes it from a running browser at once.
# Each check is counted; the last line says how many passed and failed. Touches only the
# namespaces it makes; every wait is bounded.
#
# Usage: dnssd.sh BIN_DIR   (needs root, iproute2, nftables and python3-zeroconf)
set -euo pipefail
bin=${1:?usage: dnssd.sh BIN_DIR}
tag=hexds$$
work=$(mktemp -d /tmp/hexd-dnssd-XXXXXX)
pids=()
label=dnssd
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

make_bridge
number=1
for host in a b c d z; do
    join_bridge "$host" "10.67.0.$number/24"
    number=$((number + 1))
done
# host-c and host-d hear no beacon: UDP to the discovery port is dropped, mDNS is not.
drop_beacons c d
wait_for_link_local "$tag-a:sa$$" "$tag-b:sb$$" "$tag-c:sc$$" "$tag-d:sd$$" "$tag-z:sz$$"

for host in a b c d; do
    ip netns exec "$tag-$host" "$bin/hexd" --data-dir "$work/$host" --name "host-$host" \
        --announce-interval 1 2>"$work/$host.log" &
    pids+=($!)
done
for _ in $(seq 100); do
    up=yes
    for host in a b c d; do [ -S "$work/$host/hexd.sock" ] || up=no; done
    [ "$up" = yes ] && break
    sleep 0.05
done
started=$(milliseconds)
# Mutual listing by beacons and DNS-SD (host-a and host-b) and by DNS-SD alone (host-c and host-d),
# timed from the moment all four are up.
by_beacons="" by_dnssd=""
for _ in $(seq 200); do
    [ -z "$by_beacons" ] && ctl a peers 2>/dev/null | grep -q host-b && ctl b peers 2>/dev/null | grep -q host-a \
        && by_beacons=$(($(milliseconds) - started))
    [ -z "$by_dnssd" ] && ctl c peers 2>/dev/null | grep -q host-d && ctl d peers 2>/dev/null | grep -q host-c \
        && by_dnssd=$(($(milliseconds) - started))
    [ -n "$by_beacons" ] && [ -n "$by_dnssd" ] && break
    sleep 0.05
done
[ -n "$by_beacons" ] || fail "host-a and host-b did not find each other"
[ -n "$by_dnssd" ] || fail "with beacons dropped, host-c and host-d did not find each other by DNS-SD: $(ctl c peers)"

for family in 4 6; do
    found=$(browse "$family" 10 4)
    for host in a b; do
        echo "$found" | grep '"name": "host-'"$host"'\._hexd' | grep -q "\"id\": \"$(peer_id "$host")\"" \
            || fail "zeroconf over IPv$family did not find host-$host with its ID: $found"
    done
    pass "zeroconf over IPv$family alone finds host-a and host-b, their IDs in TXT"
done

received=$(ctl c status --json | "$python" -c 'import json, sys; print(json.load(sys.stdin)["datagramsReceived"])')
[ "$received" -eq 0 ] || fail "host-c read $received beacons: the nftables rule let them through"
pass "with every beacon dropped, host-c and host-d list each other by DNS-SD $by_dnssd ms after all were up \
(host-a and host-b, by beacons: $by_beacons ms)"
out=$(ctl c send --to host-d -d "found by DNS-SD" https://example.com/dnssd) || fail "send by DNS-SD: $out"
echo "$out" | grep -q "^stored by host-d .* over TLS" || fail "not stored over TLS: $out"
ctl d inbox | grep -q '"found by DNS-SD"' || fail "host-d's inbox lacks the hex"
pass "a hex went to host-d, found by DNS-SD alone, over TLS: $out"

# host-b pairs with host-a: hidden, host-a is still reached by a peer that knows its address.
ctl b pair host-a >/dev/null || fail "host-b cannot ask host-a to pair"
ctl a pair --accept host-b >/dev/null || fail "host-a cannot accept host-b's pairing"
ctl a visibility hidden >/dev/null
found=$(browse all 3)
echo "$found" | grep -q '"name": "host-a\._hexd' && fail "hidden, host-a is still found by a fresh browse: $found"
echo "$found" | grep -q '"name": "host-b\._hexd' || fail "host-b went missing too: $found"
pass "hidden, host-a is not found by a fresh browse started as hexctl visibility returned"
ctl b peers | grep -q host-a && fail "3 s after host-a hid (three beacon intervals), host-b still lists it"
pass "3 s after host-a hid (three beacon intervals), host-b does not list it"
out=$(ctl b send --to 10.67.0.1:18521 -d "to the hidden one" https://example.com/hidden) \
    || fail "host-b cannot send to hidden host-a by address: $out"
echo "$out" | grep -q "^stored by 10.67.0.1:18521 over TLS" || fail "not stored over TLS: $out"
ctl a inbox | grep -q '"to the hidden one"' || fail "host-a's inbox lacks the hex"
pass "hidden, host-a takes a hex from host-b, paired, sent to its address: $out"
ctl a visibility for 5s >/dev/null
browse all 10 4 | grep -q '"name": "host-a\._hexd' || fail "visible for 5s, host-a is not found"
ctl a status | grep -q "^visibility: visible until .* ([0-9] s left), then hidden" \
    || fail "status does not show the time left: $(ctl a status)"
pass "visible for 5s, host-a is found again: $(ctl a status | grep '^visibility')"
for _ in $(seq 80); do ctl a status | grep -q "^visibility: hidden" && break; sleep 0.1; done
ctl a status | grep -q "^visibility: hidden" || fail "host-a did not hide again by itself: $(ctl a status)"
for _ in $(seq 30); do ctl b peers | grep -q host-a || break; sleep 0.1; done
ctl b peers | grep -q host-a && fail "host-a hid again, but host-b still lists it"
pass "after its 5 s, host-a hid again by itself, and host-b dropped it"
ctl a visibility visible >/dev/null

browse watch 15 host-b >"$work/watch.out" &
watcher=$!
for _ in $(seq 150); do grep -q "^found" "$work/watch.out" && break; sleep 0.1; done
grep -q "^found" "$work/watch.out" || fail "the running browser never listed host-b"
kill "${pids[1]}"
wait "$watcher" || true
grep -q "^removed" "$work/watch.out" || fail "host-b's goodbye did not remove it: $(cat "$work/watch.out")"
pass "host-b stopped: $(grep '^removed' "$work/watch.out")"
echo "$label: $passed passed, 0 failed"
