#!/usr/bin/env bash
# What DNS-SD costs an idle daemon: two pairs of hexd on two bridges at once, one pair with its own
# mDNS responder (--mdns on), the other without (--mdns off), beacons every 2 s (the default).
# Once each pair lists each other, the CPU time (utime + stime, /proc/PID/stat) and context
# switches (/proc/PID/task/*/status) of one daemon of each pair over SECONDS (30 by default), and
# its RSS at the end; then the ratios, on against off.
# A benchmark: it prints figures and enforces nothing. Touches only the namespaces it makes.
#
# Usage: mdns-bench.sh BIN_DIR [SECONDS]   (needs root and iproute2)
set -euo pipefail
bin=${1:?usage: mdns-bench.sh BIN_DIR [SECONDS]}
seconds=${2:-30}
tag=hexdm$$
work=$(mktemp -d /tmp/hexd-mdns-XXXXXX)
pids=()
label=mdns-bench
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

# Two segments: on-a and on-b (mDNS on), off-a and off-b (off).
make_hosts br2
ip -n "$tag-br2" link add br0 type bridge
ip -n "$tag-br2" link set br0 up
make_bridge
number=1
for host in on-a on-b off-a off-b; do
    make_hosts "$host"
    bridge="$tag-br"
    case $host in off-*) bridge="$tag-br2" ;; esac
    ip link add "v$number$$" netns "$tag-$host" type veth peer name "p$number$$" netns "$bridge"
    ip -n "$bridge" link set "p$number$$" master br0 up
    ip -n "$tag-$host" addr add "10.69.0.$number/24" brd + dev "v$number$$"
    ip -n "$tag-$host" link set "v$number$$" up
    number=$((number + 1))
done
for host in on-a on-b off-a off-b; do
    ip netns exec "$tag-$host" "$bin/hexd" --kdeconnect off --data-dir "$work/$host" --name "$host" --mdns "${host%-*}" \
        --localsend off 2>"$work/$host.log" &
    pids+=($!)
    eval "pid_${host%-*}_${host#*-}=$!"
done
for _ in $(seq 200); do
    ctl on-a peers 2>/dev/null | grep -q on-b && ctl off-a peers 2>/dev/null | grep -q off-b && break
    sleep 0.05
done
# Settled: the responder has probed and announced, both have browsed.
sleep 5
ctl on-a status | grep -q "^dns-sd: published" || fail "on-a does not publish: $(ctl on-a status)"
ctl off-a status | grep -q "^dns-sd: off" || fail "off-a runs DNS-SD: $(ctl off-a status)"

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
switches() { cat /proc/"$1"/task/*/status | awk '/ctxt_switches/ { n += $2 } END { print n }'; }
rss() { awk '/VmRSS/ { print $2 }' "/proc/$1/status"; }
# shellcheck disable=SC2154 # set by eval above
on=$pid_on_a off=$pid_off_a
on_ticks=$(ticks "$on") off_ticks=$(ticks "$off") on_switches=$(switches "$on") off_switches=$(switches "$off")
sleep "$seconds"
on_ticks=$(($(ticks "$on") - on_ticks)) off_ticks=$(($(ticks "$off") - off_ticks))
on_switches=$(($(switches "$on") - on_switches)) off_switches=$(($(switches "$off") - off_switches))
hz=$(getconf CLK_TCK)
on_rss=$(rss "$on") off_rss=$(rss "$off")
awk -v label="$label" -v seconds="$seconds" -v hz="$hz" -v on_ticks="$on_ticks" -v off_ticks="$off_ticks" \
    -v on_switches="$on_switches" -v off_switches="$off_switches" -v on_rss="$on_rss" -v off_rss="$off_rss" 'BEGIN {
    printf "%s: mDNS on: CPU %d ms in %d s, %.1f context switches/s, RSS %.1f MiB\n", label,
        on_ticks * 1000 / hz, seconds, on_switches / seconds, on_rss / 1024
    printf "%s: mDNS off: CPU %d ms in %d s, %.1f context switches/s, RSS %.1f MiB\n", label,
        off_ticks * 1000 / hz, seconds, off_switches / seconds, off_rss / 1024
    printf "%s: on/off: switches %.2fx, RSS %.2fx (CPU counted in %d ms ticks)\n", label,
        on_switches / (off_switches ? off_switches : 1), on_rss / off_rss, 1000 / hz
}'
