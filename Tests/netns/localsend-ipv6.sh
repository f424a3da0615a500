#!/usr/bin/env bash
# hexd as a LocalSend device on LocalSend's IPv6 multicast group (ff12::fd3a:e420, port 53317), against a
# scripted device (Tests/netns/localsend_device6.py serve, alias V6Device, its own self-signed RSA-2048
# certificate, HTTPS on [::]:53317, answering prepare-upload 204 as LocalSend 1.18 does) in two network
# namespaces joined by a veth pair with IPv6 link-local addresses alone (no IPv4 address at all):
#   - host-a (hexd) joins ff12::fd3a:e420 on its link, and a listener on host b joined to the group there
#     hears host-a's announcement within 5 s of its start, from host-a's link-local address: alias
#     host-a, the fingerprint host-a's status shows (hexctl status --json), its LocalSend port, https;
#   - the device announces itself once on the group: host-a registers with it at the link-local address
#     the announcement came from (showing its persona as the client certificate) and lists it (hexctl
#     peers --json) as a LocalSend device, by its certificate's fingerprint, at [fe80::…%IF]:53317;
#   - hexctl send --to V6Device https://example.com/v6: delivered (exit 0, "received by V6Device"), the
#     device got the text once, from host-a's link-local address;
#   - a message (a prepare-upload whose text is its preview, the device's certificate shown) from host b
#     to host-a's API at its link-local address, [fe80::…%IF]:53317: 204, and it is host-a's newest hex
#     (hexctl inbox --json --limit 1), from V6Device's ID, its text the description.
# Each check is counted; the last line says how many passed. Touches only the namespaces it makes;
# every wait is bounded.
#
# Usage: localsend-ipv6.sh BIN_DIR   (needs root, iproute2, openssl and python3)
set -euo pipefail
bin=${1:?usage: localsend-ipv6.sh BIN_DIR}
tag=hexdl6$$
work=$(mktemp -d /tmp/hexd-localsend-ipv6-XXXXXX)
pids=()
label=localsend-ipv6
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"
device6="$(dirname "$0")/localsend_device6.py"
group=ff12::fd3a:e420

make_hosts a b
ip link add "va$$" netns "$tag-a" type veth peer name "vb$$" netns "$tag-b"
ip -n "$tag-a" link set "va$$" up
ip -n "$tag-b" link set "vb$$" up
wait_for_link_local "$tag-a:va$$" "$tag-b:vb$$"
# The link-local address of host $1's end of the link ($2), without its prefix length.
link_local() { ip -n "$tag-$1" -6 -o addr show dev "$2" scope link | awk '{ sub("/.*", "", $4); print $4 }'; }
ll_a=$(link_local a "va$$")
ll_b=$(link_local b "vb$$")
[[ "$ll_a" == fe80::* && "$ll_b" == fe80::* ]] || fail "no link-local addresses: a '$ll_a', b '$ll_b'"
for end in "a va$$" "b vb$$"; do
    read -r host dev <<<"$end"
    [ -z "$(ip -n "$tag-$host" -4 -o addr show dev "$dev")" ] || fail "$dev has an IPv4 address"
    # Multicast leaves by the route to the group: the kernel's ff00::/8 in the local table, once the link is up.
    for _ in $(seq 50); do
        [[ "$(ip -n "$tag-$host" -6 route show table local dev "$dev")" == *"multicast ff00::/8"* ]] && break
        sleep 0.05
    done
    [[ "$(ip -n "$tag-$host" -6 route show table local dev "$dev")" == *"multicast ff00::/8"* ]] \
        || ip -n "$tag-$host" -6 route add multicast ff00::/8 dev "$dev" table local
done
# Whether host $1 is a member of the group on its end of the link, $2.
joined() { [[ "$(ip -n "$tag-$1" -6 maddr show dev "$2")" == *"inet6 $group"* ]]; }

# A listener on host b, joined to the group before host-a starts, until it hears host-a (at most 5 s).
ip netns exec "$tag-b" python3 "$device6" listen --interface "vb$$" --seconds 5 --alias host-a \
    >"$work/heard.log" 2>"$work/listener.log" &
listener=$!
pids+=("$listener")
for _ in $(seq 100); do joined b "vb$$" && break; sleep 0.05; done
joined b "vb$$" || fail "the listener on host b did not join $group on vb$$"

started=$(milliseconds)
start_hexd a

fingerprint_a=$(ctl a status --json | carrier localsend 'c["identity"]')
port_a=$(ctl a status --json | carrier localsend 'c["port"]')
[ "$port_a" = 53317 ] || fail "host-a serves LocalSend on $port_a, not 53317"

