#!/usr/bin/env bash
# hexd sending to a LocalSend 1.18 receiver: a device that answers as the app does
# (Tests/netns/localsend_receiver.py, written from the app's Rust core and Dart layer, each behaviour cited
# there), in network namespaces on one bridge (10.73.0.0/24), hexd with its defaults (start_hexd), driven as
# its user drives it (hexctl send, hexctl share):
#   a. hexd lists the receiver as a LocalSend device (its fingerprint, its address and port), having
#      registered with it showing the certificate it claims;
#   b. a link, and a note (a description and two links), reach it as the app's message: one text/plain file
#      whose preview is the whole text and whose size is the text's bytes, shown and closed (204); hexctl
#      says received;
#   c. two files shared with it (hexctl share --to) land whole (SHA-256 equal), offered with the MIME types
#      of their names (a .jpg image/jpeg, which the app may save to the gallery; a .pdf application/pdf);
#   d. declined (403): a shared file is refused (exit 77, "declined") and nothing lands; a note dismissed by
#      the back gesture (403, though it was shown) is refused as seen ("dismissed the message") and leaves
#      the outbox, never offered again;
#   e. busy with another sender's session (409): a note waits in the outbox (exit 75, its last error the 409)
#      and is delivered once, when the receiver is free (its person refreshing makes hexd try at once);
#   f. its person cancels a 48 MiB upload after 1 MiB (the app posts /cancel with its own session id to the
#      sender's LocalSend port): hexd answers 200, as the app's server does, stops uploading at once (the
#      connection ends within 2 s of that answer, before the whole file), and hexctl says the device
#      cancelled (exit 77), not that it declined;
#   g. a shared file whose first upload arrives altered is answered 422 "Checksum mismatch", as the app's
#      server answers a SHA-256 other than the offer's: hexd offered the file's SHA-256 (the app's sender
#      does, createChecksums being on by default), uploads it again with the same token, and it lands whole;
#      altered three times, hexd stops after the third 422 (the app's server takes no fourth attempt, and its
#      sender makes none: upload_isolate.dart) and hexctl says the checksum did not match (exit 77).
# Each check is counted; the last line says how many passed. Touches only the namespaces it makes (multicast
# stays on their bridge); every wait is bounded.
#
# Usage: localsend-receiver.sh BIN_DIR   (needs root, iproute2, python3 with cryptography)
set -euo pipefail
bin=${1:?usage: localsend-receiver.sh BIN_DIR}
tag=hexdlr$$
work=$(mktemp -d /tmp/hexd-localsend-receiver-XXXXXX)
pids=()
label=localsend-receiver
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

make_bridge
join_bridge a 10.73.0.1/24
join_bridge r 10.73.0.2/24
# Multicast leaves by the route to the group: the bridge, in each namespace.
for host in a r; do ip -n "$tag-$host" route add 224.0.0.0/4 dev "s$host$$"; done
start_hexd a
fingerprint_a=$(ctl a status --json | carrier localsend 'c["identity"]')

# The receiver takes hexd's persona as its client certificate (Python's ssl takes no other self-signed one);
# its events go to receiver.log, and a line written to fd 3 switches its mode.
mkfifo "$work/control"
ip netns exec "$tag-r" python3 "$(dirname "$0")/localsend_receiver.py" --address 10.73.0.2 --alias Phone \
    --downloads "$work/received" --trust "$work/a/localsend.crt" --deadline 900 \
    <"$work/control" >"$work/receiver.log" 2>"$work/receiver-stderr.log" &
pids+=($!)
exec 3>"$work/control"

# Every reader below reads the receiver's lines to their end (no grep -q in a pipe: with pipefail, the
# writer it leaves early would fail the pipe).
mark() { wc -l <"$work/receiver.log"; }
since() { tail -n +$(($1 + 1)) "$work/receiver.log"; }
# MARK LINE: whether a receiver's line after MARK is LINE.
saw() { grep -Fqx -- "$2" <<<"$(since "$1")"; }
# MARK WORD: the rest of the first receiver's line after MARK whose first word is WORD.
first() { since "$1" | awk -v word="$2" '$1 == word && !found { found = 1; sub("^[^ ]* ", ""); print }'; }
# MARK REGEX [SECONDS]: waits, at most SECONDS (10), until a receiver's line after MARK is matched by REGEX.
await() {
    local until=$((SECONDS + ${3:-10}))
    until grep -Eqx -- "$2" <<<"$(since "$1")"; do
        [ "$SECONDS" -ge "$until" ] && return 1
        sleep 0.1
    done
}
set_mode() {
    local before
    before=$(mark)
    echo "$*" >&3
    await "$before" "mode $*" 5 || fail "the receiver did not take the mode $*"
}
# The JSON of the first offer after MARK.
offer() { first "$1" prepare; }
# The statuses of the uploads after MARK, in order.
uploads() { since "$1" | awk '$1 == "upload-status" { printf "%s ", $2 }'; }
sha() { sha256sum <"$1" | cut -d' ' -f1; }

