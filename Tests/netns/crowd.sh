#!/usr/bin/env bash
# A crowded segment: COUNT hexd (30 by default), each in a network namespace of its own, on one
# bridge with IPv4 and IPv6 link-local addresses, so each beacon reaches every daemon twice (by
# broadcast and by hexd's multicast group). Every daemon must list every other exactly once (one
# peer seen over both families is one entry) within three announce intervals of the moment the
# last one is up (its control socket made: a fresh start also makes a key, a database and a disk
# reserve, which many at once on two cores take a second or more to write); both times are
# printed. With SECONDS, the CPU all daemons use together at steady state is then measured over
# that many seconds and printed (`crowd-bench.sh` compares crowds of several sizes), and the
# three intervals are reported, not enforced. Touches only the namespaces it makes; every wait
# is bounded.
#
# Usage: crowd.sh BIN_DIR [COUNT [SECONDS]]   (needs root and iproute2)
set -euo pipefail
bin=${1:?usage: crowd.sh BIN_DIR [COUNT [SECONDS]]}
count=${2:-30}
measure=${3:-0}
tag=hexdc$$
work=$(mktemp -d /tmp/hexd-crowd-XXXXXX)
pids=()
label=crowd
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

make_bridge
for index in $(seq "$count"); do join_bridge "$index" "10.251.0.$index/24"; done

interval=1
for index in $(seq "$count"); do
    # The beacons' crowd: DNS-SD (dnssd.sh) and LocalSend (localsend.sh) are off, so that what is
    # timed is the beacons alone (thirty LocalSend keys made at once would take the cores a while).
    ip netns exec "$tag-$index" "$bin/hexd" --kdeconnect off --data-dir "$work/$index" --name "host-$index" \
        --announce-interval "$interval" --mdns off --localsend off --log-level warning 2>"$work/$index.log" &
    pids+=($!)
done
spawned=$(milliseconds)
for _ in $(seq 300); do
    up=yes
    for index in $(seq "$count"); do [ -S "$work/$index/hexd.sock" ] || { up=no; break; }; done
    [ "$up" = yes ] && break
    sleep 0.1
done
[ "$up" = yes ] || fail "not every daemon started within 30 s"
started=$(milliseconds)
echo "$label: all $count daemons up $((started - spawned)) ms after the last was started"
listed() { HEXD_DATA_DIR="$work/$1" "$bin/hexctl" peers --json 2>/dev/null | grep -c '"uuid"' || true; }
bound=$((3 * interval * 1000))
converged=""
while [ $(($(milliseconds) - started)) -le $((bound + 20000)) ]; do
    all=yes
    for index in $(seq "$count"); do
        [ "$(listed "$index")" -eq $((count - 1)) ] || { all=no; break; }
    done
    if [ "$all" = yes ]; then converged=$(($(milliseconds) - started)); break; fi
    sleep 0.2
done
[ -n "$converged" ] || fail "not every daemon lists the $((count - 1)) others: host-1 lists $(listed 1)"
pass "all $count daemons list the $((count - 1)) others, each once, $converged ms after the last was up"
if [ "$converged" -le "$bound" ]; then
    pass "within three intervals ($bound ms)"
elif [ "$measure" -gt 0 ]; then
    # Measuring, the figures are what counts: a benchmark enforces nothing.
    echo "$label: that took more than three intervals ($bound ms)"
else
    fail "that took $converged ms, more than three intervals ($bound ms)"
fi
addresses=$(HEXD_DATA_DIR="$work/1" "$bin/hexctl" peers --json | python3 -c 'import json, sys
peers = [json.loads(line) for line in sys.stdin]
print(sum(any(":" in a for a in p["addresses"]) and any("." in a for a in p["addresses"]) for p in peers))')
[ "$addresses" -ge 1 ] || fail "host-1 lists no peer with an address of each family"
pass "host-1 lists $addresses peers with an IPv4 and an IPv6 address, each as one entry"

# The CPU time of every daemon, in clock ticks (utime + stime, /proc/PID/stat).
ticks() { awk '{ sum += $14 + $15 } END { print sum }' $(printf "/proc/%s/stat " "${pids[@]}"); }
if [ "$measure" -gt 0 ]; then
    before=$(ticks)
    sleep "$measure"
    used=$(($(ticks) - before))
    hz=$(getconf CLK_TCK)
    python3 -c "import sys
used, hz, seconds, count = map(int, sys.argv[1:])
share = used / hz / seconds
print(f'$label: steady state over {seconds} s: {share * 100:.2f} % of a core for all {count} daemons, '
      f'{share / count * 100:.3f} % each')" "$used" "$hz" "$measure" "$count"
fi
echo "$label: $passed passed, 0 failed"
