#!/usr/bin/env bash
# hexd as a KDE Connect device, against Debian's kdeconnectd (22.12, protocol 7) run headless on
# private session buses, in network namespaces on one bridge:
#   - host-a (hexd --kdeconnect on) starts after kdeconnectd in host-k: k hears a's broadcast and
#     dials it; each lists the other (hexctl peers and a peerFound event; kdeconnectd's D-Bus device
#     object, named);
#   - kdeconnectd in host-l starts after hexd: hexd hears l's broadcast and dials it; each lists
#     the other;
#   - k asks to pair: hexd shows the request with the code k shows; declined (hexctl pair --decline),
#     k gets the refusal; asked again and accepted (hexctl pair --accept), both sides are paired;
#   - k shares a URL and a text (kdeconnect-cli --share, --share-text): each lands in hexd's inbox
#     as a hex from kdeconnect:<k's ID>; k pings with a message (kdeconnect-cli --ping-msg): an
#     Alert from k; a hex sent to k (hexctl send --to kde-k) is opened on k
#     (its stub opener records the URL), and one sent while k is stopped is opened once it is back;
#     a file each way lands whole;
#   - hexd asks l to pair (hexctl pair kde-l) with the code l shows, and l accepts (KDE's D-Bus
#     acceptPairing): both sides are paired; l unpairs (kdeconnect-cli --unpair), hexd forgets it;
#     hexd unpairs k (hexctl unpair), k forgets hexd;
#   - a second hexd on kdeconnectd's host takes the next TCP port, and kdeconnectd keeps working;
#   - seconds later both links still stand (22.12 loses a device whose link is closed under it);
#   - a protocol 8 device written for the test (kdeconnect_peer.py, in host-p) is dialed with its
#     target named and identities exchanged inside TLS; its share before pairing is stored nowhere;
#     a request dated an hour away is refused; a request dated now shows the code it computes, and
#     once accepted its share lands, and a hex of two links reaches it as a text and two URLs
#     (--kdeconnect-each-link on); announcing protocol 7 afterwards is refused as a downgrade;
#   - hidden (hexctl visibility hidden), hexd links with the paired peer alone (checked before the
#     downgrade).
# Broadcasts stay inside the namespaces. Each check is counted; the last line says how many
# passed. Every wait is bounded.
#
# Usage: kdeconnect.sh BIN_DIR   (needs root, iproute2, kdeconnect 22.12, dbus-daemon, gdbus, openssl,
#                                 python3)
set -euo pipefail
bin=${1:?usage: kdeconnect.sh BIN_DIR}
tag=hexdkc$$
work=$(mktemp -d /tmp/hexd-kdeconnect-XXXXXX)
pids=()
label=kdeconnect
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=Tests/netns/kde-lib.sh
source "$(dirname "$0")/kde-lib.sh"
command -v python3 >/dev/null || fail "python3 is not installed"


make_bridge
join_bridge a 10.71.0.1/24
join_bridge k 10.71.0.2/24
join_bridge l 10.71.0.3/24
join_bridge p 10.71.0.4/24
# kdeconnectd broadcasts to 255.255.255.255 from an unbound socket: it needs a route for it.
for host in a k l p; do ip -n "$tag-$host" route add default dev "s$host$$"; done

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

start_hexd a --kdeconnect on --kdeconnect-each-link on --localsend off
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

# The code kdeconnectd in HOST shows for hexd: the first 8 digits of its verification key, which
# its D-Bus method returns as bytes ([byte 0x61, …]).
kde_code() {
    kde "$1" timeout 10 gdbus call --session --dest org.kde.kdeconnect \
        --object-path "/modules/kdeconnect/devices/$hexd_id" --method org.kde.kdeconnect.device.verificationKey 2>&1 \
        | python3 -c 'import re, sys; text = sys.stdin.read(); digits = re.findall(r"0x([0-9a-f]{2})", text)
print(("".join(chr(int(d, 16)) for d in digits) if digits else text.split("\x27")[1])[:8].upper())'
}
peer_json() { ctl a peers --json | objects "o.get('name') == '$1'" 'json.dumps(o, separators=(",", ":"))'; }

# k asks to pair: hexd shows the request with the code k shows, and declines it.
kde k timeout 10 kdeconnect-cli --pair -d "$hexd_id" >/dev/null 2>&1 || true
asked=$(ctl a watch --since 0 --until pairRequested --timeout 10 --json) || fail "no pairRequested event: $asked"
code=$(echo "$asked" | tail -1 | json 'data["message"]')
k_code=$(kde_code k)
row=$(peer_json kde-k)
[ "$code" = "$k_code" ] && [[ "$row" == *'"awaitingUs":true'* && "$row" == *"\"code\":\"$code\""* ]] \
    || fail "hexd's code '$code' (peers: $row) is not kde-k's '$k_code'"