await 0 'ready .*' 15 || fail "the receiver did not start"
fingerprint_r=$(first 0 ready | cut -d' ' -f1)

# a. Listed: the receiver's announcement makes hexd register with it.
peers=""
for _ in $(seq 150); do
    peers=$(ctl a peers --json 2>/dev/null || true)
    [[ "$peers" == *"$fingerprint_r"* ]] && break
    sleep 0.1
done
device=$(echo "$peers" | objects 'o.get("kind") == "localsend"' \
    '"|".join((o["name"], o["fingerprint"], o["endpoint"]))')
registered=$(grep -c "^register-from host-a $fingerprint_a proven$" "$work/receiver.log" || true)
[ "$device" = "Phone|$fingerprint_r|10.73.0.2:53317" ] && [ "$registered" -ge 1 ] \
    && pass "a. hexd lists the 1.18 receiver (${fingerprint_r:0:16}…, 10.73.0.2:53317), having registered with it" \
        "showing the certificate it claims" \
    || fail "a. hexd's LocalSend devices: '$device' (the receiver is $fingerprint_r); the receiver's log above"

# b. A link, then a note, each as the app's message: one text/plain file whose preview is the whole text.
is_message() {  # OFFER TEXT
    python3 -c '
import json, sys
files, text = json.loads(sys.argv[1])["files"], sys.argv[2]
sys.exit(not (len(files) == 1 and files[0]["fileType"].startswith("text/") and files[0].get("preview") == text
              and files[0]["size"] == len(text.encode())))' "$1" "$2"
}
message_to_phone() {  # TEXT, then hexctl send's arguments: hexctl's answer, and the receiver's lines checked
    local text=$1 before code=0 sent shown
    shift
    shown="message $(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$text")"
    before=$(mark)
    sent=$(ctl a send --to Phone "$@" 2>&1) || code=$?
    [ "$code" = 0 ] && [[ "$sent" == "received by Phone (10.73.0.2:53317) over TLS"* ]] \
        && is_message "$(offer "$before")" "$text" \
        && saw "$before" "$shown" && saw "$before" 'prepare-status 204' \
        || fail "b. a message of '$text': exit $code, $sent; the receiver: $(since "$before")"
}
message_to_phone https://example.com/from-hexd https://example.com/from-hexd
message_to_phone $'Two links\nhttps://example.com/one\nhttps://example.org/two' -d "Two links" \
    https://example.com/one https://example.org/two
pass "b. a link and a note reached the receiver as the app's message (one text/plain file, the text its" \
    "preview), shown and closed (204); hexctl said received"

# c. Two files shared: whole, offered with their names' MIME types.
mkdir -p "$work/files"
head -c $((3 << 20)) /dev/urandom >"$work/files/photo.jpg"
head -c $((3 << 19)) /dev/urandom >"$work/files/report.pdf"
before=$(mark)
code=0
shared=$(ctl a share --to Phone "$work/files/photo.jpg" "$work/files/report.pdf" 2>&1) || code=$?
types=$(offer "$before" | json '" ".join(sorted(f["fileName"] + "=" + f["fileType"] for f in data["files"]))')
[ "$code" = 0 ] && [[ "$shared" == "received by Phone"*"LocalSend took 2 of 2 files"* ]] \
    && [ "$types" = "photo.jpg=image/jpeg report.pdf=application/pdf" ] \
    && cmp -s "$work/files/photo.jpg" "$work/received/photo.jpg" \
    && cmp -s "$work/files/report.pdf" "$work/received/report.pdf" \
    && pass "c. a photo and a PDF shared landed whole, offered as $types" \
    || fail "c. two files: exit $code, $shared; offered as '$types'; the receiver: $(since "$before")"

# d. Declined: a file (Decline), then a note (the back gesture, the dialog shown).
set_mode decline
head -c $((1 << 20)) /dev/urandom >"$work/files/declined.bin"
before=$(mark)
code=0
shared=$(ctl a share --to Phone "$work/files/declined.bin" 2>&1) || code=$?
[ "$code" = 77 ] && [[ "$shared" == *declined* ]] && saw "$before" 'prepare-status 403' \
    && [ -z "$(uploads "$before")" ] && [ ! -e "$work/received/declined.bin" ] \
    || fail "d. a declined file: exit $code, $shared; the receiver: $(since "$before")"
