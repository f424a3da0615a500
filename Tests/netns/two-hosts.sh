#!/usr/bin/env bash
# Two hexd "hosts" in two network namespaces, joined through a bridge in a third, with real
# broadcast (255.255.255.255 and the interface's directed broadcast) and the default ports:
# they discover each other, one sends the other a hex, the Ack comes back, and a killed host
# leaves the other's table within three announce intervals (plus 0.5 s for hexctl to report it).
# A file shared across the bridge is fetched, the fetching host killed (-9) halfway and restarted,
# and the fetch goes on from the partial file (host-a serves at most 16 MiB a second, so that
# there is a halfway to stop at). host-b has IPv6 turned off (net.ipv6.conf.all.disable_ipv6), and
# says so once.
# Each check is counted; the last line says how many passed and failed. Touches only the namespaces it makes
# (10.250.0.0/24 exists only inside them); everything is removed on exit. Every wait is bounded.
#
# With --no-broadcast-address the addresses are set up as a new user would by hand, without a
# broadcast address (`ip addr add 10.250.0.1/24`) and with no default route: 255.255.255.255 is
# then unreachable (said once in the log), and the interface's broadcast address comes from its
# prefix.
#
# Usage: two-hosts.sh BIN_DIR [--no-broadcast-address]   (needs root and iproute2)
set -euo pipefail
bin=${1:?usage: two-hosts.sh BIN_DIR [--no-broadcast-address]}
brd=(brd +)
if [ "${2:-}" = "--no-broadcast-address" ]; then brd=(); fi
tag=hexd$$
work=$(mktemp -d /tmp/hexd-netns-XXXXXX)
pids=()

label=netns
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

ip netns add "$tag-br"
ip netns exec "$tag-br" ip link add br0 type bridge
ip netns exec "$tag-br" ip link set br0 up
address=1
for host in a b; do
    ns="$tag-$host"
    ip netns add "$ns"
    ip link add "v$host$$" type veth peer name "p$host$$"
    ip link set "v$host$$" netns "$ns"
    ip link set "p$host$$" netns "$tag-br"
    ip netns exec "$tag-br" ip link set "p$host$$" master br0 up
    ip netns exec "$ns" ip link set lo up
    # host-b has IPv6 turned off: it works over IPv4 all the same, and says so once.
    if [ "$host" = b ]; then ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1; fi
    ip netns exec "$ns" ip addr add "10.250.0.$address/24" "${brd[@]}" dev "v$host$$"
    ip netns exec "$ns" ip link set "v$host$$" up
    address=$((address + 1))
done

interval=0.5
start_host() {
    local host=$1
    local pace=()
    if [ "$host" = a ]; then pace=(--max-send-rate 16MiB); fi
    ip netns exec "$tag-$host" "$bin/hexd" --data-dir "$work/$host" --name "host-$host" --announce-interval "$interval" \
        "${pace[@]}" 2>>"$work/$host.log" &
}
for host in a b; do
    start_host "$host"
    pids+=($!)
done