ctl a pair --decline kde-k >/dev/null || fail "hexctl pair --decline kde-k failed"
wait_until 'grep -q "Device pairing error \"Canceled by other peer\"" "$work/k-kdeconnectd.log"' \
    || fail "kde-k did not get hexd's refusal"
trusted=$(kde_device k "$hexd_id" isTrusted)
[[ "$trusted" == *"false"* ]] || fail "kde-k trusts hexd after a declined request: $trusted"
pass "kde-k asked to pair: hexd showed the code kde-k shows ($code); declined, kde-k got the refusal"

# Asked again, accepted: both sides are paired.
sleep 1.2
kde k timeout 10 kdeconnect-cli --pair -d "$hexd_id" >/dev/null 2>&1 || true
wait_until '[[ "$(peer_json kde-k)" == *"awaitingUs\":true"* ]]' || fail "kde-k's second request is not shown"
accepted=$(ctl a pair --accept kde-k --json) || fail "hexctl pair --accept kde-k failed: $accepted"
wait_until '[[ "$(kde_device k "$hexd_id" isTrusted)" == *true* ]]' || fail "kde-k does not trust hexd"
[[ "$accepted" == *'"trust":"paired"'* && "$(peer_json kde-k)" == *'"trust":"paired"'* ]] \
    || fail "hexd does not say kde-k is paired: $accepted / $(peer_json kde-k)"
status=$(ctl a status)
[[ "$status" == *"KDE Connect: TCP 1716, device ID $hexd_id, 2 devices linked, 1 paired"* ]] \
    || fail "hexctl status: $status"
pass "kde-k asked again and hexctl pair --accept paired them: both sides trust the other; hexctl status counts \
2 devices linked, 1 paired"

# k shares a URL and a text: each lands in hexd's inbox as a hex from k.
newest_hex() { ctl a inbox show --full --json "$(ctl a inbox --json --limit 1 | json 'data["id"]')"; }
kde k timeout 10 kdeconnect-cli --share https://example.com/shared -d "$hexd_id" >/dev/null 2>&1 || true
wait_until '[[ "$(newest_hex)" == *example.com/shared* ]]' \
    || fail "kde-k's URL is not in the inbox: $(ctl a inbox --json) $(grep -i kdeconnect "$work/a.log" | tail -5)"
shown=$(newest_hex)
[ "$(echo "$shown" | json 'data["senderUUID"]')" = "kdeconnect:$k_id" ] \
    && [ "$(echo "$shown" | json 'data["links"][0]["url"]')" = "https://example.com/shared" ] \
    || fail "the URL's hex: $shown"
kde k timeout 10 kdeconnect-cli --share-text 'read https://example.org/note later' -d "$hexd_id" >/dev/null 2>&1 || true
wait_until '[[ "$(ctl a inbox --json --limit 1)" == *"read https"* ]]' || fail "kde-k's text is not in the inbox"
shown=$(newest_hex)
[ "$(echo "$shown" | json 'data["hexDescription"]')" = "read https://example.org/note later" ] \
    && [ "$(echo "$shown" | json 'data["links"][0]["url"]')" = "https://example.org/note" ] \
    || fail "the text's hex: $shown"
pass "kde-k's shared URL and text landed in hexd's inbox as hexes from kdeconnect:${k_id:0:8}…"

# k sends a ping with a message ("Send ping" in the apps): an Alert from k, listed by its ID.
kde k timeout 10 kdeconnect-cli --ping-msg 'the pizza is here' -d "$hexd_id" >/dev/null 2>&1 || true
wait_until '[[ "$(ctl a alerts --limit 1 2>/dev/null)" == *"the pizza is here"* ]]' \
    || fail "kde-k's ping is not among hexd's alerts: $(ctl a alerts 2>&1)"
[ "$(ctl a alerts --json --limit 1 | json 'data["senderID"]')" = "kdeconnect:$k_id" ] \
    || fail "the ping's alert: $(ctl a alerts --json --limit 1)"
pass "kde-k's ping with a message became an Alert from kdeconnect:${k_id:0:8}…: $(ctl a alerts --limit 1)"

