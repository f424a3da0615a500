#!/usr/bin/env bash
# hexd as a LocalSend device, against PyPI's localsend-cli 0.1.1 (a scanner, sender and receiver hexd
# did not write: LocalSend protocol 2.0, HTTPS, no client certificate, its port fixed at 53317),
# driven as its user would drive it, in network namespaces on one bridge (10.70.0.0/24):
#   - discovery: localsend-cli scan --json on host b lists host-a at 10.70.0.1:53317, with the
#     fingerprint host-a's status shows (the scan's JSON has none: the one host-a gave it is read
#     from the same run);
#   - localsend-cli receive --json on host b (alias localsend-cli@devB): host-a lists it as a
#     LocalSend device, version 2.0, at 10.70.0.2:53317 with its certificate's fingerprint, and the
#     receiver says host-a registered with it;
#   - hexctl send --to localsend-cli@devB https://example.com/x: delivered (exit 0, "received by"),
#     the receiver got the text (a text file it takes as an upload);
#   - hexctl share --to localsend-cli@devB with a 5 MiB file: exit 0, the file lands in the
#     receiver's output folder, SHA-256 equal;
#   - localsend-cli send 10.70.0.1 FILE --port 53317 --json from host b (no client certificate): the
#     file lands in host-a's downloads folder, SHA-256 equal, and the newest hex in host-a's inbox
#     links to it (file://) and names no sender ID (a sender that shows no certificate is not
#     identified).
# Each check is counted; the last line says how many passed. Touches only the namespaces it makes;
# every wait is bounded.
#
# Usage: localsend-cli.sh BIN_DIR   (needs root, iproute2, util-linux's unshare, python3 with
#        localsend-cli 0.1.1 and requests)
set -euo pipefail
bin=${1:?usage: localsend-cli.sh BIN_DIR}
tag=hexdlc$$
work=$(mktemp -d /tmp/hexd-localsend-cli-XXXXXX)
pids=()
label=localsend-cli
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

# localsend-cli imports requests and cryptography without declaring them.
if ! python3 -c "import localsend_cli.main, importlib.metadata as m; assert m.version('localsend-cli') == '0.1.1'"; then
    echo "$label: FAILED: localsend-cli 0.1.1 (pip install localsend-cli==0.1.1), requests or cryptography is missing"
    exit 1
fi

make_bridge
join_bridge a 10.70.0.1/24
join_bridge b 10.70.0.2/24
# Multicast leaves by the route to the group: the bridge, in each namespace.
for host in a b; do ip -n "$tag-$host" route add 224.0.0.0/4 dev "s$host$$"; done

# localsend-cli on host b: its user's home (its certificate is kept in ~/.config/localsend-cli), and
# a host name of its own in a UTS namespace, as its alias is "localsend-cli@" and the host name. Its
# sender turns verification off on its requests session, which a CA bundle named in the environment
# overrides (requests takes REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE over Session.verify): none is
# named, and no proxy is asked.
on_b=(env -u REQUESTS_CA_BUNDLE -u CURL_CA_BUNDLE NO_PROXY='*' no_proxy='*' HOME="$work/cli-home"
    ip netns exec "$tag-b" unshare --uts sh -c 'echo devB >/proc/sys/kernel/hostname && exec "$@"' sh)
entry='import sys; from localsend_cli.main import main; sys.exit(main())'  # its console script's
alias_b=localsend-cli@devB

start_hexd a

fingerprint_a=$(ctl a status --json | carrier localsend 'c["identity"]')
port_a=$(ctl a status --json | carrier localsend 'c["port"]')
[ "$port_a" = 53317 ] || fail "host-a serves LocalSend on $port_a, not 53317"
# localsend-cli's certificate, made as its first command would make it, and its fingerprint.
fingerprint_cli=$("${on_b[@]}" python3 -c 'from localsend_cli.crypto import get_fingerprint; print(get_fingerprint())' \
    | tail -1)

# 1. localsend-cli scan --json: one announcement, then what answers within its timeout. Its JSON
# names no fingerprint, so the run records the devices it found (keyed by the fingerprint each gave)
# and prints them after its own output.
scan() {
    "${on_b[@]}" timeout 20 python3 -c '
import json, sys
from localsend_cli.commands import scan
from localsend_cli.main import main
found = []
start = scan.ScanHTTPServer.__init__
def recording(self, *args, **kwargs):
    found.append(kwargs["found_devices"])
    start(self, *args, **kwargs)
scan.ScanHTTPServer.__init__ = recording
sys.argv = ["localsend-cli", "scan", "--json", "--timeout", "3"]
main()
for devices in found:
    for fingerprint, device in devices.items():
        print(json.dumps({"found": device.get("alias"), "fingerprint": fingerprint}))' 2>&1 || true
}
scanned=""
for _ in 1 2 3; do
    scanned=$(scan)
    [[ "$scanned" == *'"alias": "host-a"'* ]] && break
done
listed=$(objects 'o.get("alias") == "host-a"' 'o["ip"], o["port"]' <<<"$scanned")
given=$(objects 'o.get("found") == "host-a"' 'o["fingerprint"].lower()' <<<"$scanned")
[ "$listed" = "10.70.0.1 53317" ] && [ "$given" = "${fingerprint_a,,}" ] \
    && pass "localsend-cli scan lists host-a at 10.70.0.1:53317 with the fingerprint host-a's status shows" \
    || fail "localsend-cli scan: '$listed', fingerprint '$given' (host-a's is $fingerprint_a): $scanned"

