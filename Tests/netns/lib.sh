# What the network-namespace tests share, sourced by each after it set:
#   label  the prefix of its output lines ("netns"), tag  the prefix of its namespaces,
#   work   its scratch directory, pids  the processes it started.
# On exit every process is stopped and every namespace named "$tag-*" and the directory removed.
# pass/fail count the checks; fail prints every daemon's log and the count, and exits 1; ctl and
# wait_for_each_other speak to the daemons of host-a and host-b.

cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    for ns in $(ip netns list | awk -v tag="$tag-" 'index($1, tag) == 1 { print $1 }'); do
        ip netns del "$ns" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
passed=0
pass() { passed=$((passed + 1)); echo "$label: ok: $*"; }
fail() {
    echo "$label: FAILED: $*"
    for log in "$work"/*.log; do echo "--- $log"; cat "$log"; done
    echo "$label: $passed passed, 1 failed"
    exit 1
}
milliseconds() { echo $(($(date +%s%N) / 1000000)); }

# hexctl against host HOST's daemon (data in $work/HOST, namespace $tag-HOST; $bin set by the script).
ctl() { local host=$1; shift; HEXD_DATA_DIR="$work/$host" ip netns exec "$tag-$host" "$bin/hexctl" "$@"; }

# Waits, at most 10 s, until host-a and host-b list each other (the caller checks that they did).
wait_for_each_other() {
    for _ in $(seq 100); do
        ctl a peers 2>/dev/null | grep -q host-b && ctl b peers 2>/dev/null | grep -q host-a && return 0
        sleep 0.1
    done
}
