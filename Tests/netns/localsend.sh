#!/usr/bin/env bash
# hexd as a LocalSend device, against a LocalSend daemon hexd did not write (PyPI's localsendd,
# which speaks protocol 2.2 as the 1.18 apps do: client certificates, pinned fingerprints), in
# network namespaces on one bridge:
#   - host-a (hexd) and devB (localsendd, on host b) find each other by LocalSend's multicast:
#     devB lists host-a with the fingerprint host-a's status shows; host-a lists devB as a
#     LocalSend device with the fingerprint devB's status shows, at devB's address and port;
#   - host-b (hexd) beside devB on host b finds TCP 53317 taken, says so in its status, serves on
#     53318 and announces that, and devB still serves on 53317 and lists host-b at 53318;
#   - host-a lists host-b as a hexd peer, never as a LocalSend device;
#   - a forged announcement (devB's alias and address, another fingerprint) lists nothing: the
#     certificate at that address is not the one it claims;
#   - devB sends host-a a note (a text file with no preview, as localsendd sends one, its client
#     certificate shown): the file lands whole in host-a's downloads as note.txt (LocalSend 1.18
#     calls only a previewed text a message), and a hex from devB's ID links it, its first line the
#     description and each web address in it a link after the file's; devB sends a 5 MiB file,
#     which lands whole in host-a's downloads folder with a hex linking to it; a climbing file
#     name, 10,000 files, a 20 MB body and an upload without a session are refused; host-d
#     (--accept paired) holds devB's note until the person lets devB in (hexctl pair --accept), then
#     pairs it; a declined offer lands nothing (a hexd peer going by devB's name beside it, the name
#     is refused as ambiguous, the ID answers); blocked, devB's next note is refused and nothing is
#     stored;
#   - a message as the 1.18 apps send one (its text the preview of one text file, a script of the
#     test's own, no client certificate as apps before 1.18): a hex naming no sender ID, answered 204;
#     the same with a certificate other than the one the device claims: 403, nothing stored;
#   - host-a sends devB a link (the bare address) and a hex of two links (its description, then one
#     address per line) through its outbox, over TLS to the certificate devB announced, and shares
#     a 5 MiB file with it; a send while devB is stopped waits, and is delivered once when devB is
#     back;
#   - host-a answers the v1 info probe older apps send;
#   - hidden (hexctl visibility hidden), host-a sends no announcement and its API answers nothing;
#     shown again, it announces at once and answers;
#   - hexctl peers --refresh makes devB prove itself again within the second it waits;
#   - devB reinstalled (a new certificate, the same name) is a new device: a send to the old ID
#     is not delivered to it, the name two devices share is refused, the new ID is sent to.
# Each check is counted; the last line says how many passed. Touches only the namespaces it makes;
# every wait is bounded.
#
# Usage: localsend.sh BIN_DIR   (needs root, iproute2, python3 with localsendd 0.1.1)
set -euo pipefail
bin=${1:?usage: localsend.sh BIN_DIR}
tag=hexdls$$
work=$(mktemp -d /tmp/hexd-localsend-XXXXXX)
pids=()
label=localsend
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

if ! python3 -c "import localsendd"; then
    echo "$label: FAILED: localsendd is not installed (pip install localsendd)"
    exit 1
fi

make_bridge
join_bridge a 10.68.0.1/24
join_bridge b 10.68.0.2/24
join_bridge d 10.68.0.4/24
# Multicast leaves by the route to the group: the bridge, in each namespace.
for host in a b d; do ip -n "$tag-$host" route add 224.0.0.0/4 dev "s$host$$"; done

# localsendd on host b first: it has LocalSend's port, as an app on that host would.
start_localsendd b devB

start_hexd a
start_hexd b
# host-d takes hexes from paired senders alone: a LocalSend device waits there for its person's yes.
start_hexd d --accept paired

