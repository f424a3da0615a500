#!/usr/bin/env bash
# Builds the libFuzzer targets (Tests/Fuzz) with AddressSanitizer and runs each for a bounded
# time, seeded from Examples/envelopes and a few beacons and control requests. A crash, a leak
# report or a broken read-back property fails the run and leaves the input in the work folder.
#
# Usage: Tests/fuzz.sh [seconds per target, default 60]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
work=$(mktemp -d "${TMPDIR:-/tmp}/hexd-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

targets=(FuzzEnvelope FuzzBeacon FuzzControlRequest FuzzHTTPRequest FuzzDBusMessage FuzzDNSMessage FuzzLocalSend
    FuzzKDEConnect FuzzQuickShare)
flags=(-c release --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -use-ld=lld)
# A failed build fails the run: fuzzing a stale binary left in .build-fuzz proves nothing.
for target in "${targets[@]}"; do
    if ! HEXD_FUZZ=1 swift build "${flags[@]}" --product "$target" >"$work/build.log" 2>&1; then
        echo "fuzz: building $target FAILED:"
        grep -vE "Cannot export local symbol|^\[" "$work/build.log" | tail -40
        exit 1
    fi
done
bin=$(HEXD_FUZZ=1 swift build "${flags[@]}" --show-bin-path)

for target in "${targets[@]}"; do mkdir -p "$work/seeds/$target"; done
cp Examples/envelopes/*.envelope "$work/seeds/FuzzEnvelope/"
printf '%s' '{"capabilities":["ack"],"format":"hexd-beacon/1","instance":"0C0E7A52-2B5C-4F6B-8C1E-9A4D2E6F7B10","interval":2,"kind":"announce","name":"Ada","peer":"6F9619FF-8B86-4011-B42D-00C04FC964FF","port":18521,"versionID":"2.0.0"}' > "$work/seeds/FuzzBeacon/announce"
printf '%s' '{"capabilities":[],"format":"hexd-beacon/1","instance":"0C0E7A52-2B5C-4F6B-8C1E-9A4D2E6F7B10","interval":0.5,"kind":"bye","name":"","peer":"6F9619FF-8B86-4011-B42D-00C04FC964FF","port":1,"versionID":"1.0"}' > "$work/seeds/FuzzBeacon/bye"
printf '%s' '{"command":"send","to":"grace","links":[{"url":"https://example.com","service":"Dropbox"}],"timeout":2.5,"wait":true}' > "$work/seeds/FuzzControlRequest/send"
printf '%s' '{"command":"inbox.list","limit":50,"after":"9B516502-0000-4000-8000-000000000000"}' > "$work/seeds/FuzzControlRequest/list"
printf '%s' '{"ok":true,"status":{"peerUUID":"A","name":"n","versionID":"2","legacy":false,"tcpPort":1,"discoveryPort":2,"dataDirectory":"/d","peers":0,"inbox":0,"unchecked":0,"hexlist":0,"datagramsReceived":0,"datagramsMalformed":0,"datagramsOversized":0,"datagramsRateLimited":0,"peersEvicted":0,"datagramsForged":0,"datagramsReplayed":0,"connections":{"open":1,"accepted":2,"refusedPerAddress":0,"closedForRoom":0,"closedAtDeadline":1,"cutOffForPartialLines":0,"closedForLongLines":0,"closedInHandshake":0}}}' > "$work/seeds/FuzzControlRequest/status"

# LocalSend: an announcement, and a message offered in prepare-upload.
printf '%s' '{"alias":"Nice Orange","version":"2.2","deviceModel":"Pixel 8","deviceType":"mobile","fingerprint":"A1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8F90","port":53317,"protocol":"https","download":false,"announce":true}' > "$work/seeds/FuzzLocalSend/announce"
printf '%s' '{"info":{"alias":"P","version":"2.1","deviceModel":null,"deviceType":"mobile","fingerprint":"f","port":53317,"protocol":"https","download":false},"files":{"a":{"id":"a","fileName":"a.txt","size":5,"fileType":"text/plain","preview":"hello"},"b":{"id":"b","fileName":"b.jpg","size":9,"fileType":"image/jpeg","sha256":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}}}' > "$work/seeds/FuzzLocalSend/prepare-upload"
printf '%s' '{"sessionId":"s-1","files":{"a":"t-1","b":"t-2"}}' > "$work/seeds/FuzzLocalSend/session"

# KDE Connect: an identity as 22.12 broadcasts it, a URL share, a file share, a pairing request.
printf '%s' '{"body":{"deviceId":"_8bac2e5f_965d_4fa4_b4ac_247d1b8170e8_","deviceName":"lab-a","deviceType":"desktop","incomingCapabilities":["kdeconnect.ping","kdeconnect.share.request"],"outgoingCapabilities":["kdeconnect.share.request"],"protocolVersion":7,"tcpPort":1716},"id":"1795737687735","type":"kdeconnect.identity"}' > "$work/seeds/FuzzKDEConnect/identity"
printf '%s' '{"id":1764198000123,"type":"kdeconnect.share.request","body":{"url":"https://example.com/a?b=c"}}' > "$work/seeds/FuzzKDEConnect/url"
printf '%s' '{"body":{"creationTime":1,"filename":"testfile.txt","lastModified":2,"numberOfFiles":1,"open":false,"totalPayloadSize":19},"id":"3","payloadSize":19,"payloadTransferInfo":{"port":1739},"type":"kdeconnect.share.request"}' > "$work/seeds/FuzzKDEConnect/file"
printf '%s' '{"id":5,"type":"kdeconnect.pair","body":{"pair":true,"timestamp":1764198000}}' > "$work/seeds/FuzzKDEConnect/pair"

# The first byte picks the size of the pieces the request arrives in.
printf '%s' $'\x05GET /?token=abc HTTP/1.1\r\nHost: 127.0.0.1:18522\r\nCookie: a=b; hexd_session_18522=x\r\n\r\n' \
    > "$work/seeds/FuzzHTTPRequest/login"
printf '%s' $'\x07HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\n3\r\n:1}\r\n0\r\n\r\n' \
    > "$work/seeds/FuzzHTTPRequest/chunked-response"
printf '%s' $'\x11POST /control HTTP/1.1\r\nHost: localhost:18522\r\nOrigin: http://localhost:18522\r\n' \
    $'Content-Length: 20\r\n\r\n{"command":"status"}' > "$work/seeds/FuzzHTTPRequest/control"
# An upload streamed as LocalSend 1.18 sends it: chunked, an extension and a trailer besides.
printf '%s' $'\x03POST /api/localsend/v2/upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n' \
    $'5;e=1\r\nhello\r\nA\r\n, chunked!\r\n0\r\nX-Trailer: t\r\n\r\n' > "$work/seeds/FuzzHTTPRequest/chunked-upload"
printf '%s' $'\x025\r\nhello\r\n1F\r\n'"$(printf '%031d' 0)"$'\r\n0\r\n\r\n' > "$work/seeds/FuzzHTTPRequest/chunked-body"
# D-Bus: a Hello's answer and a signal with a dictionary of variants, marshalled by Python.
python3 - "$work/seeds/FuzzDBusMessage" <<'PYTHON'
import struct, sys
def pad(b, n): return b + bytes(-len(b) % n)
def string(b, s): b = pad(b, 4); e = s.encode(); return b + struct.pack("<I", len(e)) + e + b"\0"
def sig(b, s): return b + bytes([len(s)]) + s.encode() + b"\0"
def message(kind, fields, signature, body):
    header = b""
    for code, type_, value in fields + ([(8, "g", signature)] if signature else []):
        header = pad(header, 8) + bytes([code])
        header = sig(header, type_)
        if type_ in "so":
            header = string(header, value)
        elif type_ == "g":
            header = sig(header, value)
        else:
            header = pad(header, 4) + struct.pack("<I", value)
    fixed = b"l" + bytes([kind, 0, 1]) + struct.pack("<III", len(body), 7, len(header))
    return pad(fixed + header, 8) + body
hello = message(2, [(5, "u", 1), (6, "s", ":1.42"), (7, "s", "org.freedesktop.DBus")], "s", string(b"", ":1.42"))
entry = pad(string(b"", "urgency"), 1); entry = sig(entry, "y") + b"\x01"
body = struct.pack("<I", len(entry)) + bytes(4) + entry
signal = message(4, [(1, "o", "/org/freedesktop/Notifications"), (2, "s", "org.freedesktop.Notifications"),
                     (3, "s", "ActionInvoked")], "a{sv}", body)
for name, data in (("hello-reply", hello), ("signal", signal)):
    open(f"{sys.argv[1]}/{name}", "wb").write(data)
PYTHON
# mDNS: a DNS-SD browse query with a known answer, and a response whose names point back.
python3 - "$work/seeds/FuzzDNSMessage" <<'PYTHON'
import struct, sys
def name(*labels): return b"".join(bytes([len(l)]) + l.encode() for l in labels) + b"\0"
service = name("_hexd", "_tcp", "local")
query = struct.pack(">6H", 0, 0, 1, 1, 0, 0) + service + struct.pack(">HH", 12, 1)
query += b"\xc0\x0c" + struct.pack(">HHIH", 12, 1, 4500, 6) + b"\x03Ada\xc0\x0c"
txt = b"".join(bytes([len(s)]) + s for s in (b"id=6F9619FF-8B86-8011-B42D-00C04FC964FF", b"v=2.0.0"))
response = struct.pack(">6H", 0, 0x8400, 0, 4, 0, 0)
response += service + struct.pack(">HHIH", 12, 1, 4500, 6) + b"\x03Ada\xc0\x0c"
response += b"\xc0\x28" + struct.pack(">HHIH", 33, 0x8001, 120, 6 + 5 + 2) + struct.pack(">3H", 0, 0, 18521)
response += b"\x04host\xc0\x17"
response += b"\xc0\x28" + struct.pack(">HHIH", 16, 0x8001, 4500, len(txt)) + txt
response += b"\xc0\x40" + struct.pack(">HHIH", 1, 0x8001, 120, 4) + bytes([10, 0, 0, 7])
for file, data in (("query", query), ("response", response)):
    open(f"{sys.argv[1]}/{file}", "wb").write(data)
PYTHON
python3 - "$work/seeds/FuzzQuickShare" Tests/quickshare/vectors.txt <<'PYTHON'
import sys
out = sys.argv[1]
vectors = dict(line.split(" = ", 1) for line in open(sys.argv[2]).read().splitlines() if " = " in line)
def varint(n): return bytes([n & 0x7F | 0x80]) + varint(n >> 7) if n >= 0x80 else bytes([n])
def field(number, value):  # an int is a varint, bytes are length-delimited
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    return varint(number << 3 | 2) + varint(len(value)) + value
def frame(type_, number, body): return field(1, 1) + field(2, field(1, type_) + field(number, body))
def chunk(id_, body, size, flags, offset):  # an offline frame: one chunk of the BYTES payload `id_`
    header = field(1, id_) + field(2, 1) + field(3, size)
    return frame(3, 4, field(1, 1) + field(2, header) + field(3, field(1, flags) + field(2, offset) + field(3, body)))
def payload(id_, body):  # a BYTES payload as Android sends it: its bytes, then an empty last chunk
    return [chunk(id_, body, len(body), 0, 0), chunk(id_, b"", len(body), 1, len(body))]
info = bytes([6]) + bytes(16) + bytes([4]) + b"Desk"
seeds = {
    "request": b"\0" + frame(1, 2, field(1, b"ABCD") + field(5, 5) + field(6, info) + field(8, 5000)),
    "keep-alive": b"\0" + frame(5, 6, field(1, 1)),
    "chunk": b"\0" + frame(3, 4, field(1, 1) + field(2, field(1, 7) + field(2, 2) + field(3, 5))
                             + field(3, field(1, 0) + field(2, 0) + field(3, b"hello"))),
    "introduction": b"\1" + frame(1, 2, field(2, field(2, b"t") + field(3, 2) + field(4, 9) + field(6, 1))
                                   + field(1, field(1, b"a.jpg") + field(3, 7) + field(5, b"image/jpeg"))),
    "ukey2": b"\2" + bytes.fromhex(vectors["set1_client_init"]) + b"\xff"
             + bytes.fromhex(vectors["set1_client_finish"]),
    "secure": b"\3" + bytes.fromhex(vectors["set1_c2s_secure_message"]),
    # Offline frames for the receiver past its handshake, each after its 2-byte length: the paired-key
    # exchange, an offer of a URL, its payload.
    "session": b"\5" + b"".join(len(f).to_bytes(2, "big") + f for f in
        payload(9, frame(3, 4, field(1, bytes(72)) + field(2, bytes(6))))
        + payload(10, frame(4, 5, field(1, 3)))
        + payload(11, frame(1, 2, field(2, field(2, b"t") + field(3, 2) + field(4, 12) + field(5, 11))))
        + payload(12, b"https://a.b")),
    "endpoint": b"\4" + info,
    "key": b"\6" + bytes.fromhex(vectors["set1_client_generic_public_key"]),
}
for name, data in seeds.items():
    open(f"{out}/{name}", "wb").write(data)
PYTHON
failed=0
for target in "${targets[@]}"; do
    mkdir -p "$work/corpus/$target"
    log="$work/$target.log"
    # -rss_limit_mb: one input must not cost the reader much memory (ASan's own overhead included).
    if ! (cd "$work" && "$bin/$target" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 \
            "corpus/$target" "seeds/$target" >"$log" 2>&1); then
        failed=1
        echo "fuzz: $target FAILED; its last lines:"
        tail -40 "$log"
        mkdir -p .build-fuzz/findings && cp "$work"/crash-* "$work"/leak-* "$work"/oom-* .build-fuzz/findings/ 2>/dev/null || true
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    echo "fuzz: $target: ${runs:-?} executions in ${seconds} s (${rate:-?}/s), corpus $(ls "$work/corpus/$target" | wc -l) inputs"
done
exit "$failed"
