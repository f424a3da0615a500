#!/usr/bin/env bash
# hexd as a LocalSend device, against a sender that sends as the LocalSend 1.18 app does
# (Tests/netns/localsend_sender.py, written from the app's Rust core, each behaviour cited there:
# a client certificate, prepare-upload, then each file streamed with no length, chunked), in
# network namespaces on one bridge (10.72.0.0/24), hexd with its defaults (start_hexd):
#   - a photo (3 MiB), a PDF (1 MiB and a half) and a notes.txt, sent together, land whole in
#     hexd's downloads folder under their names (SHA-256 equal), and the newest hex in the inbox
#     links all three;
#   - a lone text file (no preview, as the app sends a picked one) is kept as the file, its first
#     line the hex's description; one that is not UTF-8 is kept byte for byte, the hex named by it;
#   - a 24 MiB file streamed the same way lands whole (a stranger may keep 32 MiB by default);
#   - an upload whose bytes are not the SHA-256 offered is answered 422, as the app's receiver
#     answers it, and the file the app then uploads again lands whole; after three, nothing lands;
#   - an offer waiting for host-c's person (--accept paired) whose sender gives up, closing its
#     connection as the app does, or posting /cancel without a session, leaves hexctl peers at once
#     and cannot be accepted any more;
#   - an upload whose head has both Content-Length and Transfer-Encoding is refused (400), as
#     request smuggling is.
# Each check is counted; the last line says how many passed. Touches only the namespaces it makes;
# every wait is bounded.
#
# Usage: localsend-app.sh BIN_DIR   (needs root, iproute2, python3 with cryptography, openssl)
set -euo pipefail
bin=${1:?usage: localsend-app.sh BIN_DIR}
tag=hexdla$$
work=$(mktemp -d /tmp/hexd-localsend-app-XXXXXX)
pids=()
label=localsend-app
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

make_bridge
join_bridge a 10.72.0.1/24
join_bridge b 10.72.0.2/24
start_hexd a --downloads "$work/a-downloads"
port=$(ctl a status --json | carrier localsend 'c["port"]')
fingerprint=$(ctl a status --json | carrier localsend 'c["identity"]')
send() {
    ip netns exec "$tag-b" python3 "$(dirname "$0")/localsend_sender.py" 10.72.0.1 "$port" "$fingerprint" Pixel "$@"
}

mkdir -p "$work/files"
head -c 3145728 /dev/urandom >"$work/files/photo.jpg"
head -c 1572864 /dev/urandom >"$work/files/report.pdf"
printf 'buy milk\nand bread\n' >"$work/files/notes.txt"
result=$(send "$work/files/photo.jpg" "$work/files/report.pdf" "$work/files/notes.txt")
[ "$(json '(data["prepare"], [u["status"] for u in data["uploads"]])' <<<"$result")" = "(200, [200, 200, 200])" ] \
    || fail "the 1.18 sender's session: $result"
for file in photo.jpg report.pdf notes.txt; do
    cmp -s "$work/files/$file" "$work/a-downloads/$file" \
        || fail "$file did not land whole: $(ls -l "$work/a-downloads")"
done
newest=$(ctl a inbox show "$(ctl a inbox --json --limit 1 | json 'data["id"]')")
for file in photo.jpg report.pdf notes.txt; do
    [[ "$newest" == *"$work/a-downloads/$file"* ]] || fail "the newest hex does not link $file: $newest"
done
pass "a photo, a PDF and a notes.txt streamed chunked, as LocalSend 1.18 sends, landed whole under their names"

# A picked text file alone is a file too (the app sets no preview: send_provider.dart), kept whole
# under its name, even when it is not UTF-8; a UTF-8 one lends the hex its first line.
printf 'shopping\nhttps://example.com/list\n' >"$work/files/list.txt"
result=$(send "$work/files/list.txt")
[ "$(json '[u["status"] for u in data["uploads"]]' <<<"$result")" = "[200]" ] || fail "a lone list.txt: $result"
shown=$(ctl a inbox show --full --json "$(ctl a inbox --json --limit 1 | json 'data["id"]')")
[ "$(json '(data["hexDescription"], [l["url"] for l in data["links"]])' <<<"$shown")" \
    = "('shopping', ['file://$work/a-downloads/list.txt', 'https://example.com/list'])" ] \
    && cmp -s "$work/files/list.txt" "$work/a-downloads/list.txt" \
    || fail "a lone list.txt did not land whole as a file, described by its first line: $shown"
printf 'caf\xe9 latin-1\n' >"$work/files/latin.txt"
result=$(send "$work/files/latin.txt")
shown=$(ctl a inbox show --full --json "$(ctl a inbox --json --limit 1 | json 'data["id"]')")
[ "$(json 'data["hexDescription"]' <<<"$shown")" = latin.txt ] && cmp -s "$work/files/latin.txt" \
    "$work/a-downloads/latin.txt" || fail "a text file not in UTF-8 did not land whole, named: $shown ($result)"
pass "a lone text file is kept whole under its name, its first line the hex's description (by its name if not UTF-8)"

