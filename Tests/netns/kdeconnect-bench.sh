#!/usr/bin/env bash
# hexd as a KDE Connect receiver beside KDE Connect's own, in one run so that the ratios mean
# something, in network namespaces on one bridge: host-a runs hexd, host-k Debian's kdeconnectd (the
# sender, paired with both), host-m a second kdeconnectd (the receiver to compare with). It measures:
#   - a shared URL: `kdeconnect-cli --share URL` in host-k, timed from the command's start to hexd's
#     hexReceived event (hexctl watch, each line stamped as it is read), and to host-m's opener being
#     called with the URL (the stub stamps it), median of ROUNDS each (10 unless ROUNDS says),
#     alternating;
#   - a MIB MiB file (`kdeconnect-cli --share FILE`), timed from the command's start to the file
#     whole under its name in hexd's downloads folder and in host-m's Downloads (polled every 10 ms;
#     SHA-256 checked after timing), median of 3 rounds each, alternating;
#   - hexd's idle CPU time and wake-ups (context switches of all its threads) over 20 s with no KDE
#     Connect device around, and its private memory (smaps_rollup), a fresh hexd each way,
#     `--kdeconnect on` against `--kdeconnect off`.
# A benchmark: it prints figures (lines "kdeconnect-bench: ...") and enforces nothing. Touches only
# the namespaces it makes; nothing leaves them; every wait is bounded.
#
# Usage: kdeconnect-bench.sh BIN_DIR [MIB]   (MIB 256 by default; needs root, iproute2, kdeconnect
#        22.12, dbus-daemon, gdbus, openssl, python3)
set -euo pipefail
bin=${1:?usage: kdeconnect-bench.sh BIN_DIR [MIB]}
mib=${2:-256}
rounds=${ROUNDS:-10}
tag=hexdkb$$
work=$(mktemp -d /tmp/hexd-kdeconnect-bench-XXXXXX)
pids=()
label=kdeconnect-bench
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=Tests/netns/kde-lib.sh
source "$(dirname "$0")/kde-lib.sh"
began=$(date +%s)
say() { echo "$label: $*"; }
wait_until() {
    local tries=$2
    for _ in $(seq "$tries"); do
        eval "$1" && return 0
        sleep 0.01
    done
    return 1
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

make_bridge
join_bridge a 10.72.0.1/24
join_bridge k 10.72.0.2/24
join_bridge m 10.72.0.3/24
for host in a k m; do ip -n "$tag-$host" route add default dev "s$host$$"; done

start_kdeconnectd k
start_kdeconnectd m
k_id=$(kde_id k)
m_id=$(kde_id m)
# Every round's file counts against the inbox's budgets, and stays counted once removed.
budget="$((4 * mib + 64))MiB"
start_hexd a --kdeconnect on --localsend off --sender-budget "$budget" --inbox-budget "$budget"
hexd_id=$(openssl x509 -in "$work/a/kdeconnect.crt" -noout -subject -nameopt multiline | awk '/commonName/ { print $3 }')
wait_until 'kde_sees k "$hexd_id" && kde_sees k "$m_id"' 1000 || fail "kde-k does not see hexd and kde-m"

# Pairing: k asks hexd (accepted with hexctl) and m (accepted over D-Bus).
kde k timeout 10 kdeconnect-cli --pair -d "$hexd_id" >/dev/null 2>&1 || true
wait_until 'ctl a pair --accept kde-k >/dev/null 2>&1' 500 || fail "hexd could not accept kde-k"
kde k timeout 10 kdeconnect-cli --pair -d "$m_id" >/dev/null 2>&1 || true
wait_until '[[ "$(kde_device m "$k_id" hasPairingRequests)" == *true* ]]' 500 || fail "kde-m got no request"
kde m timeout 10 gdbus call --session --dest org.kde.kdeconnect --object-path "/modules/kdeconnect/devices/$k_id" \
    --method org.kde.kdeconnect.device.acceptPairing >/dev/null
wait_until '[[ "$(kde_device k "$hexd_id" isTrusted)" == *true* && "$(kde_device k "$m_id" isTrusted)" == *true* ]]' \
    1000 || fail "kde-k is not paired with both"

# hexd's events, each line stamped (ns since the epoch) as it is read.
ctl a watch --json | python3 -c '
import sys, time
for line in sys.stdin:
    print(time.time_ns(), line.strip(), flush=True)' >"$work/a-events" &
pids+=($!)
sleep 0.5
received() { grep -c '"kind":"hexReceived"' "$work/a-events" || true; }
opened() { [ -f "$work/m-opened" ] && wc -l <"$work/m-opened" || echo 0; }

# --- A shared URL, alternating.
: >"$work/url-hexd"
: >"$work/url-kde"
for round in $(seq "$rounds"); do
    before=$(received)
    start=$(date +%s%N)
    kde k timeout 10 kdeconnect-cli --share "https://example.com/bench/$round" -d "$hexd_id" >/dev/null 2>&1 || true
    wait_until '[ "$(received)" -gt "$before" ]' 1000 || fail "round $round: hexd got no hex"
    stamp=$(grep '"kind":"hexReceived"' "$work/a-events" | tail -1 | cut -d' ' -f1)
    echo $(((stamp - start) / 1000)) >>"$work/url-hexd"
    before=$(opened)
    start=$(date +%s%N)
    kde k timeout 10 kdeconnect-cli --share "https://example.com/bench/$round" -d "$m_id" >/dev/null 2>&1 || true
    wait_until '[ "$(opened)" -gt "$before" ]' 1000 || fail "round $round: kde-m opened nothing"
    stamp=$(tail -1 "$work/m-opened" | cut -d' ' -f1)
    echo $(((stamp - start) / 1000)) >>"$work/url-kde"
done
url_hexd=$(median <"$work/url-hexd")
url_kde=$(median <"$work/url-kde")
say "a shared URL, kdeconnect-cli's start to received: hexd ${url_hexd} µs (its inbox), kdeconnectd ${url_kde} µs" \
    "(its opener), median of $rounds; hexd/kdeconnectd $(awk -v a="$url_hexd" -v b="$url_kde" 'BEGIN { printf "%.2f", a / b }')"
say "  hexd's rounds (µs): $(tr '\n' ' ' <"$work/url-hexd")"
say "  kdeconnectd's rounds (µs): $(tr '\n' ' ' <"$work/url-kde")"

# --- A MIB MiB file, alternating. Each lands under its name once whole (hexd and 22.12 write a
# partial file first).
head -c $((mib << 20)) /dev/urandom >"$work/big.bin"
sum=$(sha256sum <"$work/big.bin")
size=$((mib << 20))
whole() { [ -f "$1" ] && [ "$(stat -c %s "$1")" -eq "$size" ]; }
: >"$work/file-hexd"
: >"$work/file-kde"
limit=$((100 * (60 + mib)))  # 10 ms polls: at least 1 MiB/s
for round in 1 2 3; do
    start=$(date +%s%N)
    kde k timeout $((60 + mib)) kdeconnect-cli --share "$work/big.bin" -d "$hexd_id" >/dev/null 2>&1 || true
    wait_until 'whole "$work/a/downloads/big.bin"' "$limit" || fail "round $round: the file did not land in hexd's"
    echo $((($(date +%s%N) - start) / 1000000)) >>"$work/file-hexd"
    [ "$(sha256sum <"$work/a/downloads/big.bin")" = "$sum" ] || fail "round $round: hexd's copy differs"
    rm -f "$work/a/downloads/big.bin"
    start=$(date +%s%N)
    kde k timeout $((60 + mib)) kdeconnect-cli --share "$work/big.bin" -d "$m_id" >/dev/null 2>&1 || true
    wait_until 'whole "$work/m-kde/Downloads/big.bin"' "$limit" || fail "round $round: the file did not land in m's"
    echo $((($(date +%s%N) - start) / 1000000)) >>"$work/file-kde"
    [ "$(sha256sum <"$work/m-kde/Downloads/big.bin")" = "$sum" ] || fail "round $round: kde-m's copy differs"
    rm -f "$work/m-kde/Downloads/big.bin"
done
file_hexd=$(median <"$work/file-hexd")
file_kde=$(median <"$work/file-kde")
say "a $mib MiB file, kdeconnect-cli's start to whole: hexd ${file_hexd} ms" \
    "($(awk -v m="$mib" -v t="$file_hexd" 'BEGIN { printf "%.0f", m * 1000 / t }') MiB/s), kdeconnectd ${file_kde} ms" \
    "($(awk -v m="$mib" -v t="$file_kde" 'BEGIN { printf "%.0f", m * 1000 / t }') MiB/s), median of 3;" \
    "hexd's time / kdeconnectd's $(awk -v a="$file_hexd" -v b="$file_kde" 'BEGIN { printf "%.2f", a / b }')"
say "  rounds (ms): hexd $(tr '\n' ' ' <"$work/file-hexd"); kdeconnectd $(tr '\n' ' ' <"$work/file-kde")"

# --- Idle: no KDE Connect device around (every daemon stopped), a fresh hexd each way.
for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
pids=()
cat >"$work/idle.py" <<'PYTHON'
import os, sys, time
pid, seconds = sys.argv[1], float(sys.argv[2])
tick = 1000 / os.sysconf("SC_CLK_TCK")
def snapshot():
    with open(f"/proc/{pid}/stat") as f:
        used = sum(int(x) for x in f.read().rsplit(")", 1)[1].split()[11:13]) * tick
    switches = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                switches += sum(int(line.split()[1]) for line in f if "ctxt_switches" in line)
        except OSError:
            pass
    return used, switches
def private():
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return sum(int(line.split()[1]) for line in f if line.startswith(("Private_Clean:", "Private_Dirty:")))
cpu0, woken0 = snapshot()
time.sleep(seconds)
cpu1, woken1 = snapshot()
print(round(cpu1 - cpu0), woken1 - woken0, private())
PYTHON
for mode in on off; do
    rm -rf "$work/idle-$mode"
    ip netns exec "$tag-a" "$bin/hexd" --data-dir "$work/idle-$mode" --name "idle-$mode" --mdns off --web off \
        --notify off --localsend off --kdeconnect "$mode" --log-level warning 2>"$work/idle-$mode.log" &
    idle_pid=$!
    pids+=("$idle_pid")
    wait_until '[ -S "$work/idle-$mode/hexd.sock" ]' 1000 || fail "the idle hexd ($mode) did not start"
    sleep 3
    read -r cpu woken private < <(python3 "$work/idle.py" "$idle_pid" 20)
    eval "idle_$mode=(\"\$cpu\" \"\$woken\" \"\$private\")"
    kill "$idle_pid"
    wait "$idle_pid" 2>/dev/null || true
done
say "idle 20 s, no device around: --kdeconnect on ${idle_on[0]} ms CPU, ${idle_on[1]} wake-ups," \
    "${idle_on[2]} KiB private; off ${idle_off[0]} ms CPU, ${idle_off[1]} wake-ups, ${idle_off[2]} KiB private" \
    "(+$(((idle_on[2] - idle_off[2]))) KiB with it on)"
say "done in $(($(date +%s) - began)) s"
