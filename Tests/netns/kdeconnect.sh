#!/usr/bin/env bash
# hexd as a KDE Connect device, against Debian's kdeconnectd (22.12, protocol 7) run headless on
# private session buses, in network namespaces on one bridge:
#   - host-a (hexd --kdeconnect on) starts after kdeconnectd in host-k: k hears a's broadcast and
#     dials it; each lists the other (hexctl peers and a peerFound event; kdeconnectd's D-Bus device
#     object, named);
#   - kdeconnectd in host-l starts after hexd: hexd hears l's broadcast and dials it; each lists
#     the other;
#   - a pairing request from k is declined by hexd (pairing comes later) and k does not trust it;
#   - seconds later both links still stand (22.12 loses a device whose link is closed under it).
# Broadcasts stay inside the namespaces. Each check is counted; the last line says how many
# passed. Every wait is bounded.
#
# Usage: kdeconnect.sh BIN_DIR   (needs root, iproute2, kdeconnect 22.12, dbus-daemon, gdbus, openssl)
set -euo pipefail
bin=${1:?usage: kdeconnect.sh BIN_DIR}
tag=hexdkc$$
work=$(mktemp -d /tmp/hexd-kdeconnect-XXXXXX)
pids=()
label=kdeconnect
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

kdeconnectd=/usr/lib/x86_64-linux-gnu/libexec/kdeconnectd
for tool in "$kdeconnectd" kdeconnect-cli dbus-daemon gdbus openssl; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (apt-get install kdeconnect dbus-daemon libglib2.0-bin)"
done

make_bridge
join_bridge a 10.71.0.1/24
join_bridge k 10.71.0.2/24
join_bridge l 10.71.0.3/24
# kdeconnectd broadcasts to 255.255.255.255 from an unbound socket: it needs a route for it.
for host in a k l; do ip -n "$tag-$host" route add default dev "s$host$$"; done

# kdeconnectd in host HOST, named kde-HOST, on a session bus of its own with no service directory
# (nothing is activated behind the test's back), its files under $work/HOST-kde.
start_kdeconnectd() {
    local host=$1 home=$work/$1-kde
    mkdir -p "$home/config/kdeconnect" "$home/runtime" "$home/cwd"
    chmod 700 "$home/runtime"
    printf '[General]\nname=kde-%s\n' "$host" >"$home/config/kdeconnect/config"
    cat >"$home/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$home/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
    ip netns exec "$tag-$host" dbus-daemon --config-file="$home/bus.conf" --nofork --nopidfile \
        >"$work/$host-bus.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do [ -S "$home/bus" ] && break; sleep 0.05; done
    [ -S "$home/bus" ] || fail "host-$host's session bus did not start"
    kde_env "$host"
    # The command itself in the background: its PID is kdeconnectd's, which stops.
    (cd "$home/cwd" && exec ip netns exec "$tag-$host" "${kenv[@]}" "$kdeconnectd" >"$work/$host-kdeconnectd.log" 2>&1) &
    pids+=($!)
    for _ in $(seq 100); do
        kde "$host" gdbus call --timeout 1 --session --dest org.kde.kdeconnect --object-path /modules/kdeconnect \
            --method org.kde.kdeconnect.daemon.announcedName >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    fail "kdeconnectd in host-$host did not start"
}
kde_env() {
    local home=$work/$1-kde
    kenv=(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$home" XDG_CONFIG_HOME="$home/config"
        XDG_DATA_HOME="$home/data" XDG_CACHE_HOME="$home/cache" XDG_RUNTIME_DIR="$home/runtime"
        DBUS_SESSION_BUS_ADDRESS="unix:path=$home/bus" QT_QPA_PLATFORM=offscreen QT_EXCLUDE_GENERIC_BEARER=1
        QT_LOGGING_RULES="kdeconnect.*.debug=true" LANG=C.UTF-8)
}
kde() { local host=$1; shift; kde_env "$host"; ip netns exec "$tag-$host" "${kenv[@]}" "$@"; }
# Whether kdeconnectd in HOST has a D-Bus object for device ID; kde_device reads its PROPERTY.
kde_sees() {
    local tree
    tree=$(kde "$1" timeout 5 gdbus introspect --session --dest org.kde.kdeconnect --object-path /modules/kdeconnect/devices \
        2>/dev/null) || return 1
    [[ "$tree" == *"node $2 "* ]]
}
kde_device() {
    kde "$1" timeout 10 gdbus call --session --dest org.kde.kdeconnect --object-path "/modules/kdeconnect/devices/$2" \
        --method org.freedesktop.DBus.Properties.Get org.kde.kdeconnect.device "$3" 2>&1
}
kde_id() { kde "$1" kdeconnect-cli --my-id 2>/dev/null; }
# Waits at most 10 s until host-a's hexd lists kde-HOST and kdeconnectd in HOST has hexd's device
# object; prints how long it took, in milliseconds.
wait_listed() {
    local host=$1 started peers
    started=$(milliseconds)
    for _ in $(seq 100); do
        peers=$(ctl a peers 2>/dev/null) || true
        if [[ "$peers" == *"kde-$host"* ]] && kde_sees "$host" "$hexd_id"; then
            echo $(($(milliseconds) - started))
            return 0
        fi
        sleep 0.1
    done
    return 1
}

