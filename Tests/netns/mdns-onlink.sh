#!/usr/bin/env bash
# Which sources hexd's own mDNS responder answers (RFC 6762, section 11: those on one of its links),
# in network namespaces on one bridge: host-a runs hexd with DNS-SD on (its own responder, its KDE
# Connect device publishing `_kdeconnect._udp` beside `_hexd._tcp`); host-z asks for each service
# (mdns-query.py, a legacy unicast query, so the answer comes back to the very address that asked)
# from each of its addresses:
#   - on-link, all answered: its IPv6 link-local address, its ULA within the link's prefix
#     (fd77::3/64, host-a has fd77::1/64), its IPv4 address within the subnet;
#   - of no prefix or subnet of host-a's: a ULA of another prefix (fd99::3/128) and an IPv4 address
#     of another subnet (192.168.77.3/32), both on host-z's interface. Asked as an mDNS querier asks
#     (from port 5353, answered by multicast), with TTL or hop limit 64, as a routed host's query
#     arrives, none answered; with 255, which only a sender on the link can make a datagram arrive
#     with, all answered (RFC 6762, 11), by multicast alone: a legacy unicast query from them gets
#     no answer, though host-a's default routes lead to host-z.
# ROUNDS queries from each on-link address (20 by default); each must be answered, and the
# median time to the answer is printed. Each check is counted; the last line says how many passed
# and failed. Touches only the namespaces it makes; every wait is bounded.
#
# Usage: mdns-onlink.sh BIN_DIR [ROUNDS]   (needs root, iproute2 and python3)
set -euo pipefail
bin=${1:?usage: mdns-onlink.sh BIN_DIR [ROUNDS]}
rounds=${2:-20}
tag=hexdm$$
work=$(mktemp -d /tmp/hexd-mdns-onlink-XXXXXX)
pids=()
label=mdns-onlink
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

make_bridge
join_bridge a 10.68.0.1/24
join_bridge z 10.68.0.3/24
ip -n "$tag-a" -6 addr add fd77::1/64 dev "sa$$"
ip -n "$tag-z" -6 addr add fd77::3/64 dev "sz$$"
ip -n "$tag-z" -6 addr add fd99::3/128 dev "sz$$"
ip -n "$tag-z" addr add 192.168.77.3/32 dev "sz$$"
# host-a's default routes lead to host-z, so that a unicast answer to those addresses would reach it.
ip -n "$tag-a" route add default via 10.68.0.3
ip -n "$tag-a" -6 route add default via fd77::3
wait_for_link_local "$tag-a:sa$$" "$tag-z:sz$$"
link_local=$(ip -n "$tag-z" -6 addr show dev "sz$$" scope link | sed -n 's/.*inet6 \(fe80[^/]*\).*/\1/p')

ip netns exec "$tag-a" "$bin/hexd" --data-dir "$work/a" --name host-a --mdns on --log-level debug \
    2>"$work/a.log" &
pids+=($!)
ctl a wait --timeout 10 >/dev/null || fail "hexd did not start"
# Published once its probes (three, 250 ms apart) and first announcement are done.
for _ in $(seq 50); do grep -q "published by DNS-SD" "$work/a.log" && break; sleep 0.1; done
grep -q "published by DNS-SD" "$work/a.log" || fail "hexd did not publish"

ask() {  # SERVICE SOURCE [TRIES [SPACING_MS]] [OPTIONS]: "N of TRIES answered, median M ms"
    ip netns exec "$tag-z" python3 "$(dirname "$0")/mdns-query.py" "$2" "sz$$" "$1" "${@:3}"
}
for service in _hexd._tcp.local _kdeconnect._udp.local; do
    for source in "$link_local" fd77::3 10.68.0.3; do
        result=$(ask "$service" "$source" "$rounds")
        [[ "$result" == "$rounds of $rounds answered"* ]] || fail "$service from $source, on-link: $result"
        pass "$service from $source (on-link): $result"
    done
    for source in fd99::3 192.168.77.3; do
        # 1.1 s apart: a responder multicasts a record at most once a second (RFC 6762, 6).
        result=$(ask "$service" "$source" 3 1100 --standard --hops 64)
        [[ "$result" == "0 of 3 answered"* ]] || fail "$service from $source, hop limit 64, hexd answered: $result"
        pass "$service from $source (no prefix here, hop limit 64: routed): not answered"
        result=$(ask "$service" "$source" 3 1100 --standard --hops 255)
        [[ "$result" == "3 of 3 answered"* ]] || fail "$service from $source, hop limit 255: $result"
        pass "$service from $source (no prefix here, hop limit 255: on the link): $result"
        # Answered by multicast alone: a unicast answer would go wherever a spoofed source says.
        result=$(ask "$service" "$source" 3 --hops 255)
        [[ "$result" == "0 of 3 answered"* ]] || fail "$service from $source, legacy unicast, answered: $result"
        pass "$service from $source (no prefix here, legacy unicast): no unicast answer, though a route leads there"
    done
done
echo "$label: $passed passed, 0 failed"
