#!/usr/bin/env bash
# How hexd's sends to LocalSend devices take each answer a receiver can give (Protocol.md, 16.4),
# against scripted devices (Tests/netns/localsend_device.py, one process on host b, a certificate
# and a TCP port each) that announce themselves once and answer prepare-upload as told, in network
# namespaces on one bridge:
#   - host-a (hexd) lists each device, proven by its certificate, as a LocalSend device;
#   - 204 (Accepts): delivered (exit 0), "received by Accepts", the text arrived once, over TLS
#     with host-a's persona shown as the client certificate;
#   - 403 (Declines) to a message: failed as dismissed and seen (exit 77: the app shows a message
#     before its person answers), not queued, asked once;
#   - 401 (Pin): failed for want of a PIN (exit 77), not queued, asked once;
#   - 409 then 204 (Busy): the send waits in the outbox (exit 75) and is delivered by the retry, the
#     device asked exactly twice;
#   - held 6 s (Slow): hexctl --timeout 2 returns 75 ("has not answered yet"), hexd does not ask
#     again while the first request is held, and delivers once it is answered;
#   - 200 with a session and a token (Files): the text is uploaded, once, and the send delivered;
#   - a name a LocalSend device (host-c) and a hexd peer (host-c, on host b without LocalSend) both
#     go by is refused naming both, and the device's localsend: ID prefix picks it;
#   - host-a's PIN (--localsend-pin): none or a wrong one is 401, three wrong lock the address out
#     (429), another address with the right one gets in.
# Each check is counted; the last line says how many passed. Touches only the namespaces it makes
# (10.69.0.0/24); every wait is bounded.
#
# Usage: localsend-answers.sh BIN_DIR   (needs root, iproute2, openssl and python3)
set -euo pipefail
bin=${1:?usage: localsend-answers.sh BIN_DIR}
tag=hexdla$$
work=$(mktemp -d /tmp/hexd-localsend-answers-XXXXXX)
pids=()
label=localsend-answers
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

make_bridge
join_bridge a 10.69.0.1/24
join_bridge b 10.69.0.2/24
# Multicast leaves by the route to the group: the bridge, in each namespace.
for host in a b; do ip -n "$tag-$host" route add 224.0.0.0/4 dev "s$host$$"; done

# host-a, the sender; host-c, a hexd daemon on host b that is no LocalSend device, whose name one
# of the devices shares.
start_hexd a --localsend-pin 4711
ip netns exec "$tag-b" "$bin/hexd" --data-dir "$work/c" --name host-c --announce-interval 1 --localsend off \
    --mdns off --web off --notify off --log-level debug 2>"$work/c.log" &
pids+=($!)
for _ in $(seq 200); do [ -S "$work/c/hexd.sock" ] && break; sleep 0.05; done

# The devices, on host b: alias, TCP port and how each answers prepare-upload.
devices=(Accepts:53317:accept Declines:53318:decline Pin:53319:pin Busy:53320:busy-once Slow:53321:slow:6
    Files:53322:file host-c:53323:accept)
requests="$work/devices.log"
ip netns exec "$tag-b" python3 "$(dirname "$0")/localsend_device.py" --log "$requests" --keys "$work/device-keys" \
    --address 10.69.0.2 --trust "$work/a/localsend.crt" "${devices[@]}" 2>"$work/device.log" &
pids+=($!)

# Each device and host-c listed by host-a (at most 15 s).
listed() {  # the peers host-a lists, one "KIND NAME UUID ENDPOINT" a line
    ctl a peers --json 2>/dev/null | python3 -c '
import json, sys
for p in map(json.loads, filter(None, sys.stdin.read().splitlines())):
    print(p.get("kind"), p.get("name"), p.get("uuid"), p.get("endpoint"))' || true
}
peers=""
for _ in $(seq 150); do
    peers=$(listed)
    [ "$(grep -c '^localsend ' <<<"$peers")" = "${#devices[@]}" ] && grep -q '^hexd host-c ' <<<"$peers" && break
    sleep 0.1