start_kdeconnectd k
k_id=$(kde_id k)
[ -n "$k_id" ] || fail "kdeconnectd in host-k has no device ID"

start_hexd a --kdeconnect on --localsend off
hexd_id=$(openssl x509 -in "$work/a/kdeconnect.crt" -noout -subject -nameopt multiline | awk '/commonName/ { print $3 }')
[ ${#hexd_id} -eq 32 ] || fail "hexd's KDE Connect certificate names no 32-digit device ID: $hexd_id"

# k heard a's broadcast and dialed it: each lists the other.
listed=$(wait_listed k) || fail "host-a and kde-k did not list each other: $(ctl a peers) / $(kde k kdeconnect-cli -l 2>&1)"
peers=$(ctl a peers)
row=$(printf '%s\n' "$peers" | awk '/"kde-k"/')
[[ "$row" == *"KDE Connect 7"* ]] || fail "hexctl peers does not say KDE Connect 7: $peers"
name=$(kde_device k "$hexd_id" name)
[[ "$name" == *"host-a"* ]] || fail "kdeconnectd names hexd $name, not host-a"
found=$(ctl a watch --since 0 --until peerFound --timeout 5 --json) || fail "no peerFound event: $found"
[[ "$found" == *"\"kdeconnect:$k_id\""* ]] || fail "the peerFound event does not name kdeconnect:$k_id: $found"
pass "kdeconnectd (started first) dialed hexd on its broadcast; each lists the other ${listed} ms after hexd was up; \
hexctl watch says peerFound"

# l starts after hexd: hexd hears its broadcast and dials it.
start_kdeconnectd l
l_id=$(kde_id l)
listed=$(wait_listed l) || fail "host-a and kde-l did not list each other: $(ctl a peers) / $(kde l kdeconnect-cli -l 2>&1)"
grep -q "KDE Connect device kde-l" "$work/a.log" || fail "hexd did not log kde-l"
pass "hexd dialed kdeconnectd (started later) on its broadcast; each lists the other ${listed} ms after l was up"

# A pairing request from k: hexd declines it, and k does not trust hexd.
kde k timeout 10 kdeconnect-cli --pair -d "$hexd_id" >/dev/null 2>&1 || true
declined=""
for _ in $(seq 50); do
    grep -q "declined a pairing request from KDE Connect device kde-k" "$work/a.log" && declined=yes && break
    sleep 0.1
done
[ -n "$declined" ] || fail "hexd did not decline kde-k's pairing request"
# Declined, not left pending: 22.12 says so when the answer reaches it (a request left unanswered
# stays for 30 s).
cancelled=""
for _ in $(seq 50); do
    grep -q 'Device pairing error "Canceled by other peer"' "$work/k-kdeconnectd.log" && cancelled=yes && break
    sleep 0.1
done
[ -n "$cancelled" ] || fail "kde-k did not get hexd's refusal"
trusted=$(kde_device k "$hexd_id" isTrusted)
[[ "$trusted" == *"false"* ]] || fail "kde-k trusts hexd after a declined request: $trusted"
pass "kde-k's pairing request was declined by hexd (pairing comes later): kde-k got the refusal, trusts nothing"

# Seconds later both links stand: no device lost on either side, and no link crossed.
sleep 3
kde_sees k "$hexd_id" && kde_sees l "$hexd_id" || fail "a kdeconnectd lost hexd's device object"
peers=$(ctl a peers)
[[ "$peers" == *kde-k* && "$peers" == *kde-l* ]] || fail "hexd lost a device: $peers"
arrivals=$(grep -c "KDE Connect device kde-k (" "$work/a.log" || true)
[ "$arrivals" -eq 1 ] && ! grep -q "KDE Connect device kde-. is gone" "$work/a.log" \
    || fail "hexd lost or found kde-k again ($arrivals arrivals): $(grep 'KDE Connect device' "$work/a.log")"
[ -n "$k_id" ] && [ -n "$l_id" ] || fail "no device IDs"
pass "3 s later hexd and both kdeconnectd still list each other; hexd found kde-k once and lost no device"

echo "$label: $passed passed, 0 failed"
