# What the network-namespace tests share, sourced by each after it set:
#   label  the prefix of its output lines ("netns"), tag  the prefix of its namespaces,
#   work   its scratch directory, pids  the processes it started.
# On exit every process is stopped and every namespace named "$tag-*" and the directory removed.
# pass/fail count the checks; fail prints every daemon's log and the count, and exits 1.

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
