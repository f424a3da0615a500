#!/usr/bin/env bash
# hexd as a Quick Share receiver beside PyPI's pyquickshare 0.1.0.post1 (its own receiver, which holds a
# file in memory and writes it whole at the end), in one run so that the ratios mean something, in network
# namespaces on one bridge: host-a runs hexd (`--quickshare-files take`), host-q pyquickshare's receiver
# (Tests/quickshare/peers/qs_receive.py), host-p the senders. It measures:
#   - a URL shared to each by Tests/quickshare/peers/android_send.py (a sender of this project's own that
#     sends as Android does), URLS rounds alternating: from the sender's connection to the receiver having
#     it (hexd: its `hexReceived` event in `hexctl watch --json`; pyquickshare: its result line), median;
#   - a MIB MiB random file shared to each by `hexbench quickshare-send` (the core's sending machine, as
#     Android sends: the Python senders seal a chunk slower than hexd opens one, and would be what is
#     measured), ROUNDS rounds alternating: from the sender's start to the file whole in the receiver's
#     folder (its SHA-256 checked after timing), median, and the ratio of throughputs; hexd's CPU time
#     per transfer, and its peak RSS during its transfers (VmRSS every 50 ms) above its RSS before them;
#   - hexd's idle CPU time and wake-ups (context switches of all its threads) over IDLE seconds, a fresh
#     hexd each way with its defaults but the page and notifications off, `--quickshare on` against
#     `--quickshare off`.
# A benchmark: it prints figures (lines "quickshare-bench: ...") and enforces nothing, but fails when a
# transfer does not complete or arrives wrong. Touches only the namespaces it makes; every wait is bounded.
#
# Usage: quickshare-bench.sh BIN_DIR [MIB [ROUNDS [URLS [IDLE]]]]   (256 3 10 20; needs root, iproute2
#        and the Python 3.10 with pyquickshare that quickshare.sh finds; hexbench is $HEXBENCH, else
#        BIN_DIR's: build it with -c release for figures that mean something)
set -euo pipefail

bin=${1:?usage: quickshare-bench.sh BIN_DIR [MIB [ROUNDS [URLS [IDLE]]]]}
mib=${2:-256} rounds=${3:-3} urls=${4:-10} idle_seconds=${5:-20}
tag=hexdqb$$
work=$(mktemp -d /tmp/hexd-qsbench-XXXXXX)
pids=()
label=quickshare-bench
here=$(cd "$(dirname "$0")" && pwd)
peers_dir=$(cd "$here/../quickshare/peers" && pwd)
# shellcheck source=Tests/netns/lib.sh
source "$here/lib.sh"
py=$(bash "$here/quickshare.sh" --python) || fail "no Python 3.10 with pyquickshare (see quickshare.sh)"
hexbench=${HEXBENCH:-$bin/hexbench}
[ -x "$hexbench" ] || fail "no hexbench at $hexbench (HEXBENCH names it)"
probe() { python3 "$here/proc_sample.py" "$@"; }
# Runs `probe ARGS` in the background into OUT, and returns once it measures (its pid is $probed).
probe_into() {
    local out=$1
    shift
    rm -f "$work/ready"
    READY="$work/ready" python3 "$here/proc_sample.py" "$@" >"$out" &
    probed=$!
    wait_until '[ -e "$work/ready" ]' 100 || fail "proc_sample.py $1 did not start"
}
say() { echo "$label: $*"; }
now() { date +%s%N; }

make_bridge
join_bridge a 10.78.0.1/24
join_bridge p 10.78.0.2/24
join_bridge q 10.78.0.3/24

# Starts hexd in host-a with DATA and OPTIONS, and returns once its carriers are up; its pid is $started.
start_bench_hexd() {
    local data=$1
    shift
    ip netns exec "$tag-a" "$bin/hexd" --data-dir "$work/$data" --name host-a --web off --notify off "$@" \
        2>"$work/$data.log" &
    started=$!
    pids+=("$started")
    for _ in $(seq 200); do [ -S "$work/$data/hexd.sock" ] && break; sleep 0.05; done
    HEXD_DATA_DIR="$work/$data" ip netns exec "$tag-a" "$bin/hexctl" wait --timeout 10 >/dev/null 2>&1 ||
        fail "hexd ($data) did not start"
}
stop_pid() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# The sender is a stranger: the budgets a stranger may fill are lifted to hold every round's file.
budget=$(((mib * (rounds + 1) + 64) << 20))
start_bench_hexd a --quickshare-files take --mdns off --localsend off --kdeconnect off \
    --sender-budget "$budget" --strangers-budget "$budget" --inbox-budget "$budget"
hexd_pid=$started
HEXD_DATA_DIR="$work/a" ip netns exec "$tag-a" "$bin/hexctl" watch --json >"$work/watch.out" 2>&1 &
pids+=($!)
(timeout $((urls * 30 + rounds * 300 + 60)) ip netns exec "$tag-q" "$py" "$peers_dir/qs_receive.py" \
    --ip 10.78.0.3 --port 40000 --endpoint RCV1 --name "Bench Phone" --dir "$work/q" \
    --count $((urls + rounds)) --timeout $((urls * 30 + rounds * 300)) >"$work/q.out" 2>"$work/q.err") &
pids+=($!)
wait_until 'grep -q "\"ready\"" "$work/q.out" 2>/dev/null' 150 ||
    fail "pyquickshare's receiver: $(cat "$work/q.err")"
send() {
    local host=$1 port=$2
    shift 2
    ip netns exec "$tag-p" "$py" "$peers_dir/android_send.py" --host "$host" --port "$port" --linger 0 \
        --expect accepted "$@" \
        >>"$work/send.out" 2>&1
}
# The receivers: where each listens, and how each tells that a text came.
hexd_at=(10.78.0.1 18525) pqs_at=(10.78.0.3 40000 --allow-pyquickshare-quirks)