head -c 25165824 /dev/urandom >"$work/files/film.mp4"
result=$(send "$work/files/film.mp4")
[ "$(json '[u["status"] for u in data["uploads"]]' <<<"$result")" = "[200]" ] || fail "24 MiB chunked: $result"
cmp -s "$work/files/film.mp4" "$work/a-downloads/film.mp4" || fail "the 24 MiB file did not land whole"
pass "a 24 MiB file streamed chunked landed whole"

# Bytes that are not the SHA-256 offered (a file that changed while the app read it): 422, and the
# app uploads it again with its token (upload_isolate.dart), three uploads in all.
sender() { ip netns exec "$tag-b" python3 "$(dirname "$0")/localsend_sender.py" "$@"; }
head -c 2097152 /dev/urandom >"$work/files/changed.bin"
result=$(sender --corrupt 1 10.72.0.1 "$port" "$fingerprint" Pixel "$work/files/changed.bin")
[ "$(json 'data["uploads"][0]["attempts"]' <<<"$result")" = "[422, 200]" ] \
    && cmp -s "$work/files/changed.bin" "$work/a-downloads/changed.bin" \
    || fail "an upload altered once: $result; $(ls -l "$work/a-downloads")"
cp "$work/files/changed.bin" "$work/files/spoilt.bin"
result=$(sender --corrupt 3 10.72.0.1 "$port" "$fingerprint" Pixel "$work/files/spoilt.bin")
[ "$(json 'data["uploads"][0]["attempts"]' <<<"$result")" = "[422, 422, 422]" ] \
    && [ ! -e "$work/a-downloads/spoilt.bin" ] && ! ls "$work/a-downloads" | grep -q '\.part' \
    || fail "an upload altered three times: $result; $(ls -l "$work/a-downloads")"
result=$(send "$work/files/list.txt")
[ "$(json '[u["status"] for u in data["uploads"]]' <<<"$result")" = "[200]" ] \
    || fail "after three mismatches the session did not end: $result"
pass "bytes not the SHA-256 offered: 422, and the file sent again landed whole; after three 422s nothing landed," \
    "and the next session was taken"

# host-c lets in paired devices alone (--accept paired): the sender's offer waits for its person.
# The sender gives up while it waits, as the app does (closing its connection), then cancels (a
# /cancel without a session): each time the offer leaves hexctl peers at once, and nothing is asked.
join_bridge c 10.72.0.3/24
start_hexd c --accept paired --downloads "$work/c-downloads"
port_c=$(ctl c status --json | carrier localsend 'c["port"]')
fingerprint_c=$(ctl c status --json | carrier localsend 'c["identity"]')
offered() { ctl c peers --json | grep '"Pixel"' | grep -q '"offer"'; }
for how in --give-up --cancel; do
    ip netns exec "$tag-b" python3 "$(dirname "$0")/localsend_sender.py" "$how" 3 10.72.0.3 "$port_c" \
        "$fingerprint_c" Pixel "$work/files/list.txt" >"$work/sender.out" 2>&1 &
    sender=$!
    listed=""
    for _ in $(seq 25); do offered && listed=yes && break; sleep 0.1; done
    [ -n "$listed" ] || fail "$how: host-c does not list the offer: $(ctl c peers --json)"
    wait "$sender" || fail "$how: the sender failed: $(cat "$work/sender.out")"
    gone=""
    for _ in $(seq 20); do offered || { gone=yes; break; }; sleep 0.1; done
    [ -n "$gone" ] || fail "$how: the offer still waits after the sender gave up: $(ctl c peers --json)"
    accepted=$(ctl c pair --accept Pixel 2>&1) && fail "$how: the person could still accept it: $accepted"
    [ -z "$(ls "$work/c-downloads" 2>/dev/null)" ] || fail "$how: something landed: $(ls "$work/c-downloads")"
done
grep -q 'withdrew its offer (it closed its connection)' "$work/c.log" \
    && grep -q 'withdrew its offer (it cancelled)' "$work/c.log" \
    && [ "$(cat "$work/sender.out")" = '{"cancel": 200, "prepare": 403}' ] \
    || fail "host-c's log or the cancelled offer's answers: $(cat "$work/sender.out"); $(grep withdrew "$work/c.log")"
pass "a waiting offer whose sender closed its connection, or cancelled it (200, then 403 to the offer), left" \
    "hexctl peers at once; no question was left for the person, and nothing landed"

# Both framings at once: refused before anything is read as the body.
answer=$(ip netns exec "$tag-b" python3 - 10.72.0.1 "$port" <<'PY'
import socket, ssl, sys
context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE
with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10) as raw:
    with context.wrap_socket(raw) as tls:
        tls.sendall(b"POST /api/localsend/v2/upload?sessionId=x&fileId=0&token=y HTTP/1.1\r\nHost: a\r\n"
                    b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        print(tls.recv(4096).split(b"\r\n")[0].decode())
PY
)
[[ "$answer" == "HTTP/1.1 400 "* ]] || fail "Content-Length beside Transfer-Encoding: $answer"
pass "an upload with Content-Length beside Transfer-Encoding is refused: $answer"
echo "$label: $passed passed, 0 failed"
