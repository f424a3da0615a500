#!/usr/bin/env bash
# What the LocalSend and KDE Connect carriers cost hexd peers, side by side in one run: two fresh
# hexd (first start: keys made) on an IPv4 link, as README's "Two machines" runs them, with their
# defaults against `--localsend off --kdeconnect off`, ROUNDS times each (5 by default),
# alternating. Timed from the moment both are spawned until each lists the other, then 20 sends
# of a hex from one to the other (hexctl's own figure: queued, sent over TLS, acked); then the
# medians and their ratios. With a crowd size (CROWD, 0 to leave it out; 30 by default),
# `crowd.sh` then runs CROWD daemons on one segment both ways (`--defaults`, `--no-carriers`) and
# the time until every one lists every other is compared.
# A benchmark: it prints figures and enforces nothing. Touches only the namespaces it makes.
#
# Usage: defaults-bench.sh BIN_DIR [ROUNDS [CROWD]]   (needs root and iproute2)
set -euo pipefail
bin=${1:?usage: defaults-bench.sh BIN_DIR [ROUNDS [CROWD]]}
rounds=${2:-5}
crowd=${3:-30}
tag=hexdb$$
work=$(mktemp -d /tmp/hexd-defaults-XXXXXX)
pids=()
label=defaults-bench
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

# One round, the carriers on (MODE defaults) or off (no-carriers): prints the milliseconds to
# mutual discovery, then the send times in milliseconds, one per line.
round() {
    local mode=$1 number=$2
    tag=hexdb$$-$number-${mode:0:2}
    work=$(mktemp -d /tmp/hexd-defaults-XXXXXX)
    make_hosts a b
    ip link add "ba$$" netns "$tag-a" type veth peer name "bb$$" netns "$tag-b"
    ip -n "$tag-a" addr add 10.91.0.1/24 brd + dev "ba$$"
    ip -n "$tag-b" addr add 10.91.0.2/24 brd + dev "bb$$"
    ip -n "$tag-a" link set "ba$$" up
    ip -n "$tag-b" link set "bb$$" up
    wait_for_link_local "$tag-a:ba$$" "$tag-b:bb$$"
    local off=()
    [ "$mode" = no-carriers ] && off=(--localsend off --kdeconnect off)
    pids=()
    local spawned
    spawned=$(milliseconds)
    for host in a b; do
        ip netns exec "$tag-$host" "$bin/hexd" --data-dir "$work/$host" --name "host-$host" "${off[@]}" \
            --log-level warning 2>"$work/$host.log" &
        pids+=($!)
    done
    for _ in $(seq 1000); do
        ctl a peers 2>/dev/null | grep -q host-b && ctl b peers 2>/dev/null | grep -q host-a && break
        sleep 0.01
    done
    echo $(($(milliseconds) - spawned))
    ctl a wait --timeout 10 >/dev/null
    for _ in $(seq 20); do
        ctl a send --to host-b --json https://example.com/bench \
            | python3 -c 'import json, sys
print([json.loads(line) for line in sys.stdin if "milliseconds" in line][-1]["milliseconds"])'
    done
    cleanup
    trap cleanup EXIT
}

for number in $(seq "$rounds"); do
    for mode in defaults no-carriers; do
        round "$mode" "$number" | sed "s/^/$mode /" >>"/tmp/hexd-defaults-bench-$$.txt"
    done
done
python3 - "/tmp/hexd-defaults-bench-$$.txt" "$rounds" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
rounds = int(sys.argv[2])
def figures(mode):
    values = [float(v) for m, v in rows if m == mode]
    # Each round printed its discovery time, then its 20 sends.
    per_round = len(values) // rounds
    found = [values[i * per_round] for i in range(rounds)]
    sends = [v for i in range(rounds) for v in values[i * per_round + 1:(i + 1) * per_round]]
    return statistics.median(found), found, statistics.median(sends)
on, on_all, on_send = figures("defaults")
off, off_all, off_send = figures("no-carriers")
print(f"defaults-bench: two fresh hexd list each other in {on:.0f} ms with the defaults, {off:.0f} ms with "
      f"--localsend off --kdeconnect off: {on / off:.2f} x (medians of {rounds}; "
      f"{'/'.join(f'{v:.0f}' for v in on_all)} against {'/'.join(f'{v:.0f}' for v in off_all)})")
print(f"defaults-bench: send -> ack {on_send:.2f} ms with the defaults, {off_send:.2f} ms without the carriers: "
      f"{on_send / off_send:.2f} x (medians of {rounds * 20})")
PY
rm -f "/tmp/hexd-defaults-bench-$$.txt"
if [ "$crowd" -gt 0 ]; then
    for mode in --no-carriers --defaults; do
        out=$(bash "$(dirname "$0")/crowd.sh" "$bin" "$crowd" 1 "$mode")
        converged=$(sed -n 's/.*each once, \([0-9]*\) ms after.*/\1/p' <<<"$out")
        echo "$label: $crowd daemons $mode: every one lists every other $converged ms after the last was up"
        if [ "$mode" = --defaults ]; then
            crowd_on=$converged
            grep -q "no link between any two" <<<"$out" \
                && echo "$label: $crowd daemons --defaults: no LocalSend or KDE Connect link between any two"
        else
            crowd_off=$converged
        fi
    done
    python3 -c "import sys; on, off = map(int, sys.argv[1:]); \
print(f'defaults-bench: $crowd daemons converge in {on} ms with the defaults, {off} ms without the carriers: \
{on / off:.2f} x')" "$crowd_on" "$crowd_off"
fi