# 1. URLs: the time until the receiver has it, each receiver's Nth text counted as it comes.
for round in $(seq "$urls"); do
    for who in hexd pyquickshare; do
        if [ "$who" = hexd ]; then
            log=$work/watch.out text='"hexReceived"' at=("${hexd_at[@]}")
        else
            log=$work/q.out text='"event": "result"' at=("${pqs_at[@]}")
        fi
        probe_into "$work/came" lines "$log" "$text" "$round" 30
        watcher=$probed
        send "${at[@]}" --url "https://example.com/bench/$round" --timeout 20 ||
            fail "sending a URL to $who: $(tail -3 "$work/send.out")"
        wait "$watcher"
        came=$(cat "$work/came")
        [ "$came" != 0 ] || fail "$who did not get URL $round"
        # From the sender's connection (its own start, Python's, is the same for both and is not timed).
        connected=$(tail -1 "$work/send.out" | json 'data["connected_ns"]')
        echo "url $who $(((came - connected) / 1000))" >>"$work/results"
    done
done

# 2. Files: the time until the file is whole in the receiver's folder.
head -c $((mib << 20)) /dev/urandom >"$work/bench.bin"
sum=$(sha256sum "$work/bench.bin" | cut -d' ' -f1)
for round in $(seq "$rounds"); do
    for who in hexd pyquickshare; do
        if [ "$who" = hexd ]; then folder=$work/a/downloads at=("${hexd_at[@]}"); else
            folder=$work/q/downloads at=("${pqs_at[@]}")
        fi
        rm -f "$work/stop" "$folder/bench.bin"
        probe_into "$work/whole" watch "$folder" bench.bin $((mib << 20)) 300
        watcher=$probed
        sampler=
        if [ "$who" = hexd ]; then
            probe_into "$work/sampled" sample "$hexd_pid" "$work/stop" 330
            sampler=$probed
        fi
        start=$(now)
        ip netns exec "$tag-p" "$hexbench" quickshare-send "${at[0]}" "${at[1]}" "$work/bench.bin" \
            >>"$work/send.out" 2>&1 || fail "sending the file to $who: $(tail -3 "$work/send.out")"
        wait "$watcher"
        whole=$(cat "$work/whole")
        touch "$work/stop"
        [ -z "$sampler" ] || wait "$sampler"
        [ "$whole" != 0 ] || fail "$who did not get the whole file in round $round"
        [ "$(sha256sum "$folder/bench.bin" | cut -d' ' -f1)" = "$sum" ] || fail "$who got other bytes"
        cpu=- rss=-
        [ "$who" = hexd ] && read -r cpu rss_start rss_peak <"$work/sampled" && rss="$rss_start $rss_peak"
        echo "file $who $(((whole - start) / 1000)) $cpu $rss" >>"$work/results"
        rm -f "$folder/bench.bin"
    done
done
stop_pid "$hexd_pid"

# 3. Idle, a fresh hexd each way, Quick Share on and off.
for mode in on off; do
    start_bench_hexd "idle-$mode" --quickshare "$mode"
    idle_pid=$started
    sleep 2
    echo "idle $mode $(probe idle "$idle_pid" "$idle_seconds")" >>"$work/results"
    stop_pid "$idle_pid"
done

python3 - "$work/results" "$mib" "$idle_seconds" <<'PYTHON'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
mib, idle_seconds = int(sys.argv[2]), sys.argv[3]
def say(text): print(f"quickshare-bench: {text}")
def times(kind, who): return [int(r[2]) / 1000 for r in rows if r[0] == kind and r[1] == who]
url = {who: statistics.median(times("url", who)) for who in ("hexd", "pyquickshare")}
say(f"URL from the sender's connection until the receiver has it, median of {len(times('url', 'hexd'))}: "
    f"hexd {url['hexd']:.1f} ms, pyquickshare {url['pyquickshare']:.1f} ms: "
    f"{url['hexd'] / url['pyquickshare']:.2f}x its time "
    "(target <= 1.0x)")
file = {who: statistics.median(times("file", who)) for who in ("hexd", "pyquickshare")}
rate = {who: mib / (file[who] / 1000) for who in file}
say(f"{mib} MiB file until whole in the receiver's folder, median of {len(times('file', 'hexd'))}: "
    f"hexd {file['hexd']:.0f} ms ({rate['hexd']:.0f} MiB/s), pyquickshare {file['pyquickshare']:.0f} ms "
    f"({rate['pyquickshare']:.0f} MiB/s): hexd {rate['hexd'] / rate['pyquickshare']:.2f}x its throughput "
    f"(target >= 1.5x)")
hexd_files = [r for r in rows if r[0] == "file" and r[1] == "hexd"]
cpu = round(statistics.median(int(r[3]) for r in hexd_files))
idle_rss = int(hexd_files[0][4]) / 1024
peak = max(int(r[5]) for r in hexd_files) / 1024
say(f"hexd CPU per {mib} MiB transfer: {cpu} ms (median); RSS {idle_rss:.1f} MiB before its transfers, peak "
    f"{peak:.1f} MiB during them: +{peak - idle_rss:.1f} MiB (target <= 16 MiB)")
idle = {r[1]: (int(r[2]), int(r[3])) for r in rows if r[0] == "idle"}
say(f"idle {idle_seconds} s: --quickshare on {idle['on'][0]} ms CPU, {idle['on'][1]} wake-ups; "
    f"--quickshare off {idle['off'][0]} ms CPU, {idle['off'][1]} wake-ups")
PYTHON