fingerprint_a=$(ctl a status --json | carrier localsend 'c["identity"]')
fingerprint_b=$(ctl b status --json | carrier localsend 'c["identity"]')
port_b=$(ctl b status --json | carrier localsend 'c["port"]')
note_b=$(ctl b status --json | carrier localsend '" ".join(c["notes"])')
fingerprint_devb=$(lsctl status --json | json 'data["self"]["fingerprint"]')

[ "$port_b" = 53318 ] && [[ "$note_b" == *"53317 is taken"* ]] \
    && pass "host-b found TCP 53317 taken by devB and serves LocalSend on 53318 ($note_b)" \
    || fail "host-b's LocalSend port is $port_b ($note_b)"

# devB lists both hexd daemons, with their fingerprints and ports.
listed=""
for _ in $(seq 150); do
    listed=$(lsctl devices --json 2>/dev/null || true)
    [[ "$listed" == *"$fingerprint_a"* && "$listed" == *"$fingerprint_b"* ]] && break
    sleep 0.1
done
echo "$listed" | json '[d for d in data if d["alias"] == "host-a" and d["fingerprint"] == "'"$fingerprint_a"'"]' \
    | grep host-a >/dev/null && pass "devB lists host-a with the fingerprint host-a's status shows" \
    || fail "devB does not list host-a: $listed"
echo "$listed" | json '[d["port"] for d in data if d["alias"] == "host-b"]' | grep 53318 >/dev/null \
    && pass "devB lists host-b at the port it had to take, 53318" || fail "devB's list: $listed"

# host-a lists devB as a LocalSend device, proven, at its address and port.
peers=""
for _ in $(seq 150); do
    peers=$(ctl a peers --json 2>/dev/null || true)
    [[ "$peers" == *'"localsend"'* && "$peers" == *host-b* ]] && break
    sleep 0.1