wait "$listener" || fail "the listener on host b failed: $(cat "$work/listener.log")"
heard_after=$(($(milliseconds) - started))
heard=$(python3 -c '
import json, sys
for record in map(json.loads, open(sys.argv[1])):
    body = record["body"]
    if isinstance(body, dict) and body.get("alias") == "host-a":
        print(record["from"], *(body.get(key) for key in ("fingerprint", "port", "protocol", "announce")))
        break' "$work/heard.log")
[ "$heard" = "$ll_a%vb$$ $fingerprint_a 53317 https True" ] \
    && pass "host b heard host-a's announcement on $group within $heard_after ms of its start, from $ll_a," \
        "its fingerprint ${fingerprint_a:0:16}… and port 53317" \
    || fail "host b heard from host-a: '$heard' (host-a is $ll_a, $fingerprint_a); all it heard:" \
        "$(cat "$work/heard.log")"

# host-a hears the group on its link (before the device announces once).
for _ in $(seq 100); do joined a "va$$" && break; sleep 0.05; done
joined a "va$$" && pass "host-a joined $group on va$$" \
    || fail "host-a is not a member of $group on va$$: $(ip -n "$tag-a" -6 maddr show dev "va$$")"

# The device on host b announces itself once; host-a registers with it at the address it came from.
requests="$work/requests.log"
ip netns exec "$tag-b" python3 "$device6" serve --log "$requests" --keys "$work/device-keys" --interface "vb$$" \
    --trust "$work/a/localsend.crt" V6Device:53317:accept 2>"$work/device.log" &
pids+=($!)
fingerprint_device=""
for _ in $(seq 100); do
    fingerprint_device=$(python3 -c '
import json, sys
for record in map(json.loads, open(sys.argv[1])):
    if record.get("event") == "start":
        print(record["fingerprint"])' "$requests" 2>/dev/null || true)
    [ -n "$fingerprint_device" ] && break
    sleep 0.1
done
[ -n "$fingerprint_device" ] || fail "the device did not start"
listed() {  # host-a's LocalSend devices, one "NAME FINGERPRINT ENDPOINT" a line
    ctl a peers --json 2>/dev/null | python3 -c '
import json, sys
for p in map(json.loads, filter(None, sys.stdin.read().splitlines())):
    if p.get("kind") == "localsend":
        print(p.get("name"), p.get("fingerprint"), p.get("endpoint"))' || true
}
devices=""
for _ in $(seq 150); do
    devices=$(listed)
    [ -n "$devices" ] && break
    sleep 0.1
done
# What the device was asked: PATH [TEXT] prints "COUNT SOURCES CLIENTS", how many requests to PATH
# (register, prepare-upload) it got (of text TEXT when given), the addresses and client certificates.
asked() {
    python3 -c '
import json, sys
path = "/api/localsend/v2/" + sys.argv[2]
records = [r for r in map(json.loads, open(sys.argv[1]))
           if r.get("path") == path and (len(sys.argv) < 4 or r["text"] == sys.argv[3])]
print(len(records), ",".join(sorted({r["from"] for r in records})) or "-",
      ",".join(sorted({str(r["client"]) for r in records})) or "-")' "$requests" "$@"
}
registered=$(asked register)
[ "$devices" = "V6Device $fingerprint_device [$ll_b%va$$]:53317" ] \
    && [ "${registered#* }" = "$ll_a%vb$$ $fingerprint_a" ] \
    && pass "host-a registered with V6Device from $ll_a (its persona shown) and lists it as a LocalSend device:" \
        "${fingerprint_device:0:16}…, [$ll_b%va$$]:53317" \
    || fail "host-a's LocalSend devices: '$devices' (V6Device is $fingerprint_device at $ll_b);" \
        "registers at the device (count, from, client): $registered"

# hexctl send to the device by its alias: delivered, the text arrived once.
code=0
sent=$(ctl a send --to V6Device https://example.com/v6 2>&1) || code=$?
got=$(asked prepare-upload https://example.com/v6)
[ "$code" = 0 ] && [[ "$sent" == "received by V6Device"* ]] && [ "$got" = "1 $ll_a%vb$$ $fingerprint_a" ] \
    && [ "$(asked prepare-upload)" = "$got" ] \
    && pass "hexctl send --to V6Device: exit 0 ($sent), the device got the text once, from $ll_a" \
    || fail "a send to V6Device: exit $code, $sent; the device's prepare-upload (count, from, client): $got," \
        "of any text: $(asked prepare-upload)"

# A message from host b to host-a's API at its link-local address, showing the device's certificate.
text="from V6Device over IPv6: https://example.net/v6-in"
answer=$(ip netns exec "$tag-b" python3 "$device6" message --to "$ll_a%vb$$" --port 53317 --alias V6Device \
    --fingerprint "$fingerprint_device" --cert "$work/device-keys/53317.crt" --key "$work/device-keys/53317.key" \
    "$text" 2>&1 || true)
newest=$(ctl a inbox --json --limit 1 2>&1 || true)
id=$(echo "$newest" | json 'data["id"]' 2>/dev/null || true)
shown=$(ctl a inbox show --full --json "$id" 2>/dev/null || true)
hex=$(echo "$shown" | json '"|".join((data.get("senderName") or "", data.get("senderUUID") or "",
    data.get("hexDescription") or "", " ".join(link["url"] for link in data.get("links") or [])))' 2>/dev/null || true)
[ "$answer" = "HTTP/1.1 204 No Content" ] \
    && [ "$hex" = "V6Device|localsend:$fingerprint_device|$text|https://example.net/v6-in" ] \
    && pass "a message to host-a at [$ll_a%vb$$]:53317 was answered 204 and is its newest hex, from" \
        "localsend:${fingerprint_device:0:8}…" \
    || fail "a message to [$ll_a%vb$$]:53317: answered '$answer'; host-a's newest hex: $newest; shown: $hex"

echo "$label: $passed passed, 0 failed"
