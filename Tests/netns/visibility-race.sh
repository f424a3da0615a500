#!/usr/bin/env bash
# Two visibility changes that overlap, in network namespaces on one bridge: host-a's hexd (its
# defaults, and a --peer named by DNS whose name server, a script of the test's in host-a, answers
# after 2 s) is asked to hide, and while its bye waits for that name, asked to show again. The last
# change asked is what holds: host-a says it is visible, and its beacons go on, so that host-b
# (its defaults) lists it past the time a peer without beacons expires (the old daemon hid for good
# once the bye went out, while saying it was visible). Each check is counted; the last line says how
# many passed. Touches only the namespaces it makes, and /etc/netns/ of its own namespace (the name
# server `ip netns exec` gives host-a), removed at its end; every wait is bounded.
#
# Usage: visibility-race.sh BIN_DIR   (needs root, iproute2 and python3)
set -euo pipefail
bin=${1:?usage: visibility-race.sh BIN_DIR}
tag=hexdv$$
work=$(mktemp -d /tmp/hexd-visibility-race-XXXXXX)
pids=()
label=visibility-race
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"
trap 'rm -rf "/etc/netns/$tag-a"; cleanup' EXIT

make_bridge
join_bridge a 10.69.0.1/24
join_bridge b 10.69.0.2/24
# `ip netns exec` puts /etc/netns/NAME/resolv.conf in place of /etc/resolv.conf.
mkdir -p "/etc/netns/$tag-a"
echo "nameserver 10.69.0.1" >"/etc/netns/$tag-a/resolv.conf"
# A name server that answers every question after DELAY seconds: A with 10.69.0.9 (no host), any
# other type with no record.
cat >"$work/slow-dns.py" <<'PYTHON'
import socket, struct, sys, threading, time
address, delay = sys.argv[1], float(sys.argv[2])
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind((address, 53))
def answer(query, client):
    time.sleep(delay)
    end = 12
    while end < len(query) and query[end] != 0:
        end += query[end] + 1
    end += 5
    if end > len(query):
        return
    kind = struct.unpack("!H", query[end - 4:end - 2])[0]
    record = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 4) + socket.inet_aton("10.69.0.9") if kind == 1 else b""
    header = query[:2] + struct.pack("!HHHHH", 0x8180, 1, 1 if record else 0, 0, 0)
    sock.sendto(header + query[12:end] + record, client)
while True:
    query, client = sock.recvfrom(512)
    threading.Thread(target=answer, args=(query, client), daemon=True).start()
PYTHON
ip netns exec "$tag-a" python3 "$work/slow-dns.py" 10.69.0.1 2 &
pids+=($!)

for host in a b; do
    extra=()
    [ "$host" = a ] && extra=(--peer slow.test:8020)
    HOME="$work/home-$host" ip netns exec "$tag-$host" "$bin/hexd" --data-dir "$work/$host" --name "host-$host" \
        --announce-interval 2 --log-level debug "${extra[@]}" 2>"$work/$host.log" &
    pids+=($!)
done
ctl a wait --timeout 10 >/dev/null || fail "host-a did not start"
ctl b wait --timeout 10 >/dev/null || fail "host-b did not start"
wait_for_each_other
ctl b peers | grep -q host-a || fail "host-b does not list host-a: $(ctl b peers)"
pass "host-a and host-b list each other"

# Hidden: its bye goes out on the link at once, then waits 2 s for the --peer's name. Shown again
# meanwhile.
ctl a visibility hidden >"$work/hidden.out" 2>&1 &
hiding=$!
sleep 0.5
kill -0 "$hiding" 2>/dev/null || fail "the hide did not wait for the --peer's name: $(cat "$work/hidden.out")"
ctl a visibility visible >"$work/shown.out" 2>&1 || fail "visibility visible: $(cat "$work/shown.out")"
wait "$hiding" || fail "visibility hidden: $(cat "$work/hidden.out")"
said=$(ctl a visibility 2>&1)
[[ "$said" == visible* ]] && pass "the last change asked holds: host-a says '$said'" \
    || fail "host-a says '$said' after hidden then visible"
# A peer heard from no more leaves host-b's table after 3 intervals (6 s): past that, host-a is
# listed only if its beacons go on.
sleep 7
wait_until 'ctl b peers | grep -q host-a' 30 \
    && pass "host-a's beacons went on: host-b lists it 7 s after the bye went out" \
    || fail "host-a says it is visible, but host-b lists it no more: $(ctl b peers)"
echo "$label: $passed passed, 0 failed"