# 2. localsend-cli receive on host b: host-a lists it, proven by its certificate, version 2.0. The
# scan, with the same certificate, may have had host-a list it already: host-a must also have
# registered with the receiver (which announces itself every 5 s), as the receiver says.
mkdir -p "$work/received"
events="$work/receiver-events.log"
"${on_b[@]}" python3 -c "$entry" receive --json --output "$work/received" >"$events" 2>"$work/receiver.log" &
pids+=($!)
peers=""
device=""
registered=""
for _ in $(seq 150); do
    peers=$(ctl a peers --json 2>/dev/null || true)
    device=$(objects 'o.get("kind") == "localsend"' \
        '"|".join(str(o.get(k)) for k in ("name", "versionID", "endpoint")) + "|" + o["fingerprint"].lower()' \
        <<<"$peers")
    registered=$(objects 'o.get("event") == "device"' 'o["alias"], o["ip"]' <"$events")
    [ -n "$device" ] && [ -n "$registered" ] && break
    sleep 0.1
done
[ "$device" = "$alias_b|2.0|10.70.0.2:53317|$fingerprint_cli" ] && [ "$registered" = "host-a 10.70.0.1" ] \
    && pass "host-a lists the receiver as a LocalSend device: $alias_b, 2.0, 10.70.0.2:53317," \
        "fingerprint ${fingerprint_cli:0:16}…, and the receiver says host-a registered" \
    || fail "host-a's LocalSend devices: '$device' (the receiver's fingerprint is $fingerprint_cli)," \
        "the receiver registered '$registered'; peers: $peers"

# 3. A link through host-a's outbox: one text file, which the receiver takes as an upload.
code=0
sent=$(ctl a send --to "$alias_b" --timeout 20 https://example.com/x 2>&1) || code=$?
text=""
for _ in $(seq 50); do
    text=$(objects 'o.get("event") == "text"' 'o["sender"] + "|" + o["text"]' <"$events")
    [ -n "$text" ] && break
    sleep 0.1
done
[ "$code" = 0 ] && [[ "$sent" == "received by $alias_b (10.70.0.2:53317)"* ]] \
    && [ "$text" = "host-a|https://example.com/x" ] \
    && pass "hexctl send --to $alias_b: delivered ($sent), the receiver got the text from host-a" \
    || fail "hexctl send --to $alias_b: exit $code, $sent; the receiver's text: '$text'"

# 4. A 5 MiB file shared with the receiver: the file itself lands in its output folder.
head -c $((5 << 20)) /dev/urandom >"$work/to the receiver.bin"
code=0
shared=$(ctl a share --to "$alias_b" "$work/to the receiver.bin" 2>&1) || code=$?
landed="$work/received/to the receiver.bin"
saved=$(objects 'o.get("event") == "saved"' 'o["path"], o["sender"]' <"$events")
[ "$code" = 0 ] && [[ "$shared" == "received by $alias_b"*"LocalSend took 1 of 1 files (5.0 MiB)"* ]] \
    && [ -f "$landed" ] && [ "$(sha256sum <"$landed")" = "$(sha256sum <"$work/to the receiver.bin")" ] \
    && [ "$saved" = "$landed host-a" ] \
    && pass "hexctl share --to $alias_b: a 5 MiB file landed in the receiver's folder, SHA-256 equal" \
    || fail "hexctl share --to $alias_b: exit $code, $shared; saved: '$saved'; $(ls -la "$work/received" 2>&1)"

# 5. localsend-cli send to host-a: no client certificate, so the hex names no sender.
head -c $((5 << 20)) /dev/urandom >"$work/from cli.bin"
code=0
cli_sent=$("${on_b[@]}" timeout 60 python3 -c "$entry" send 10.70.0.1 "$work/from cli.bin" --port 53317 --json 2>&1) \
    || code=$?
landed="$work/a/downloads/from cli.bin"
uploaded=$(objects 'o.get("event") in ("sent", "error")' 'o["event"]' <<<"$cli_sent")
newest=""
for _ in $(seq 50); do  # the hex is stored when the session's last upload ends
    newest=$(ctl a inbox --json --limit 1 2>/dev/null || true)
    [[ "$newest" == *'"from cli.bin"'* ]] && break
    sleep 0.1
done
# The list counts a hex's links; show --full gives them.
shown=$(ctl a inbox show --full --json "$(objects 'True' 'o["id"]' <<<"$newest")" 2>&1 || true)
hex=$(objects 'True' '" ".join(l["url"] for l in o.get("links", [])) + "|" + (o.get("senderUUID") or "none")' \
    <<<"$newest"$'\n'"$shown")
[ "$code" = 0 ] && [ "$uploaded" = sent ] && [ -f "$landed" ] \
    && [ "$(sha256sum <"$landed")" = "$(sha256sum <"$work/from cli.bin")" ] \
    && [ "$hex" = "|none"$'\n'"file://$work/a/downloads/from%20cli.bin|none" ] \
    && pass "localsend-cli send: a 5 MiB file landed in host-a's downloads, SHA-256 equal," \
        "the newest hex links to it and names no sender ID" \
    || fail "localsend-cli send: exit $code, $cli_sent; downloads: $(ls -la "$work/a/downloads" 2>&1);" \
        "newest hex: $newest; shown: $shown"

echo "$label: $passed passed, 0 failed"
