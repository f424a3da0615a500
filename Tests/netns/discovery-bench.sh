#!/usr/bin/env bash
# Mutual discovery on an IPv6-only link against an IPv4-only link, ROUNDS times each (5 by
# default), alternating: two fresh hexd on a veth pair whose addresses are in place, timed from
# the moment both daemons are up (their control sockets made) until each lists the other; then
# the medians and their ratio, and the median send -> ack time of a hex to the peer over each
# (20 sends a round, over TLS, the connection kept open between them).
# A benchmark: it prints figures and enforces nothing. Touches only the namespaces it makes.
#
# Usage: discovery-bench.sh BIN_DIR [ROUNDS]   (needs root and iproute2)
set -euo pipefail
bin=${1:?usage: discovery-bench.sh BIN_DIR [ROUNDS]}
rounds=${2:-5}
tag=hexdd$$
work=$(mktemp -d /tmp/hexd-discovery-XXXXXX)
pids=()
label=discovery-bench
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

# One round over FAMILY (4 or 6): prints the milliseconds to mutual discovery, then the send
# times in milliseconds, one per line.
round() {
    local family=$1 number=$2
    tag=hexdd$$-$family-$number
    work=$(mktemp -d /tmp/hexd-discovery-XXXXXX)
    make_hosts a b
    ip link add "da$$" netns "$tag-a" type veth peer name "db$$" netns "$tag-b"
    if [ "$family" = 4 ]; then
        for host in a b; do
            ip netns exec "$tag-$host" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
        done
        ip -n "$tag-a" addr add 10.90.0.1/24 brd + dev "da$$"
        ip -n "$tag-b" addr add 10.90.0.2/24 brd + dev "db$$"
    fi
    ip -n "$tag-a" link set "da$$" up
    ip -n "$tag-b" link set "db$$" up
    if [ "$family" = 6 ]; then
        # The kernel gives a link its link-local address once it sees the carrier, up to a second
        # after the link is up: the IPv4 addresses above are there at once, and both rounds time
        # discovery between daemons whose addresses are there.
        wait_for_link_local "$tag-a:da$$" "$tag-b:db$$"
    fi
    pids=()
    for host in a b; do
        ip netns exec "$tag-$host" "$bin/hexd" --kdeconnect off --data-dir "$work/$host" --name "host-$host" \
            --announce-interval 1 --localsend off --log-level warning 2>"$work/$host.log" &
        pids+=($!)
    done
    for _ in $(seq 1000); do [ -S "$work/a/hexd.sock" ] && [ -S "$work/b/hexd.sock" ] && break; sleep 0.01; done
    local up
    up=$(milliseconds)
    for _ in $(seq 1000); do
        ctl a peers 2>/dev/null | grep -q host-b && ctl b peers 2>/dev/null | grep -q host-a && break
        sleep 0.01
    done
    echo $(($(milliseconds) - up))
    for _ in $(seq 20); do
        ctl a send --to host-b --json https://example.com/bench \
            | python3 -c 'import json, sys
print([json.loads(line) for line in sys.stdin if "milliseconds" in line][-1]["milliseconds"])'
    done
    cleanup
}

results=()
for number in $(seq "$rounds"); do
    for family in 4 6; do
        results+=("$family $(round "$family" "$number" | paste -sd' ')")
    done
done
printf '%s\n' "${results[@]}" | python3 -c 'import statistics, sys
found, sent = {"4": [], "6": []}, {"4": [], "6": []}
for line in sys.stdin:
    family, first, *sends = line.split()
    found[family].append(float(first))
    sent[family] += [float(s) for s in sends]
f4, f6 = statistics.median(found["4"]), statistics.median(found["6"])
s4, s6 = statistics.median(sent["4"]), statistics.median(sent["6"])
rounds, sends = len(found["4"]), len(sent["4"])
print(f"discovery-bench: mutual discovery, median of {rounds} rounds: IPv4 {f4:.0f} ms, IPv6 {f6:.0f} ms "
      f"({f6 / f4:.2f} x IPv4)")
print(f"discovery-bench: send -> ack over TLS, median of {sends}: IPv4 {s4:.2f} ms, "
      f"IPv6 link-local {s6:.2f} ms ({s6 / s4:.2f} x IPv4)")'