# A hex to k: opened there.
sent=$(ctl a send --to kde-k https://example.net/from-hexd 2>&1) || fail "hexctl send --to kde-k: $sent"
wait_until '[ -s "$work/k-opened" ]' || fail "kde-k opened nothing: $sent"
[ "$(cut -d' ' -f2- "$work/k-opened")" = "https://example.net/from-hexd" ] || fail "kde-k opened $(cat "$work/k-opened")"
pass "hexctl send --to kde-k: kde-k opened the link ($sent)"

# k stops: a hex to it waits in the outbox, and is opened once k is back.
stop_kdeconnectd k
wait_until '[[ -z "$(peer_json kde-k)" ]]' || fail "hexd still lists kde-k after it stopped"
queued=0
away=$(ctl a send --to kde-k https://example.net/while-away --timeout 1 2>&1) || queued=$?
[ "$queued" -eq 75 ] || fail "a send to kde-k while it is away did not stay queued (exit $queued): $away"
run_kdeconnectd k
wait_until '[ "$(grep -c while-away "$work/k-opened")" -eq 1 ]' \
    || fail "kde-k did not open the queued hex once back: $(ctl a outbox 2>&1)"
[ -z "$(ctl a outbox --json)" ] || fail "the outbox still holds: $(ctl a outbox)"
pass "a hex sent while kde-k was away waited in the outbox and was opened once kde-k was back"

# A file each way: k shares 3 MiB with hexd (its downloads folder, a hex linking it); hexd shares
# 2 MiB with k (k's Downloads).
head -c $((3 << 20)) /dev/urandom >"$work/from k.bin"
kde k timeout 30 kdeconnect-cli --share "$work/from k.bin" -d "$hexd_id" >/dev/null 2>&1 || true
landed="$work/a/downloads/from k.bin"
wait_until '[ -f "$landed" ] && [[ "$(newest_hex)" == *"from%20k.bin"* ]]' \
    || fail "k's file did not land: $(ls -la "$work/a/downloads" 2>&1) $(grep -i 'kdeconnect' "$work/a.log" | tail -3)"
[ "$(sha256sum <"$landed")" = "$(sha256sum <"$work/from k.bin")" ] || fail "k's file landed changed"
head -c $((2 << 20)) /dev/urandom >"$work/to-k.bin"
shared=$(ctl a share --to kde-k "$work/to-k.bin" 2>&1) || fail "hexctl share --to kde-k: $shared"
wait_until '[ -f "$work/k-kde/Downloads/to-k.bin" ]' || fail "k got no file: $shared"
wait_until '[ "$(sha256sum <"$work/k-kde/Downloads/to-k.bin")" = "$(sha256sum <"$work/to-k.bin")" ]' \
    || fail "k's copy differs: $(ls -la "$work/k-kde/Downloads")"
pass "a file each way: kde-k's 3 MiB landed in hexd's downloads (a hex links it), hexd's 2 MiB in kde-k's \
Downloads, SHA-256 equal"

# hexd asks l: the code is l's, and l accepts.
asked=$(ctl a pair kde-l --json) || fail "hexctl pair kde-l failed: $asked"
code=$(echo "$asked" | json 'data["code"]')
wait_until '[[ "$(kde_device l "$hexd_id" hasPairingRequests)" == *true* ]]' || fail "kde-l got no request"
[ "$code" = "$(kde_code l)" ] || fail "hexd's code $code is not kde-l's $(kde_code l)"
kde l timeout 10 gdbus call --session --dest org.kde.kdeconnect --object-path "/modules/kdeconnect/devices/$hexd_id" \
    --method org.kde.kdeconnect.device.acceptPairing >/dev/null || fail "kde-l could not accept"
wait_until '[[ "$(peer_json kde-l)" == *"\"trust\":\"paired\""* ]]' || fail "hexd is not paired with kde-l"
[[ "$(kde_device l "$hexd_id" isTrusted)" == *true* ]] || fail "kde-l does not trust hexd"
pass "hexctl pair kde-l showed kde-l's code ($code); kde-l accepted, both sides are paired"

# l unpairs: hexd forgets it. hexd unpairs k: k forgets hexd.
kde l timeout 10 kdeconnect-cli --unpair -d "$hexd_id" >/dev/null 2>&1 || true
wait_until '[[ "$(peer_json kde-l)" != *"\"trust\":\"paired\""* ]]' || fail "hexd still holds kde-l paired"
ctl a unpair kde-k >/dev/null || fail "hexctl unpair kde-k failed"
wait_until '[[ "$(kde_device k "$hexd_id" isTrusted)" == *false* ]]' || fail "kde-k still trusts hexd"
[[ "$(peer_json kde-k)" != *"\"trust\":\"paired\""* ]] || fail "hexd still holds kde-k paired"
pass "kde-l unpaired and hexd forgot it; hexctl unpair kde-k and kde-k forgot hexd"

# A hexd on the same host as kdeconnectd (host-l) leaves it working: it takes the next TCP port and
# says so, and kdeconnectd keeps its link with host-a.
ip netns exec "$tag-l" "$bin/hexd" --data-dir "$work/l2" --name host-l2 --mdns off --web off --notify off \
    --localsend off --kdeconnect on --log-level info 2>"$work/l2.log" &
l2_pid=$!
pids+=("$l2_pid")
wait_until 'HEXD_DATA_DIR="$work/l2" ip netns exec "$tag-l" "$bin/hexctl" wait --timeout 1 >/dev/null 2>&1' \
    || fail "the hexd beside kdeconnectd did not start"
status=$(HEXD_DATA_DIR="$work/l2" ip netns exec "$tag-l" "$bin/hexctl" status)
[[ "$status" == *"KDE Connect: TCP 1717"* && "$status" == *"TCP 1716 is taken (kdeconnectd on this host?)"* ]] \
    || fail "the hexd beside kdeconnectd: $status"
wait_until '[[ -n "$(peer_json host-l2)" ]]' || fail "host-a does not list the hexd beside kdeconnectd"
kde_sees l "$hexd_id" || fail "kdeconnectd in host-l lost host-a with a hexd beside it"
pass "a hexd beside kdeconnectd took TCP 1717 and said so in its status; kdeconnectd kept its link with host-a"
kill "$l2_pid"
wait "$l2_pid" 2>/dev/null || true

# Seconds later both links stand: no device lost on either side, and no link crossed.
sleep 3
kde_sees k "$hexd_id" && kde_sees l "$hexd_id" || fail "a kdeconnectd lost hexd's device object"
peers=$(ctl a peers)
[[ "$peers" == *kde-k* && "$peers" == *kde-l* ]] || fail "hexd lost a device: $peers"
# kde-k was found twice (at first, and back after it stopped) and lost once (when it stopped).
arrivals=$(grep -c "KDE Connect device kde-k (.*), desktop" "$work/a.log" || true)
lost=$(grep -c "KDE Connect device kde-. is gone" "$work/a.log" || true)
[ "$arrivals" -eq 2 ] && [ "$lost" -eq 1 ] \
    || fail "hexd lost or found a device more ($arrivals arrivals of kde-k, $lost lost): $(grep 'KDE Connect device' "$work/a.log")"
[ -n "$k_id" ] && [ -n "$l_id" ] || fail "no device IDs"
pass "3 s later hexd and both kdeconnectd still list each other; hexd found kde-k only when it started, and lost \
it only when it stopped"

# A protocol 8 device written for the test, from KDE's description.
mkfifo "$work/p8.in"
ip netns exec "$tag-p" python3 "$(dirname "$0")/kdeconnect_peer.py" "$work" peer-8 1716 <"$work/p8.in" \
    >"$work/p8.log" 2>&1 &
pids+=($!)
exec 7>"$work/p8.in"
p8() { echo "$*" >&7; }
p8_said() { grep -q -- "$1" "$work/p8.log"; }
wait_until 'p8_said "^ready "' || fail "the protocol 8 peer did not start"
p8_id=$(awk '/^ready / { print $2 }' "$work/p8.log")
p8 announce
wait_until 'p8_said "^linked 8"' || fail "hexd did not link with the protocol 8 peer"
# (kdeconnectd in k and l dial it too, naming no target: the peer turns them away.)
p8_said "^target $p8_id 8\$" || fail "hexd's plain identity did not name the peer's ID and version 8"
inside=$(grep '^identity ' "$work/p8.log")
[[ "$inside" == *"\"deviceId\": \"$hexd_id\""* && "$inside" == *'"protocolVersion": 8'* ]] \
    || fail "hexd's identity inside TLS: $inside"
wait_until '[[ "$(peer_json peer-8)" == *"\"versionID\":\"8\""* ]]' || fail "hexd does not list peer-8 at 8: $(ctl a peers)"
pass "a protocol 8 peer written for the test: hexd dialed it naming its ID and version 8, identities went inside \
TLS, and hexctl peers lists it at 8"

unpaired=$(ctl a inbox --json | wc -l)
p8 send '{"type":"kdeconnect.share.request","body":{"url":"https://unpaired.example/x"}}'
wait_until 'p8_said "\"pair\": false"' || fail "hexd did not answer the unpaired share with pair: false"
sleep 0.5
[ "$(ctl a inbox --json | wc -l)" -eq "$unpaired" ] && ! ctl a inbox --json | grep -q unpaired.example \
    || fail "a share from a device not paired was stored"
sleep 1.1
p8 pair -3600
wait_until '[ "$(grep -c "\"pair\": false" "$work/p8.log")" -ge 2 ]' || fail "a request dated an hour away was not refused"
[[ "$(peer_json peer-8)" != *awaitingUs* ]] || fail "a request dated an hour away is shown"
pass "peer-8's share before pairing was answered pair: false and stored nowhere; its request dated an hour away \
was refused"

sleep 1.1
p8 pair
wait_until '[[ "$(peer_json peer-8)" == *"awaitingUs\":true"* ]]' || fail "peer-8's request is not shown"
code=$(grep '^code ' "$work/p8.log" | tail -1 | cut -d' ' -f2)
[[ "$(peer_json peer-8)" == *"\"code\":\"$code\""* ]] || fail "hexd's code is not peer-8's $code: $(peer_json peer-8)"
ctl a pair --accept peer-8 >/dev/null || fail "hexctl pair --accept peer-8 failed"
wait_until 'p8_said "\"pair\": true"' || fail "peer-8 got no acceptance"
p8 send '{"type":"kdeconnect.share.request","body":{"url":"https://paired.example/y"}}'
wait_until '[[ "$(newest_hex)" == *paired.example/y* ]]' || fail "peer-8's share after pairing did not land"
[[ "$(newest_hex)" == *"\"senderUUID\":\"kdeconnect:$p8_id\""* ]] || fail "peer-8's hex: $(newest_hex)"
pass "peer-8's dated request showed the code it computes itself ($code); accepted, its share landed in the inbox"

# --kdeconnect-each-link on: a hex goes as its description, then one URL per link.
ctl a send --to peer-8 -d "two links" https://one.example/a https://two.example/b >/dev/null \
    || fail "hexctl send --to peer-8 failed"
wait_until 'p8_said "two.example"' || fail "peer-8 got no second link"
shares=$(grep '^packet .*"kdeconnect.share.request"' "$work/p8.log" | python3 -c '
import json, sys
for line in sys.stdin:
    body = json.loads(line.split(" ", 1)[1])["body"]
    print(body.get("text") or body.get("url"))')
[ "$shares" = $'two links\nhttps://one.example/a\nhttps://two.example/b' ] || fail "peer-8 got: $shares"
pass "with --kdeconnect-each-link on, a hex of two links reached peer-8 as its text and then each link as a URL"

# Hidden, hexd links with paired devices alone: peer-8 (paired) is dialed, peer-x (not) is not.
p8 close
wait_until '[[ -z "$(peer_json peer-8)" ]]' || fail "hexd still lists peer-8 after its link closed"
ctl a visibility hidden >/dev/null || fail "hexctl visibility hidden failed"
mkfifo "$work/px.in"
ip netns exec "$tag-p" python3 "$(dirname "$0")/kdeconnect_peer.py" "$work" peer-x 1717 <"$work/px.in" \
    >"$work/px.log" 2>&1 &
pids+=($!)
exec 8>"$work/px.in"
wait_until 'grep -q "^ready " "$work/px.log"' || fail "peer-x did not start"
p8 announce
echo announce >&8
wait_until '[ "$(grep -c "^linked 8" "$work/p8.log")" -ge 2 ]' || fail "hidden, hexd did not link with paired peer-8"
wait_until 'grep -q "hexd is hidden" "$work/a.log"' || fail "hidden, hexd did not say why it left peer-x"
! grep -q "^linked" "$work/px.log" || fail "hidden, hexd linked with peer-x, which is not paired"
[[ -n "$(peer_json peer-8)" && -z "$(peer_json peer-x)" ]] || fail "hidden: $(ctl a peers)"
pass "hidden, hexd linked with paired peer-8 and left peer-x, which is not paired"
ctl a visibility visible >/dev/null || fail "hexctl visibility visible failed"

p8 close
wait_until '[[ -z "$(peer_json peer-8)" ]]' || fail "hexd still lists peer-8 after its link closed"
p8 version 7
sleep 1.1
p8 announce
wait_until 'grep -q "a downgrade is refused" "$work/a.log"' || fail "hexd took peer-8 at protocol 7"
sleep 0.5
[[ -z "$(peer_json peer-8)" ]] || fail "hexd lists peer-8 after a downgrade: $(peer_json peer-8)"
pass "peer-8, paired at 8, announcing 7 was refused as a downgrade"

p8 quit
echo quit >&8

echo "$label: $passed passed, 0 failed"
