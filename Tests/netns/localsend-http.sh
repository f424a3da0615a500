#!/usr/bin/env bash
# LocalSend devices whose encryption is off (they announce `protocol: http`), against PyPI's
# localsendd run with --no-encryption, in network namespaces on one bridge:
#   - host-a (hexd, as installed) lists devH as a LocalSend device with no key, under an ID of its
#     own kind (localsend-http:…), which proves nothing;
#   - host-a refuses to send devH anything, saying why and how to allow it, and queues nothing;
#   - host-c (hexd --localsend-http on) sends devH a link over plain HTTP and says so, and shares
#     a 5 MiB file with it (SHA-256 equal at devH);
#   - devH sends host-a a note (a text file) over host-a's HTTPS API: kept as the file, and a hex
#     linking it and the address in it, naming no sender ID (nothing proved one).
# Each check is counted; the last line says how many passed. Touches only the namespaces it makes;
# every wait is bounded.
#
# Usage: localsend-http.sh BIN_DIR   (needs root, iproute2, python3 with localsendd 0.1.1)
set -euo pipefail
bin=${1:?usage: localsend-http.sh BIN_DIR}
tag=hexdlh$$
work=$(mktemp -d /tmp/hexd-localsend-http-XXXXXX)
pids=()
label=localsend-http
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

if ! python3 -c "import localsendd"; then
    echo "$label: FAILED: localsendd is not installed (pip install localsendd)"
    exit 1
fi

make_bridge
join_bridge a 10.69.0.1/24
join_bridge c 10.69.0.3/24
join_bridge h 10.69.0.8/24
for host in a c h; do ip -n "$tag-$host" route add 224.0.0.0/4 dev "s$host$$"; done

start_localsendd h devH --no-encryption

start_hexd a
start_hexd c --localsend-http on

# Both daemons list devH: a LocalSend device with no key, under a localsend-http: ID.
devices=""
for _ in $(seq 150); do
    devices=$(ctl a peers --json 2>/dev/null | objects 'o.get("kind") == "localsend"' 'o["uuid"], o.get("fingerprint")')
    listed_c=$(ctl c peers 2>/dev/null || true)
    [[ "$devices" == *"localsend-http:"* && "$listed_c" == *devH* ]] && break
    sleep 0.1
done
table=$(ctl a peers)
[[ "$devices" == "localsend-http:"*" None" ]] && [[ "$table" == *devH*"(plaintext)"* ]] \
    && pass "host-a lists devH (encryption off) as a LocalSend device with no key: ${devices%% *}" \
    || fail "host-a's LocalSend devices: '$devices'; table: $table"
id_devh=${devices%% *}

in_downloads() {  # the files in devH's downloads that hold exactly $1
    for file in "$work"/lsd-downloads/*; do [ -f "$file" ] && [ "$(cat "$file")" = "$1" ] && echo "$file"; done
    true
}

# host-a has not been told to send plain HTTP: refused at once, nothing queued, nothing sent.
code=0
refused=$(ctl a send --to devH https://example.com/not-sent 2>&1) || code=$?
[ "$code" = 77 ] && [[ "$refused" == *"encryption off"*"--localsend-http on"* ]] && [[ "$(ctl a outbox)" == *empty* ]] \
    && [ -z "$(in_downloads https://example.com/not-sent)" ] \
    && pass "host-a refuses to send devH plain HTTP (exit 77), says how to allow it, and queues nothing" \
    || fail "a send from host-a to devH: exit $code, $refused; outbox: $(ctl a outbox)"

# host-c is: a link reaches devH over plain HTTP, and the answer says so.
sent=$(ctl c send --to devH https://example.com/plain 2>&1 || true)
for _ in $(seq 50); do [ -n "$(in_downloads https://example.com/plain)" ] && break; sleep 0.1; done
[[ "$sent" == "received by devH (10.69.0.8:53317)"*"over plain HTTP"* ]] \
    && [ -n "$(in_downloads https://example.com/plain)" ] \
    && pass "host-c (--localsend-http on) sent devH a link over plain HTTP, and said so: $sent" \
    || fail "a link from host-c to devH: $sent; devH's downloads: $(ls "$work/lsd-downloads" 2>&1)"
sent=$(ctl c send --to "$id_devh" https://example.com/by-id 2>&1 || true)
[[ "$sent" == "received by devH"* ]] && pass "devH's full ID names it too" || fail "a send by ID: $sent"

head -c $((5 << 20)) /dev/urandom >"$work/plain.bin"
shared=$(ctl c share --to devH "$work/plain.bin" 2>&1 || true)
[[ "$shared" == "received by devH"*"LocalSend took 1 of 1 files (5.0 MiB), over plain HTTP"* ]] \
    && [ "$(sha256sum <"$work/lsd-downloads/plain.bin")" = "$(sha256sum <"$work/plain.bin")" ] \
    && pass "host-c shared a 5 MiB file with devH over plain HTTP, SHA-256 equal at devH" \
    || fail "a file to devH: $shared; devH's downloads: $(ls "$work/lsd-downloads" 2>&1)"

# devH sends host-a a note, over host-a's HTTPS API: kept as a file, the hex naming no sender ID.
printf 'from a plain device: https://example.com/from-devh\n' >"$work/note.txt"
sent=$(lsctl send "$work/note.txt" --to host-a --wait 2>&1 | grep -ao "Last result: .*" || true)
shown=$(ctl a inbox show --full --json "$(ctl a inbox --json --limit 1 | json 'data["id"]')")
link=$(echo "$shown" | json '" ".join(link["url"] for link in data["links"])')
[ "$link" = "file://$work/a/downloads/note.txt https://example.com/from-devh" ] \
    && [[ "$shown" != *'"senderUUID":"localsend'* ]] \
    && pass "devH's note landed in host-a's inbox, naming no sender ID" \
    || fail "devH's note: $sent; host-a's newest hex: $shown"

echo "$label: $passed passed, 0 failed"