done
device=$(echo "$peers" | python3 -c '
import json, sys
devices = [p for p in map(json.loads, filter(None, sys.stdin.read().splitlines())) if p.get("kind") == "localsend"]
print(" ".join("|".join((d["name"], d["fingerprint"], d["endpoint"])) for d in devices))')
[ "$device" = "devB|$fingerprint_devb|10.68.0.2:53317" ] \
    && pass "host-a lists devB as a LocalSend device: fingerprint ${fingerprint_devb:0:16}…, 10.68.0.2:53317" \
    || fail "host-a's LocalSend devices: '$device' (devB is $fingerprint_devb)"
echo "$peers" | grep '"host-b"' | grep '"kind":"hexd"' >/dev/null \
    && pass "host-a lists host-b as a hexd peer, and not as a LocalSend device" \
    || fail "host-a's peers: $peers"

# A forged announcement from host b: devB's alias, another fingerprint. The certificate at that
# address is devB's, so hexd lists nothing new.
forged=$(printf '%064d' 7)
ip netns exec "$tag-b" python3 -c '
import json, socket, sys
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
body = {"alias": "devB", "version": "2.2", "deviceModel": None, "deviceType": "mobile", "fingerprint": sys.argv[1],
        "port": 53317, "protocol": "https", "download": False, "announce": True}
for _ in range(3):
    sock.sendto(json.dumps(body).encode(), ("224.0.0.167", 53317))' "$forged"
sleep 2
[[ "$(ctl a peers --json)" == *"$forged"* ]] && fail "host-a listed the forged fingerprint" \
    || pass "a forged announcement lists nothing (the certificate at its address is not the one it claims)"
grep -q "showed the certificate" "$work/a.log" \
    && pass "host-a's log says the forged device's certificate did not match" \
    || fail "host-a did not check the forged device's certificate"

# devB sends a note as localsendd does: one text file with no preview, uploaded with its client
# certificate. It is a file, kept whole; its first line and addresses describe the hex linking it.
printf 'see https://example.com/a and <https://example.org/b>,\nagain https://example.com/a\n' >"$work/note.txt"
sent=$(lsctl send "$work/note.txt" --to host-a --wait 2>&1 | grep -ao "Last result: .*" || true)
newest=$(ctl a inbox --json --limit 1)
hex_id=$(echo "$newest" | json 'data["id"]')
shown=$(ctl a inbox show --full --json "$hex_id")
sender=$(echo "$shown" | json 'data["senderUUID"]')
links=$(echo "$shown" | json '" ".join(link["url"] for link in data["links"])')
description=$(echo "$shown" | json 'data["hexDescription"]')
kept="$work/a/downloads/note.txt"
[ "$sender" = "localsend:$fingerprint_devb" ] \
    && [ "$links" = "file://$kept https://example.com/a https://example.org/b" ] \
    && [ "$description" = "see https://example.com/a and <https://example.org/b>," ] \
    && cmp -s "$kept" "$work/note.txt" \
    && pass "devB's note landed whole as $kept and a hex from localsend:${fingerprint_devb:0:8}… links it," \
        "its first line the description, its two addresses links" \
    || fail "devB's note: $sent; host-a's newest hex: $shown (sender '$sender', links '$links')"
# devB sends a 5 MiB file: it lands in host-a's downloads folder under its name, whole, and a hex
# from devB links to it.
head -c $((5 << 20)) /dev/urandom >"$work/photo one.bin"
sent=$(lsctl send "$work/photo one.bin" --to host-a --wait 2>&1 | grep -ao "Last result: .*" || true)
landed="$work/a/downloads/photo one.bin"
shown=$(ctl a inbox show --full --json "$(ctl a inbox --json --limit 1 | json 'data["id"]')")
link=$(echo "$shown" | json 'data["links"][0]["url"]')
[ -f "$landed" ] && [ "$(sha256sum <"$landed")" = "$(sha256sum <"$work/photo one.bin")" ] \
    && [ "$link" = "file://$work/a/downloads/photo%20one.bin" ] \
    && [[ "$shown" == *'"senderUUID":"localsend:'"$fingerprint_devb"'"'* ]] \
    && pass "devB's 5 MiB file landed whole (SHA-256 equal) in host-a's downloads, a hex from devB linking to it" \
    || fail "devB's file: $sent; downloads: $(ls -la "$work/a/downloads" 2>&1); newest hex: $shown"
leftover=$(ls "$work/a/downloads")
[[ "$leftover" == *.part* ]] && fail "a partial file was left: $leftover"

# Hostile offers from host b, over TLS with no client certificate: a name climbing out of the folder,
# ten thousand files, a 20 MB body, an upload without a session. Each is refused, nothing is written.
hostile() {  # prints the status line of each request
    ip netns exec "$tag-b" python3 - <<'PYTHON'
import json, socket, ssl
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
info = {"alias": "Mallory", "version": "2.1", "deviceModel": None, "deviceType": "mobile", "fingerprint": "ab" * 32,
        "port": 53317, "protocol": "https", "download": False}
def ask(path, body):
    tls = ctx.wrap_socket(socket.create_connection(("10.68.0.1", 53317), timeout=10))
    head = f"POST {path} HTTP/1.1\r\nHost: 10.68.0.1\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    try:
        tls.sendall(head + body)
    except OSError:
        pass
    reply = b""
    try:
        while b"\r\n" not in reply and (chunk := tls.recv(65536)):
            reply += chunk
    except OSError:
        pass
    return reply.split(b"\r\n")[0].decode() or "closed"
def offer(files):
    return json.dumps({"info": info, "files": {f["id"]: f for f in files}}).encode()
file = lambda i, name: {"id": f"f{i}", "fileName": name, "size": 10, "fileType": "application/octet-stream"}
print(ask("/api/localsend/v2/prepare-upload", offer([file(0, "../../escaped.txt")])))
print(ask("/api/localsend/v2/prepare-upload", offer([file(i, f"x{i}") for i in range(10_000)])))
print(ask("/api/localsend/v2/prepare-upload", b"{" + b" " * (20 << 20) + b"}"))
print(ask("/api/localsend/v2/upload?sessionId=none&fileId=f0&token=t", b"0123456789"))
PYTHON
}
answers=$(hostile | tr '\n' '|')
expected="HTTP/1.1 400 Bad Request|HTTP/1.1 400 Bad Request|HTTP/1.1 413 Content Too Large|HTTP/1.1 403 Forbidden|"
[ "$answers" = "$expected" ] && [ -z "$(find "$work" -name 'escaped*')" ] \
    && pass "a climbing name, 10,000 files, a 20 MB body, an upload without a session: 400, 400, 413, 403" \
    || fail "hostile offers answered: $answers"

# host-d (--accept paired): devB's note waits for the person, who lets devB in from hexctl; the
# note lands, devB is paired. Unpaired again, its next note waits, is declined, and nothing lands.
offer_waiting() {  # waits, at most 15 s, until host-d lists devB's offer
    for _ in $(seq 150); do
        ctl d peers --json 2>/dev/null | grep '"devB"' | grep -q '"offer"' && return 0
        sleep 0.1
    done
    return 1
}
lsctl send "$work/note.txt" --to host-d --wait >"$work/to-d.out" 2>&1 &
sending=$!
offer_waiting || fail "host-d does not list devB's offer: $(ctl d peers --json)"
listed=$(ctl d peers)
accepted=$(ctl d pair --accept devB 2>&1 || true)
wait "$sending" || true
newest=$(ctl d inbox --json --limit 1 2>/dev/null || true)
[[ "$listed" == *'"devB" wants to send a file, '* ]] && [[ "$accepted" == "let \"devB\""*"is paired"* ]] \
    && [[ "$newest" == *'"senderUUID":"localsend:'"$fingerprint_devb"'"'* ]] \
    && pass "--accept paired: devB's note waited, the person let devB in (hexctl pair --accept), and it landed" \
    || fail "consent: listed '$listed', accepted '$accepted', host-d's newest: $newest, devB: $(cat "$work/to-d.out")"
ctl d unpair "localsend:$fingerprint_devb" >/dev/null
lsctl send "$work/note.txt" --to host-d --wait >"$work/to-d.out" 2>&1 &
sending=$!
offer_waiting || fail "host-d does not list devB's second offer"
# A hexd peer going by the device's name beside it: the name is refused as ambiguous (as sends
# refuse it), and the device's ID answers its offer.
ip netns exec "$tag-d" "$bin/hexd" --data-dir "$work/namesake" --name devB --port 0 --announce-interval 1 --mdns off \
    --web off --notify off --localsend off --kdeconnect off --log-level debug 2>"$work/namesake.log" &
namesake=$!
pids+=("$namesake")
wait_until "ctl d peers --json 2>/dev/null | grep '\"devB\"' | grep -q '\"kind\":\"hexd\"'" \
    || fail "host-d does not list the hexd peer named devB: $(ctl d peers --json)"
ambiguous=$(ctl d pair --accept devB 2>&1 || true)
declined=$(ctl d pair --decline "localsend:$fingerprint_devb" 2>&1 || true)
kill "$namesake"
wait "$namesake" 2>/dev/null || true
wait "$sending" || true
count=$(ctl d inbox --json | wc -l)
[[ "$ambiguous" == *"names both"* ]] && [[ "$declined" == "declined what \"devB\""* ]] && [ "$count" = 1 ] \
    && pass "declined (hexctl pair --decline), devB's next note is refused and nothing lands ($count hex on host-d);" \
        "its name, a hexd peer's too, was refused as ambiguous" \
    || fail "declined: '$declined', by name: '$ambiguous', $count hexes on host-d, devB: $(cat "$work/to-d.out")"

ctl a block "localsend:$fingerprint_devb" >/dev/null
before=$(ctl a inbox --json | wc -l)
blocked=$(lsctl send "$work/note.txt" --to host-a --wait 2>&1 | grep -ao "Last result: .*" || true)
after=$(ctl a inbox --json | wc -l)
[ "$before" = "$after" ] && [[ "$blocked" != *"sent (host-a)"* ]] \
    && pass "blocked, devB's next note is refused and nothing is stored ($blocked)" \
    || fail "blocked, devB's note: $blocked ($before hexes before, $after after)"

# A message as the LocalSend apps send one: its text the preview of one text file, nothing uploaded;
# then with a client certificate that is not the one the message claims (devB's fingerprint).
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=impostor -keyout "$work/impostor.key" \
    -out "$work/impostor.crt" 2>/dev/null
message() {  # MESSAGE FINGERPRINT [CERTIFICATE KEY]: host-a's status line
    ip netns exec "$tag-b" python3 - "$@" <<'PYTHON'
import json, socket, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
if len(sys.argv) > 3:
    ctx.load_cert_chain(sys.argv[3], sys.argv[4])
text = sys.argv[1]
body = json.dumps({"info": {"alias": "Pixel", "version": "2.1", "deviceModel": "Pixel 8", "deviceType": "mobile",
                            "fingerprint": sys.argv[2], "port": 53317, "protocol": "https", "download": False},
                   "files": {"m1": {"id": "m1", "fileName": "m1.txt", "size": len(text.encode()),
                                    "fileType": "text/plain", "preview": text}}}).encode()
tls = ctx.wrap_socket(socket.create_connection(("10.68.0.1", 53317), timeout=5))
tls.sendall(b"POST /api/localsend/v2/prepare-upload HTTP/1.1\r\nHost: 10.68.0.1:53317\r\n"
            + b"Content-Type: application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
print(tls.recv(65536).split(b"\r\n")[0].decode())
PYTHON
}
answer=$(message "https://example.net/from-a-phone" "$(printf 'f%.0s' $(seq 64))")
newest=$(ctl a inbox --json --limit 1)
[ "$answer" = "HTTP/1.1 204 No Content" ] && [[ "$newest" == *'"senderName":"Pixel"'* ]] \
    && [[ "$newest" != *'"senderUUID":"'[^\"]* ]] \
    && pass "a message (its text the preview) is answered 204 and kept as a hex naming no sender ID" \
    || fail "a message: answered '$answer'; newest hex: $newest"
before=$(ctl a inbox --json | wc -l)
forged=$(message "https://example.net/forged" "$fingerprint_devb" "$work/impostor.crt" "$work/impostor.key")
after=$(ctl a inbox --json | wc -l)
[ "$forged" = "HTTP/1.1 403 Forbidden" ] && [ "$before" = "$after" ] \
    && pass "a message whose client certificate is not the one it claims is refused 403, nothing stored" \
    || fail "a forged message: answered '$forged' ($before hexes before, $after after)"

# host-a sends devB a link, then a note with two links: localsendd, unattended, takes a message as
# a text file, which hexd uploads (the 1.18 apps answer 204 and show it instead).
in_downloads() {  # the files in devB's downloads that hold exactly $1
    for file in "$work"/lsd-downloads/*; do [ -f "$file" ] && [ "$(cat "$file")" = "$1" ] && echo "$file"; done
    true
}
fingerprint_devb_lower=$(echo "$fingerprint_devb" | tr 'A-F' 'a-f')
sent=$(ctl a send --to devB https://example.com/to-devb 2>&1 || true)
[[ "$sent" == "received by devB (10.68.0.2:53317) over TLS (key ${fingerprint_devb_lower:0:16})"* ]] \
    && [ -n "$(in_downloads https://example.com/to-devb)" ] \
    && pass "host-a sent devB a link, the bare address, over TLS to the certificate devB announced" \
    || fail "a link to devB: $sent; devB's downloads: $(ls "$work/lsd-downloads" 2>&1)"
note=$'Two links\nhttps://example.com/one\nhttps://example.org/two'
sent=$(ctl a send --to devB -d "Two links" https://example.com/one https://example.org/two 2>&1 || true)
[[ "$sent" == "received by devB"* ]] && [ -n "$(in_downloads "$note")" ] \
    && pass "a hex of two links reaches devB as its description and one address per line" \
    || fail "a note to devB: $sent; devB's downloads: $(ls "$work/lsd-downloads" 2>&1)"

# host-a shares a 5 MiB file with devB: the file itself, uploaded, whole at devB.
head -c $((5 << 20)) /dev/urandom >"$work/to devB.bin"
shared=$(ctl a share --to devB "$work/to devB.bin" 2>&1 || true)
[[ "$shared" == "received by devB"*"LocalSend took 1 of 1 files (5.0 MiB)"* ]] \
    && [ "$(sha256sum <"$work/lsd-downloads/to devB.bin")" = "$(sha256sum <"$work/to devB.bin")" ] \
    && pass "host-a shared a 5 MiB file with devB: the file itself, SHA-256 equal at devB" \
    || fail "a file to devB: $shared; devB's downloads: $(ls "$work/lsd-downloads" 2>&1)"

# devB stops: a send waits in host-a's outbox, and is delivered once when devB is back (its
# announcement at start is answered, which proves it there again).
kill "$lsd_pid"
wait "$lsd_pid" 2>/dev/null || true
queued=$(ctl a send --to devB https://example.com/while-away 2>&1) && fail "a send to a stopped devB: $queued"
start_localsendd b devB
for _ in $(seq 150); do [ -n "$(in_downloads https://example.com/while-away)" ] && break; sleep 0.1; done
sleep 1  # a second delivery would land meanwhile
copies=$(in_downloads https://example.com/while-away | wc -l)
waiting=$(ctl a outbox)
[[ "$queued" == *"queued as"* ]] && [ "$copies" = 1 ] && [[ "$waiting" == *"empty"* ]] \
    && pass "a send while devB was down waited in the outbox and was delivered once when devB came back" \
    || fail "while devB was away: $queued; then $copies copies, outbox: $waiting"

# Hidden: no announcement from host-a, and its API closes connections unanswered. Shown: both again.
heard() {  # how many announcements from host-a host b hears in $1 seconds (the file $2 made once it listens)
    ip netns exec "$tag-b" python3 - "$@" <<'PYTHON'
import json, socket, struct, sys, time
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
sock.bind(("", 53317))
sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, struct.pack("4s4s", socket.inet_aton("224.0.0.167"),
                socket.inet_aton("0.0.0.0")))
if len(sys.argv) > 2:
    open(sys.argv[2], "w").close()
end, count = time.monotonic() + float(sys.argv[1]), 0
while (left := end - time.monotonic()) > 0:
    sock.settimeout(left)
    try:
        data, _ = sock.recvfrom(4096)
    except socket.timeout:
        break
    count += json.loads(data).get("alias") == "host-a"
print(count)
PYTHON
}
answers() {  # what host-a's LocalSend API answers to info (v2, or $1): its alias, or "closed"
    ip netns exec "$tag-b" python3 - "${1:-v2}" <<'PYTHON'
import json, socket, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
try:
    tls = ctx.wrap_socket(socket.create_connection(("10.68.0.1", 53317), timeout=5))
    tls.sendall(f"GET /api/localsend/{sys.argv[1]}/info HTTP/1.1\r\nHost: 10.68.0.1:53317\r\n\r\n".encode())
    reply = b""
    while chunk := tls.recv(65536):
        reply += chunk
    print(json.loads(reply.split(b"\r\n\r\n", 1)[1])["alias"] if reply else "closed")
except (OSError, ValueError, IndexError):
    print("closed")
PYTHON
}
[ "$(answers)" = host-a ] || fail "host-a's API does not answer info while visible"
[ "$(answers v1)" = host-a ] && pass "host-a answers the v1 info probe older apps send" \
    || fail "host-a does not answer /api/localsend/v1/info"
ctl a visibility hidden >/dev/null
heard_hidden=$(heard 2)
answered_hidden=$(answers)
heard 3 "$work/listening" >"$work/heard" &
listener=$!
# Shown only once the listener has joined the group (a loaded machine may take a while to start it).
wait_until '[ -e "$work/listening" ]' 50 || fail "the listener did not join LocalSend's group within 5 s"
ctl a visibility visible >/dev/null
wait "$listener"
heard_shown=$(cat "$work/heard")
answered_shown=$(answers)
[ "$heard_hidden" = 0 ] && [ "$answered_hidden" = closed ] \
    && pass "hidden, host-a announces nothing and its API answers nothing" \
    || fail "hidden, host-a was heard $heard_hidden times and its API answered '$answered_hidden'"
[ "$heard_shown" -ge 1 ] && [ "$answered_shown" = host-a ] \
    && pass "shown again, host-a announces at once ($heard_shown heard within 2.5 s) and answers" \
    || fail "shown again, host-a was heard $heard_shown times and its API answered '$answered_shown'"

# hexctl peers --refresh asks at once: devB, last heard a few seconds ago, registers again within
# the second hexctl waits (without it, not before host-a's next announcement, up to 30 s away).
seen_devb() { python3 -c '
import json, sys
print(min((p["lastSeen"] for p in map(json.loads, filter(None, sys.stdin.read().splitlines()))
           if p.get("name") == "devB"), default=-1))'; }
for _ in $(seq 100); do
    awhile=$(ctl a peers --json | seen_devb)
    python3 -c "import sys; sys.exit(0 if $awhile >= 3 else 1)" && break
    sleep 0.1
done
refreshed=$(ctl a peers --refresh --json | seen_devb)
python3 -c "import sys; sys.exit(0 if $awhile >= 3 and 0 <= $refreshed < 1.5 else 1)" \
    && pass "peers --refresh: devB, last heard ${awhile%.*} s before, proved itself again within the second" \
    || fail "peers --refresh: devB last heard $awhile s ago, then $refreshed s ago"

# devB reinstalled: a new certificate under the same name is a new device, never the old one. A
# send to the old ID is not delivered to it; the name, now two devices', is refused; the new ID works.
kill "$lsd_pid"
wait "$lsd_pid" 2>/dev/null || true
mv "$work/lsd-state" "$work/lsd-state-old"
start_localsendd b devB
fingerprint_new=$(lsctl status --json | json 'data["self"]["fingerprint"]')
for _ in $(seq 150); do [[ "$(ctl a peers --json)" == *"$fingerprint_new"* ]] && break; sleep 0.1; done
before=$(ls "$work/lsd-downloads" | wc -l)
old_code=0
old_send=$(ctl a send --timeout 3 --to "localsend:$fingerprint_devb" https://example.com/old 2>&1) || old_code=$?
name_code=0
by_name=$(ctl a send --to devB https://example.com/name 2>&1) || name_code=$?
new_send=$(ctl a send --to "localsend:${fingerprint_new:0:16}" https://example.com/new 2>&1 || true)
[ "$fingerprint_new" != "$fingerprint_devb" ] && [ "$old_code" = 75 ] \
    && [[ "$old_send" == *"showed the certificate"* ]] \
    && [ "$name_code" != 0 ] && [[ "$by_name" == *"matches 2"* ]] && [[ "$new_send" == "received by devB"* ]] \
    && [ -n "$(in_downloads https://example.com/new)" ] && [ -z "$(in_downloads https://example.com/old)" ] \
    && [ "$(ls "$work/lsd-downloads" | wc -l)" = $((before + 1)) ] \
    && pass "devB with a new certificate is a new device: the old ID's send waits, the shared name is refused" \
    || fail "a reinstalled devB (${fingerprint_new:0:8}, was ${fingerprint_devb:0:8}): old ID: exit $old_code," \
        "$old_send; by name: exit $name_code, $by_name; new ID: $new_send"

echo "$label: $passed passed, 0 failed"