# Discovery by real broadcast, bounded to 10 s.
wait_for_each_other
ctl a peers | grep -q "10.250.0.2:18521" || fail "host-a does not list host-b at 10.250.0.2:18521"
ctl b peers | grep -q "10.250.0.1:18521" || fail "host-b does not list host-a at 10.250.0.1:18521"
pass "the hosts discovered each other by broadcast"
said=$(grep -c "IPv6 is turned off on this host" "$work/b.log" || true)
[ "$said" -eq 1 ] || fail "host-b, without IPv6, said so $said times, not once"
pass "host-b, with IPv6 turned off, works over IPv4 and said so once"
if [ ${#brd[@]} -eq 0 ]; then
    said=$(grep -c "255.255.255.255:18520: Network is unreachable" "$work/a.log" || true)
    [ "$said" -eq 1 ] || fail "the unreachable 255.255.255.255 was logged $said times, not once"
    ctl a status | grep -q "beacons cannot go: .*255.255.255.255:18520: Network is unreachable" \
        || fail "host-a's status does not say 255.255.255.255 is unreachable: $(ctl a status)"
    pass "without a route for 255.255.255.255 the failure was logged once, at warning level, and status says it"
fi

# status says where beacons go, interface by interface, and what is skipped and why.
plan=$(ctl a status --json | python3 -c 'import json, sys
for i in json.load(sys.stdin)["interfaces"]:
    print(i["interface"], i["address"], i.get("broadcast") or "skipped: " + i["skipped"])')
echo "$plan" | grep -qx "va$$ 10.250.0.1 10.250.0.255" \
    || fail "host-a's status does not say its beacons go to 10.250.0.255 on va$$: $plan"
echo "$plan" | grep -qx "lo 127.0.0.1 skipped: loopback" || fail "host-a's status does not skip lo: $plan"
pass "host-a's status lists where its beacons go and what it skips: $(echo "$plan" | paste -sd ';' -)"

# A third daemon on host-a, told to leave out the veth interfaces: it hears host-b, and host-b
# never hears of it (nothing goes to 255.255.255.255 either once interfaces are chosen).
ip netns exec "$tag-a" "$bin/hexd" --data-dir "$work/x" --name "host-x" --port 18531 \
    --announce-interval "$interval" --exclude-interface 'v*' 2>"$work/x.log" &
pids+=($!)
# Its control socket is a file: hexctl reaches it from outside the namespace.
ctlx() { HEXD_DATA_DIR="$work/x" "$bin/hexctl" "$@"; }
for _ in $(seq 100); do ctlx peers 2>/dev/null | grep -q host-b && break; sleep 0.1; done
ctlx peers | grep -q host-b || fail "host-x, announcing nowhere, does not hear host-b"
sleep "$(awk -v i="$interval" 'BEGIN { print 4 * i }')"
ctl b peers | grep -q host-x && fail "host-b lists host-x, whose only interface is excluded"
ctlx status | grep -q "va$$ 10.250.0.1 (excluded by 'v\*')" || fail "host-x's status: $(ctlx status)"
pass "an interface left out by --exclude-interface gets no beacons, and status says why"
kill "${pids[2]}"
wait "${pids[2]}" 2>/dev/null || true
unset 'pids[2]'

out=$(ctl a send --to host-b -d "across the bridge" https://example.com/netns) || fail "send: $out"
echo "$out" | grep -q "^stored by host-b" || fail "no Ack stored: $out"
pass "host-a sent a hex and host-b acknowledged it: $out"
ctl b inbox | grep -q '"across the bridge"  from "host-a"' || fail "host-b's inbox lacks the hex"
pass "host-b's inbox lists the hex from host-a"

# A file shared across the bridge; host-b killed (-9) while fetching it, restarted, resumes.
head -c 48M /dev/urandom >"$work/film.bin"
ctl a share --to host-b -d "a film" "$work/film.bin" >/dev/null || fail "host-a could not share the file"
hex=$(ctl b inbox --json | python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["id"])')
ctl b fetch "$hex" --downloads "$work/dl" >"$work/first-fetch.txt" 2>&1 &
fetcher=$!
held=0
for _ in $(seq 200); do
    held=$(stat -c %s "$work"/dl/*.part 2>/dev/null || echo 0)
    [ "$held" -ge $((12 << 20)) ] && break
    sleep 0.05
done
[ "$held" -ge $((12 << 20)) ] || fail "the fetch did not reach 12 MiB within 10 s (held $held bytes)"
kill -KILL "${pids[1]}"
wait "${pids[1]}" 2>/dev/null || true
wait "$fetcher" && fail "the fetch succeeded although its daemon was killed: $(cat "$work/first-fetch.txt")"
start_host b
pids[1]=$!
for _ in $(seq 100); do ctl b peers 2>/dev/null | grep -q host-a && break; sleep 0.1; done
resumed=$(ctl b fetch "$hex" --downloads "$work/dl" --json | tail -1) || fail "the resumed fetch failed: $resumed"
from=$(echo "$resumed" | python3 -c 'import json, sys; r = json.load(sys.stdin); print(r.get("resumedFrom", 0))')
[ "$from" -ge $((12 << 20)) ] || fail "the fetch started over instead of resuming: $resumed"
[ "$(sha256sum <"$work/film.bin")" = "$(sha256sum <"$work/dl/film.bin")" ] || fail "the fetched file differs"
pass "host-b, killed while fetching, resumed from byte $from of 48 MiB across the bridge; the file is whole"

# host-a's own event tells when host-b left: no polling delay in the measure. Only events from
# now on count (host-b was lost once already, killed while it fetched).
ctl a watch --since 1000000000 --until peerLost --timeout 10 >"$work/lost.txt" 2>&1 &
watcher=$!
ctl a wait --timeout 5 >/dev/null
kill -KILL "${pids[1]}"
killed=$(milliseconds)
wait "${pids[1]}" 2>/dev/null || true
wait "$watcher" || fail "host-a never reported host-b lost: $(cat "$work/lost.txt")"
elapsed=$(($(milliseconds) - killed))
grep -q 'peerLost "host-b"' "$work/lost.txt" || fail "the event is not host-b's: $(cat "$work/lost.txt")"
# Three intervals of silence after its last beacon (sent at most one interval before the kill).
bound=$(awk -v i="$interval" 'BEGIN { printf "%d", (3 * i + 0.5) * 1000 }')
[ "$elapsed" -le "$bound" ] || fail "host-b left the table after ${elapsed} ms, more than three intervals (${bound} ms)"
ctl a peers | grep -q host-b && fail "host-b is still listed after its peerLost event"
pass "the killed host left the table after ${elapsed} ms (at most ${bound})"
echo "netns: $passed passed, 0 failed"
