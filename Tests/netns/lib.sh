# What the network-namespace tests share, sourced by each after it set:
#   label  the prefix of its output lines ("netns"), tag  the prefix of its namespaces,
#   work   its scratch directory, pids  the processes it started.
# On exit every process is stopped and every namespace named "$tag-*" and the directory removed.
# pass/fail count the checks; fail prints every daemon's log and the count, and exits 1; wait_until
# waits, bounded, for a condition; ctl and wait_for_each_other speak to the daemons of host-a and
# host-b; make_hosts, make_bridge, join_bridge and wait_for_link_local set up namespaces and wait
# for their addresses; drop_beacons keeps a host from hearing beacons; browse and peer_id serve the
# DNS-SD tests; start_hexd starts host HOST's daemon as the LocalSend tests do, start_localsendd
# PyPI's localsendd, and lsctl speaks to it; json and objects read JSON answers with Python.

cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    for ns in $(ip netns list | awk -v tag="$tag-" 'index($1, tag) == 1 { print $1 }'); do
        ip netns del "$ns" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
# No daemon of these tests reaches the machine's system bus (its Avahi, or its BlueZ, which would broadcast
# a Bluetooth LE advertisement for a Quick Share send that waits): a test that wants a bus starts its own.
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/no-system-bus"
passed=0
pass() { passed=$((passed + 1)); echo "$label: ok: $*"; }
fail() {
    echo "$label: FAILED: $*"
    for log in "$work"/*.log; do echo "--- $log"; cat "$log"; done
    echo "$label: $passed passed, 1 failed"
    exit 1
}
milliseconds() { echo $(($(date +%s%N) / 1000000)); }
# Waits until the shell condition $1 holds, at most $2 tenths of a second (100: 10 s).
wait_until() {
    for _ in $(seq "${2:-100}"); do eval "$1" && return 0; sleep 0.1; done
    return 1
}

# hexctl against host HOST's daemon (data in $work/HOST, namespace $tag-HOST; $bin set by the script).
ctl() { local host=$1; shift; HEXD_DATA_DIR="$work/$host" ip netns exec "$tag-$host" "$bin/hexctl" "$@"; }

# Waits, at most 10 s, until host-a and host-b list each other (the caller checks that they did).
wait_for_each_other() {
    for _ in $(seq 100); do
        ctl a peers 2>/dev/null | grep -q host-b && ctl b peers 2>/dev/null | grep -q host-a && return 0
        sleep 0.1
    done
}

# Makes the namespace "$tag-HOST" for each HOST given, its loopback up, without duplicate address
# detection (IPv6 addresses are usable at once, not after a second or two).
make_hosts() {
    for host in "$@"; do
        ip netns add "$tag-$host"
        ip netns exec "$tag-$host" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
        ip -n "$tag-$host" link set lo up
    done
}

# Waits, at most 5 s, until each NAMESPACE:DEVICE given has its IPv6 link-local address: the
# kernel gives a link one once it sees the carrier, up to a second after the link is up.
wait_for_link_local() {
    for _ in $(seq 100); do
        local missing=no
        for pair in "$@"; do
            ip -n "${pair%%:*}" -6 addr show dev "${pair#*:}" scope link | grep -q inet6 || missing=yes
        done
        [ "$missing" = no ] && return 0
        sleep 0.05
    done
}

# Makes the namespace "$tag-br" holding the bridge br0, up.
make_bridge() {
    make_hosts br
    ip -n "$tag-br" link add br0 type bridge
    ip -n "$tag-br" link set br0 up
}

# Makes the namespace of HOST (make_hosts) and joins it to the bridge by a veth pair, "s<HOST>$$"
# on its side, with the IPv4 address ADDRESS (and a prefix) and a broadcast address.
join_bridge() {
    local host=$1 address=$2
    make_hosts "$host"
    ip link add "s$host$$" netns "$tag-$host" type veth peer name "p$host$$" netns "$tag-br"
    ip -n "$tag-br" link set "p$host$$" master br0 up
    ip -n "$tag-$host" addr add "$address" brd + dev "s$host$$"
    ip -n "$tag-$host" link set "s$host$$" up
}

# Drops every datagram to the discovery port (18520) in the namespace of each HOST given
# (nftables): they hear no beacon, while mDNS still passes.
drop_beacons() {
    for host in "$@"; do
        ip netns exec "$tag-$host" nft add table inet hexdtest
        ip netns exec "$tag-$host" nft add chain inet hexdtest input '{ type filter hook input priority 0; }'
        ip netns exec "$tag-$host" nft add rule inet hexdtest input udp dport 18520 drop
    done
}

# Debian's python3-zeroconf is found by Debian's python3, which may not be the first on PATH.
python=python3
python3 -c "import zeroconf" 2>/dev/null || python=/usr/bin/python3

# Tests/netns/dnssd-browse.py (python-zeroconf, a DNS-SD stack hexd did not write) in the
# namespace of host $browser (host-z unless set), with the arguments given.
browse() {
    ip netns exec "$tag-${browser:-z}" "$python" "$(dirname "${BASH_SOURCE[0]}")/dnssd-browse.py" "$@"
}

# The peer ID of host HOST's daemon.
peer_id() { ctl "$1" status --json | "$python" -c 'import json, sys; print(json.load(sys.stdin)["peerUUID"])'; }

# Starts hexd as host-HOST in the namespace "$tag-HOST" (data in $work/HOST, log in $work/HOST.log),
# with the options every LocalSend test gives and any more given, and waits at most 15 s until it
# is ready (hexctl wait: it answers, and is a LocalSend and KDE Connect device as asked; $bin set
# by the script). KDE Connect is on, as for a user (hexd's on other hosts are left to hexd's own
# protocol, Protocol.md section 16.1).
start_hexd() {
    local host=$1
    shift
    ip netns exec "$tag-$host" "$bin/hexd" --data-dir "$work/$host" --name "host-$host" --announce-interval 1 \
        --mdns off --web off --notify off --log-level debug "$@" 2>"$work/$host.log" &
    pids+=($!)
    for _ in $(seq 200); do [ -S "$work/$host/hexd.sock" ] && break; sleep 0.05; done
    # Ready: it answers, and its LocalSend and KDE Connect devices are up (they start just after).
    ctl "$host" wait --timeout 10 >/dev/null 2>&1 || fail "host-$host's hexd did not start"
}

# What the Python expression $1 makes of the JSON on standard input, as `data`.
json() { python3 -c "import json, sys; data = json.load(sys.stdin); print($1)"; }

# What a hexd's status (its JSON on standard input) says of its carrier of kind $1 (localsend,
# kdeconnect, quickshare): the Python expression $2 of it, as `c`, with `count`, its figures by name
# (c["port"], c["identity"], count["devices"], c["notes"]).
carrier() {
    python3 -c "import json, sys
c = next(c for c in json.load(sys.stdin)['carriers'] if c['kind'] == '$1')
count = {figure['name']: figure['count'] for figure in c['counts']}
print($2)"
}

# How many devices a hexd's status (its JSON on standard input) lists for LocalSend and KDE Connect: "(N, M)".
foreign_devices() {
    python3 -c "import json, sys
carriers = {c['kind']: c for c in json.load(sys.stdin)['carriers']}
counts = [{f['name']: f['count'] for f in carriers[k]['counts']} for k in ('localsend', 'kdeconnect')]
print(tuple(count['devices'] for count in counts))"
}

# The JSON objects among lines of standard input (a tool's output may mix in lines that are not
# JSON), filtered by the Python expression $1 over each object o, each printed as $2 makes it.
objects() {
    python3 -c '
import json, sys
for line in sys.stdin:
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if isinstance(o, dict) and ('"$1"'):
        print('"$2"')'
}

# Starts PyPI's localsendd as device ALIAS in host HOST's namespace, on LocalSend's port, with any
# more options given (its state in $work/lsd-state and lsd-config, its control socket
# $work/lsd.sock, what it receives in $work/lsd-downloads, its log $work/localsendd.log), and waits
# at most 5 s for its socket. Sets lsd_pid; lsctl speaks to it.
start_localsendd() {
    local alias=$2
    lsd_env=(ip netns exec "$tag-$1" env XDG_STATE_HOME="$work/lsd-state" XDG_CONFIG_HOME="$work/lsd-config")
    shift 2
    rm -f "$work/lsd.sock"
    # The command itself in the background (no function between): its PID is python's, which stops.
    "${lsd_env[@]}" python3 -m localsendd --port 53317 --socket "$work/lsd.sock" --alias "$alias" \
        --download-dir "$work/lsd-downloads" --unattended --log-level debug "$@" 2>>"$work/localsendd.log" &
    lsd_pid=$!
    pids+=("$lsd_pid")
    for _ in $(seq 100); do [ -S "$work/lsd.sock" ] && break; sleep 0.05; done
    [ -S "$work/lsd.sock" ] || fail "localsendd did not start"
}
lsctl() {
    "${lsd_env[@]}" python3 -c 'import sys; from localsendd.cli import main; sys.exit(main())' --socket "$work/lsd.sock" "$@"
}