done
fingerprint() {  # the fingerprint device $1 made (its log's start line)
    python3 -c '
import json, sys
for record in map(json.loads, open(sys.argv[1])):
    if record.get("event") == "start" and record["device"] == sys.argv[2]:
        print(record["fingerprint"])' "$requests" "$1"
}
missing=""
for spec in "${devices[@]}"; do
    alias=${spec%%:*}
    port=${spec#*:}
    port=${port%%:*}
    grep -qx "localsend $alias localsend:$(fingerprint "$alias") 10.69.0.2:$port" <<<"$peers" || missing+=" $alias"
done
[ -z "$missing" ] && grep -q '^hexd host-c ' <<<"$peers" \
    && pass "host-a lists the ${#devices[@]} devices, each by its certificate's fingerprint and port, and host-c" \
    || fail "host-a does not list$missing (or host-c): $peers"

# What device $1 was asked: count PATH [TEXT] says how many requests to PATH (prepare-upload, upload)
# it got, of text TEXT when given.
count() {
    python3 -c '
import json, sys
path = "/api/localsend/v2/" + sys.argv[3]
print(sum(1 for r in map(json.loads, open(sys.argv[1]))
          if r["device"] == sys.argv[2] and r.get("path") == path and (len(sys.argv) < 5 or r["text"] == sys.argv[4])))
' "$requests" "$@"
}
outbox_empty() { [[ "$(ctl a outbox 2>&1)" == *empty* ]]; }
# Runs hexctl send on host-a with the arguments given: $sent is what it printed, $code its exit code.
send() { code=0; sent=$(ctl a send "$@" 2>&1) || code=$?; }

# 204: delivered at once.
send --to Accepts https://example.com/a
persona=$(ctl a status --json | carrier localsend 'c["identity"]')
clients=$(python3 -c '
import json, sys
print(" ".join(sorted({str(r["client"]) for r in map(json.loads, open(sys.argv[1]))
                       if "path" in r})))' "$requests")
[ "$code" = 0 ] && [[ "$sent" == "received by Accepts"* ]] \
    && [ "$(count Accepts prepare-upload https://example.com/a)" = 1 ] \
    && [ "$(count Accepts prepare-upload)" = 1 ] && outbox_empty \
    && pass "204: delivered (exit 0, $sent), the device got the text once" \
    || fail "a send to Accepts: exit $code, $sent; $(count Accepts prepare-upload) prepare-upload"
[ "$clients" = "$persona" ] \
    && pass "host-a showed its persona (${persona:0:16}…) as the client certificate on every request so far" \
    || fail "host-a's client certificates: '$clients' (its persona is $persona)"

# 403 and 401: failed, not queued, asked once (a second, well after the send, would be a retry).
send --to Declines https://example.com/d
declined_code=$code declined=$sent
send --to Pin https://example.com/p
sleep 1.5  # a retry (after 0.5-1 s) would come meanwhile
[ "$declined_code" = 77 ] && [[ "$declined" == *"dismissed the message"* ]] && outbox_empty \
    && [ "$(count Declines prepare-upload https://example.com/d)" = 1 ] \
    && [ "$(count Declines prepare-upload)" = 1 ] \
    && pass "403: failed as dismissed, and seen (exit $declined_code, $declined), not queued, asked once" \
    || fail "a send to Declines: exit $declined_code, $declined; $(count Declines prepare-upload) prepare-upload;" \
        "outbox: $(ctl a outbox 2>&1)"
[ "$code" = 77 ] && [[ "$sent" == *PIN* ]] && outbox_empty \
    && [ "$(count Pin prepare-upload https://example.com/p)" = 1 ] && [ "$(count Pin prepare-upload)" = 1 ] \
    && pass "401: failed for want of a PIN (exit $code, $sent), not queued, asked once" \
    || fail "a send to Pin: exit $code, $sent; $(count Pin prepare-upload) prepare-upload; outbox: $(ctl a outbox 2>&1)"

# 409, then 204: the send waits in the outbox and the retry delivers it.
send --to Busy https://example.com/b
busy_code=$code busy=$sent
for _ in $(seq 150); do [ "$(count Busy prepare-upload)" -ge 2 ] && outbox_empty && break; sleep 0.1; done
sleep 1  # a third request would come meanwhile
[ "$busy_code" = 75 ] && [ "$(count Busy prepare-upload https://example.com/b)" = 2 ] \
    && [ "$(count Busy prepare-upload)" = 2 ] && outbox_empty \
    && pass "409: the send stayed queued (exit 75, $busy), the retry was answered 204: asked exactly twice" \
    || fail "a send to Busy: exit $busy_code, $busy; $(count Busy prepare-upload) prepare-upload;" \
        "outbox: $(ctl a outbox 2>&1)"

# A device that holds prepare-upload 6 s: hexctl returns at its timeout, hexd waits on.
start=$(milliseconds)
send --timeout 2 --to Slow https://example.com/s
slow_code=$code slow=$sent elapsed=$(($(milliseconds) - start))
pending=$(ctl a outbox 2>&1)
for _ in $(seq 100); do outbox_empty && break; sleep 0.1; done
sleep 1  # a second request would come meanwhile
[ "$slow_code" = 75 ] && [[ "$slow" == *"has not answered yet"* ]] && [ "$elapsed" -lt 4000 ] \
    && [[ "$pending" != *empty* ]] \
    && pass "held 6 s, hexctl --timeout 2 returned after ${elapsed} ms (exit 75, $slow), the send queued" \
    || fail "a send to Slow: exit $slow_code after $elapsed ms, $slow; outbox: $pending"
[ "$(count Slow prepare-upload https://example.com/s)" = 1 ] && [ "$(count Slow prepare-upload)" = 1 ] \
    && outbox_empty \
    && pass "hexd did not ask again while the request was held, and delivered on its answer" \
    || fail "Slow: $(count Slow prepare-upload) prepare-upload; outbox: $(ctl a outbox 2>&1)"

# 200 with a session and a token: the text goes up as a file.
send --to Files https://example.com/f
[ "$code" = 0 ] && [[ "$sent" == "received by Files"* ]] && [ "$(count Files upload https://example.com/f)" = 1 ] \
    && [ "$(count Files upload)" = 1 ] && [ "$(count Files prepare-upload)" = 1 ] && outbox_empty \
    && pass "200 with a token: the text was uploaded once and the send delivered ($sent)" \
    || fail "a send to Files: exit $code, $sent; $(count Files prepare-upload) prepare-upload," \
        "$(count Files upload) upload"

# A name both a hexd peer and a LocalSend device go by: refused, naming both; an ID picks one.
device_id=$(awk '$1 == "localsend" && $2 == "host-c" { print $3 }' <<<"$peers")
peer_id=$(awk '$1 == "hexd" && $2 == "host-c" { print $3 }' <<<"$peers")
send --to host-c https://example.com/c
[[ "$code" =~ ^(1|64)$ ]] && [[ "$sent" == *"names both"* ]] && [[ "$sent" == *"$device_id"* ]] \
    && [[ "$sent" == *"$peer_id"* ]] && [ "$(count host-c prepare-upload)" = 0 ] && outbox_empty \
    && pass "host-c, a hexd peer's name and a device's, is refused naming both IDs (exit $code)" \
    || fail "a send to host-c: exit $code, $sent; $(count host-c prepare-upload) prepare-upload;" \
        "outbox: $(ctl a outbox 2>&1)"
send --to "${device_id:0:22}" https://example.com/c
[ "$code" = 0 ] && [[ "$sent" == "received by host-c"* ]] && [ "$(count host-c prepare-upload)" = 1 ] \
    && [ "$(count host-c prepare-upload https://example.com/c)" = 1 ] \
    && pass "the device's ID prefix (${device_id:0:22}) picks it: delivered once" \
    || fail "a send to ${device_id:0:22}: exit $code, $sent; $(count host-c prepare-upload) prepare-upload"

# host-a asks senders for a PIN (--localsend-pin 4711): none or a wrong one is 401, a third wrong
# one locks the address out (429, the right PIN too), and another address still gets in.
ip -n "$tag-b" addr add 10.69.0.3/24 dev "sb$$"
offer() {  # SOURCE_ADDRESS PIN...: the status of a message to host-a from SOURCE_ADDRESS with each PIN
    ip netns exec "$tag-b" python3 - "$@" <<'PYTHON'
import json, socket, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
body = json.dumps({"info": {"alias": "Guesser", "version": "2.1", "deviceType": "mobile", "fingerprint": "ab" * 32,
                            "port": 53317, "protocol": "https", "download": False},
                   "files": {"m": {"id": "m", "fileName": "m.txt", "size": 3, "fileType": "text/plain",
                                   "preview": "pin"}}}).encode()
for pin in sys.argv[2:]:
    query = "" if pin == "-" else "?pin=" + pin
    raw = socket.create_connection(("10.69.0.1", 53317), timeout=5, source_address=(sys.argv[1], 0))
    tls = ctx.wrap_socket(raw)
    tls.sendall(f"POST /api/localsend/v2/prepare-upload{query} HTTP/1.1\r\nHost: 10.69.0.1\r\n".encode()
                + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    print(tls.recv(65536).split(b"\r\n")[0].decode().split(" ")[1], end=" ")
PYTHON
}
guessed=$(offer 10.69.0.2 - 1111 2222 3333 4711)
other=$(offer 10.69.0.3 4711)
[ "$guessed" = "401 401 401 401 429 " ] && [ "$other" = "204 " ] \
    && [[ "$(ctl a inbox --json --limit 1)" == *'"senderName":"Guesser"'* ]] \
    && pass "PIN: none and three wrong are 401, then 429 (the right one too); another address's right PIN: 204" \
    || fail "PIN answers from 10.69.0.2: $guessed; from 10.69.0.3: $other"

echo "$label: $passed passed, 0 failed"
