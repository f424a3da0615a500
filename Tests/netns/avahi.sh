#!/usr/bin/env bash
# DNS-SD through Avahi, in network namespaces on one bridge whose hosts drop every discovery beacon
# (nftables), so that only DNS-SD finds anyone:
#   - host-a runs Avahi (avahi-daemon, on a system bus of its own: dbus-daemon) and hexd, which finds
#     Avahi on that bus, publishes and browses through it and never binds port 5353 itself;
#     avahi-browse -rpt lists host-a with its ID in TXT; Avahi logs no "another mDNS stack" warning;
#     both publish KDE Connect's _kdeconnect._udp too (host-a through Avahi, host-b itself), named by
#     the device ID, with the TXT keys the apps read;
#   - host-b runs hexd with its own responder: host-a and host-b list each other (each found through
#     the other's stack) and exchange hexes over TLS; python-zeroconf in host-z finds host-a;
#   - Avahi restarted, host-a is published again, and Avahi still finds no other stack;
#   - hidden, host-a is gone from a fresh avahi-browse (timed), from a fresh zeroconf browse, and
#     from host-b's peers; visible again, it is back;
#   - a stopped host-a is dropped by host-b at once (Avahi's goodbye);
#   - started again with its name taken by avahi-publish, host-a takes the name Avahi proposes;
#   - host-z's hexd, with its own responder and its name held by Avahi, takes "host-z (2)".
# Each check is counted; the last line says how many passed and failed. Touches only the
# namespaces it makes; every wait is bounded.
#
# Usage: avahi.sh BIN_DIR [AVAHI_ROOT]   (needs root, iproute2, nftables, dbus-daemon, util-linux's
# unshare, python3-zeroconf, and avahi-daemon and avahi-browse: on the PATH, or unpacked under
# AVAHI_ROOT from Debian's packages, as .ci/run does so that no Avahi starts on the host itself)
set -euo pipefail
bin=${1:?usage: avahi.sh BIN_DIR [AVAHI_ROOT]}
if [ -n "${2:-}" ]; then
    PATH="$2/usr/sbin:$2/usr/bin:$PATH"
    LD_LIBRARY_PATH=$(echo "$2"/usr/lib/*-linux-gnu)
    export PATH LD_LIBRARY_PATH
fi
tag=hexdav$$
work=$(mktemp -d /tmp/hexd-avahi-XXXXXX)
pids=()
label=avahi
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/system_bus_socket"
avahi_browse() { ip netns exec "$tag-a" timeout 10 avahi-browse -rpt _hexd._tcp; }

make_bridge
join_bridge a 10.68.0.1/24
join_bridge b 10.68.0.2/24
join_bridge z 10.68.0.3/24
drop_beacons a b
wait_for_link_local "$tag-a:sa$$" "$tag-b:sb$$" "$tag-z:sz$$"

# A system bus of host-a's own, which lets anyone own any name (Avahi takes org.freedesktop.Avahi).
cat >"$work/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>$DBUS_SYSTEM_BUS_ADDRESS</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/><allow send_type="signal"/>
    <allow send_type="method_return"/><allow send_type="error"/>
    <allow receive_type="method_call"/><allow receive_type="signal"/>
    <allow receive_type="method_return"/><allow receive_type="error"/>
  </policy>
</busconfig>
EOF
cat >"$work/avahi.conf" <<EOF
[server]
use-ipv4=yes
use-ipv6=yes
allow-interfaces=sa$$
enable-dbus=yes
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
EOF
ip netns exec "$tag-a" dbus-daemon --config-file="$work/bus.conf" --nofork 2>"$work/bus.log" &
pids+=($!)
for _ in $(seq 100); do [ -S "$work/system_bus_socket" ] && break; sleep 0.05; done
# Avahi writes its pid file and socket under /run: a private /run keeps them off the host's.
start_avahi() {
    ip netns exec "$tag-a" unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs /run &&
        mkdir /run/avahi-daemon && exec avahi-daemon -f "$1" --no-drop-root --no-chroot --no-rlimits' \
        sh "$work/avahi.conf" >"$work/avahi-$1.log" 2>&1 &
    avahi=$!
    pids+=("$avahi")
    for _ in $(seq 100); do grep -q "Server startup complete" "$work/avahi-$1.log" && return 0; sleep 0.05; done
    fail "Avahi did not start: $(cat "$work/avahi-$1.log")"
}
start_avahi 1

start_hexd() {
    local host=$1
    shift
    # As a user runs it: LocalSend and KDE Connect on beside DNS-SD.
    ip netns exec "$tag-$host" "$bin/hexd" --data-dir "$work/$host" --name "host-$host" --announce-interval 1 \
        "$@" 2>>"$work/$host.log" &
    pids+=($!)
    eval "pid_$host=$!"
    for _ in $(seq 100); do [ -S "$work/$host/hexd.sock" ] && return 0; sleep 0.05; done
    fail "host-$host did not start"
}
start_hexd a
# host-b's bus is one with no Avahi on it, wherever the test runs: it runs hexd's own responder.
DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/no-bus" start_hexd b
started=$(milliseconds)
mutual=""
for _ in $(seq 200); do
    ctl a peers 2>/dev/null | grep -q host-b && ctl b peers 2>/dev/null | grep -q host-a \
        && mutual=$(($(milliseconds) - started)) && break
    sleep 0.05
done
ctl a status | grep -q "^dns-sd: published through avahi" \
    || fail "host-a is not published through Avahi: $(ctl a status)"
ctl b status | grep -q "^dns-sd: published as 'host-b'" || fail "host-b does not run its own responder: $(ctl b status)"
[ -n "$mutual" ] || fail "host-a and host-b did not find each other: $(ctl a peers) / $(ctl b peers)"
pass "host-a (through Avahi) and host-b (its own responder) list each other by DNS-SD alone, $mutual ms after both \
were up: $(ctl a status | grep '^dns-sd')"

holders=$(ip netns exec "$tag-a" ss -lunpH 'sport = :5353')
echo "$holders" | grep -q avahi-daemon || fail "Avahi does not hold port 5353: $holders"
echo "$holders" | grep -q hexd && fail "host-a's hexd binds port 5353 beside Avahi: $holders"
pass "in host-a only Avahi holds UDP 5353"

listing=$(avahi_browse)
echo "$listing" | grep '^=;sa[0-9]*;IPv4;host-a;' | grep "\"id=$(peer_id a)\"" >/dev/null \
    || fail "avahi-browse does not list host-a with its ID: $listing"
echo "$listing" | grep '^=;sa[0-9]*;IPv6;host-b;' | grep "\"id=$(peer_id b)\"" >/dev/null \
    || fail "avahi-browse does not list host-b over IPv6: $listing"
pass "avahi-browse -rpt lists host-a and host-b with their IDs"

# KDE Connect's service, beside hexd's: through Avahi for host-a, from its own responder for host-b,
# each named by its KDE Connect device ID with the TXT keys the apps read.
kde=$(ip netns exec "$tag-a" timeout 10 avahi-browse -rpt _kdeconnect._udp)
for host in a b; do
    device=$(ctl "$host" status --json | carrier kdeconnect 'c["identity"]')
    echo "$kde" | grep "^=;sa[0-9]*;IPv4;$device;_kdeconnect._udp;" | grep "\"id=$device\"" | grep '"protocol=8"' \
        | grep -q "\"name=host-$host\"" || fail "avahi-browse does not list host-$host's _kdeconnect._udp: $kde"
done
pass "avahi-browse lists host-a's and host-b's _kdeconnect._udp, each its device ID with its name and protocol"
# No stage may stop reading early under pipefail: a writer cut off would fail the check. Both
# instances are waited for: waiting for one stopped at host-b's now and then, when zeroconf
# resolved it first (the intermittent miss once blamed on LocalSend).
browse all 10 2 | grep '"name": "host-a\._hexd' | grep "\"id\": \"$(peer_id a)\"" >/dev/null \
    || fail "zeroconf in host-z did not find host-a"
pass "zeroconf in host-z finds host-a, as Avahi published it"

out=$(ctl a send --to host-b -d "through Avahi" https://example.com/avahi) || fail "send a to b: $out"
echo "$out" | grep -q "^stored by host-b .* over TLS" || fail "a to b not stored over TLS: $out"
out=$(ctl b send --to host-a -d "to Avahi's host" https://example.com/avahi2) || fail "send b to a: $out"
echo "$out" | grep -q "^stored by host-a .* over TLS" || fail "b to a not stored over TLS: $out"
pass "hexes go both ways over TLS, each peer found by DNS-SD alone"

grep -qi "another .* mDNS stack" "$work/avahi-1.log" && fail "Avahi saw another mDNS stack: $(cat "$work/avahi-1.log")"
kill "$avahi"
wait "$avahi" 2>/dev/null || true
for _ in $(seq 100); do ctl a status | grep -q "^dns-sd: through Avahi: waiting" && break; sleep 0.05; done
ctl a status | grep -q "^dns-sd: through Avahi: waiting" || fail "host-a did not notice Avahi stop: $(ctl a status)"
start_avahi 2
for _ in $(seq 100); do ctl a status | grep -q "^dns-sd: published through avahi" && break; sleep 0.1; done
ctl a status | grep -q "^dns-sd: published through avahi" || fail "host-a not published again: $(ctl a status)"
for _ in $(seq 5); do listing=$(avahi_browse); echo "$listing" | grep -q "^=;sa[0-9]*;IPv4;host-a;" && break; done
echo "$listing" | grep -q "^=;sa[0-9]*;IPv4;host-a;" \
    || fail "avahi-browse does not list host-a after Avahi restarted: $listing"
grep -qi "another .* mDNS stack" "$work/avahi-2.log" && fail "Avahi saw another mDNS stack: $(cat "$work/avahi-2.log")"
pass "Avahi restarted: host-a is published again; neither Avahi start saw another mDNS stack"

hidden=$(milliseconds)
ctl a visibility hidden >/dev/null
# Avahi keeps what it heard for a second after a goodbye (RFC 6762, 10.1), its own announcements too.
absent=""
for _ in $(seq 20); do
    began=$(milliseconds)
    listing=$(avahi_browse)
    echo "$listing" | grep -q ';host-a;' || { absent=$((began - hidden)); break; }
    sleep 0.1
done
[ -n "$absent" ] || fail "hidden, host-a is still in avahi-browse: $listing"
echo "$listing" | grep -q ';host-b;' || fail "host-b went missing from avahi-browse too: $listing"
browse all 3 | grep '"name": "host-a\._hexd' >/dev/null && fail "hidden, host-a is still found by zeroconf"
for _ in $(seq 50); do ctl b peers | grep -q host-a || break; sleep 0.1; done
ctl b peers | grep -q host-a && fail "hidden, host-a is still listed by host-b: $(ctl b peers)"
pass "hidden, host-a is gone from a fresh avahi-browse started $absent ms after hexctl visibility was run, \
and from zeroconf and host-b's peers"
ctl a visibility visible >/dev/null
avahi_browse | grep -q '^=;sa[0-9]*;IPv4;host-a;' || fail "visible again, avahi-browse does not list host-a"
for _ in $(seq 100); do ctl b peers | grep -q host-a && break; sleep 0.1; done
ctl b peers | grep -q host-a || fail "visible again, host-b does not list host-a"
pass "visible again, avahi-browse and host-b list host-a"

# shellcheck disable=SC2154 # set by start_hexd
kill "$pid_a"
stopped=$(milliseconds)
gone=""
for _ in $(seq 100); do
    ctl b peers | grep -q host-a || { gone=$(($(milliseconds) - stopped)); break; }
    sleep 0.02
done
[ -n "$gone" ] || fail "host-b still lists host-a 2 s after it stopped"
pass "host-a stopped: host-b dropped it $gone ms later"
# A name another program published through Avahi first: hexd takes the one Avahi proposes.
ip netns exec "$tag-a" avahi-publish -s host-a _hexd._tcp 9 "id=not-hexd" >"$work/publish.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "Established" "$work/publish.log" && break; sleep 0.05; done
grep -q "Established" "$work/publish.log" || fail "avahi-publish did not publish: $(cat "$work/publish.log")"
start_hexd a
for _ in $(seq 100); do ctl a status | grep -q "^dns-sd: published through" && break; sleep 0.05; done
ctl a status | grep -q "^dns-sd: published through avahi .* as 'host-a #2'" \
    || fail "host-a did not take Avahi's alternative name: $(ctl a status)"
# avahi-browse -p writes a space as \032 and '#' as \035.
listing=$(avahi_browse)
echo "$listing" | grep '^=;sa[0-9]*;IPv4;host-a\\032\\0352;' | grep -q "\"id=$(peer_id a)\"" \
    || fail "avahi-browse does not list 'host-a #2' with host-a's ID: $listing"
pass "started again with its name taken by avahi-publish, host-a is published as 'host-a #2', with its ID"

# The same with hexd's own responder against Avahi, a responder hexd did not write: Avahi holds
# "host-z" and defends it when host-z's hexd probes for it (RFC 6762, 8 and 9); hexd takes the
# next name, "host-z (2)", and Avahi's browser lists it under that name with host-z's ID.
ip netns exec "$tag-a" avahi-publish -s host-z _hexd._tcp 9 "id=not-hexd" >"$work/publish-z.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "Established" "$work/publish-z.log" && break; sleep 0.05; done
grep -q "Established" "$work/publish-z.log" || fail "avahi-publish did not publish host-z: $(cat "$work/publish-z.log")"
DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/no-bus" start_hexd z
for _ in $(seq 100); do ctl z status | grep -q "^dns-sd: published as" && break; sleep 0.05; done
ctl z status | grep -q "^dns-sd: published as 'host-z (2)'" \
    || fail "host-z's own responder did not take the next name: $(ctl z status)"
grep -q "another responder uses this DNS-SD instance name: probing for 'host-z (2)'" "$work/z.log" \
    || fail "host-z did not say why it renamed: $(cat "$work/z.log")"
listing=$(avahi_browse)
echo "$listing" | grep '^=;sa[0-9]*;IPv4;host-z\\032' | grep -q "\"id=$(peer_id z)\"" \
    || fail "avahi-browse does not list 'host-z (2)' with host-z's ID: $listing"
echo "$listing" | grep '^=;sa[0-9]*;IPv4;host-z;' | grep -q '"id=not-hexd"' \
    || fail "avahi-publish's host-z is no longer listed as it was: $listing"
pass "with its name held by Avahi, host-z's own responder lost the probe and published as 'host-z (2)', \
and Avahi's host-z is untouched"
echo "$label: $passed passed, 0 failed"