set_mode back
before=$(mark)
code=0
sent=$(ctl a send --to Phone --timeout 10 https://example.com/dismissed 2>&1) || code=$?
[ "$code" = 77 ] && [[ "$sent" == *"dismissed the message"*"so it was seen"* ]] \
    && saw "$before" 'message "https://example.com/dismissed"' && saw "$before" 'prepare-status 403' \
    && [[ "$(ctl a outbox)" == *empty* ]] \
    && pass "d. declined (403): a shared file was refused (exit 77, declined) and nothing landed; a note dismissed" \
        "by the back gesture was refused as seen (exit 77), not offered again, nothing waits" \
    || fail "d. a note dismissed: exit $code, $sent; outbox: $(ctl a outbox); the receiver: $(since "$before")"

# e. Busy: the note waits; once the receiver is free and announces itself, hexd delivers it at once.
set_mode busy
before=$(mark)
code=0
queued=$(ctl a send --to Phone --timeout 3 https://example.com/while-busy 2>&1) || code=$?
waiting=$(ctl a outbox)
set_mode accept
echo announce >&3
await "$before" 'message "https://example\.com/while-busy"' 15 || true
sleep 1  # a second delivery would land meanwhile
shown=$(since "$before" | grep -cx 'message "https://example.com/while-busy"' || true)
[ "$code" = 75 ] && [[ "$waiting" == *"Phone"*"(HTTP 409)"* ]] \
    && saw "$before" 'prepare-status 409' && [ "$shown" = 1 ] && [[ "$(ctl a outbox)" == *empty* ]] \
    && pass "e. busy (409), a note waited in the outbox (exit 75) and was delivered once when the receiver was free" \
    || fail "e. busy: exit $code, $queued; outbox then: $waiting; shown $shown times; outbox now: $(ctl a outbox);" \
        "the receiver: $(since "$before")"

# f. The receiver's person cancels mid-upload.
set_mode cancel-after $((1 << 20))
head -c $((48 << 20)) /dev/urandom >"$work/files/film.mp4"
before=$(mark)
code=0
shared=$(ctl a share --to Phone "$work/files/film.mp4" 2>&1) || code=$?
await "$before" 'after-cancel .*' 60 || true
cancelled=$(first "$before" cancelled-sent)
seconds=$(first "$before" after-cancel | cut -d' ' -f3)
if [ "$cancelled" = 200 ] && [ -n "$(first "$before" upload-cut)" ] \
    && python3 -c "import sys; sys.exit(not 0 <= float('${seconds:-99}') <= 2)" \
    && [ ! -e "$work/received/film.mp4" ] && [ "$code" = 77 ] && [[ "$shared" == *cancel* ]] \
    && [[ "$shared" != *declin* ]]; then
    pass "f. the receiver's person cancelled after 1 MiB: hexd answered 200, ended the upload ${seconds} s later," \
        "and hexctl said the device cancelled (exit 77): $shared"
else
    fail "f. cancelled by the receiver's person: hexd answered the cancel '$cancelled'; hexctl: exit $code," \
        "$shared; the receiver: $(since "$before")"
fi

# g. A checksum mismatch: uploaded again with the same token, and it lands; three times, hexd stops.
set_mode corrupt 1
head -c $((2 << 20)) /dev/urandom >"$work/files/scan.png"
before=$(mark)
code=0
shared=$(ctl a share --to Phone "$work/files/scan.png" 2>&1) || code=$?
offered=$(offer "$before" | json '(data["files"][0].get("sha256") or "none").lower()')
statuses=$(uploads "$before")
[ "$offered" = "$(sha "$work/files/scan.png")" ] && [ "$statuses" = "422 200 " ] && [ "$code" = 0 ] \
    && cmp -s "$work/files/scan.png" "$work/received/scan.png" \
    || fail "g. a file altered once: offered SHA-256 $offered (the file's is $(sha "$work/files/scan.png"));" \
        "uploads answered '$statuses'; hexctl: exit $code, $shared; the receiver: $(since "$before")"
set_mode corrupt 3
head -c $((1 << 20)) /dev/urandom >"$work/files/scan2.png"
before=$(mark)
code=0
shared=$(ctl a share --to Phone "$work/files/scan2.png" 2>&1) || code=$?
statuses=$(uploads "$before")
[ "$statuses" = "422 422 422 " ] && [ "$code" = 77 ] && [[ "$shared" == *422* || "$shared" == *[Cc]hecksum* ]] \
    && [ ! -e "$work/received/scan2.png" ] \
    && pass "g. a checksum mismatch (422): hexd offered the SHA-256, sent the file again and it landed; after" \
        "three 422s it stopped and said so (exit 77)" \
    || fail "g. a file altered three times: uploads answered '$statuses'; hexctl: exit $code, $shared;" \
        "the receiver: $(since "$before")"
echo "$label: $passed passed, 0 failed"
