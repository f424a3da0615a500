#!/usr/bin/env bash
# hexd as a LocalSend device, against PyPI's localsend 0.1.2 (a LocalSend protocol 2.1 library hexd did
# not write: HTTPS with a certificate of its own, no client certificate, its port 53317), in network
# namespaces on one bridge (10.71.0.0/24). It needs Python 3.12 or later; its `localsend` command
# needs the extras localsend[cli], and saves to the user's downloads folder, so the test drives its
# library as that command does (create_app, callbacks.accept, callbacks.new_device, uploader.upload):
#   - a receiver on host b (alias localsend-py, files saved to a folder): host-a lists it as a
#     LocalSend device, version 2.1, at 10.71.0.2:53317 with its certificate's fingerprint, and the
#     receiver heard from host-a (its new_device callback);
#   - hexctl send --to localsend-py https://example.com/py: delivered (exit 0, "received by"), the
#     receiver was offered message.txt with the text as its preview and saved that text;
#   - hexctl share --to localsend-py with a 5 MiB file: exit 0, the file lands in the receiver's
#     folder, SHA-256 equal;
#   - the library's sender on host c (alias localsend-py-sender) sends host-a a text message (its
#     uploader.upload with one text/plain file whose preview is the text, as the apps send one):
#     host-a answers prepare-upload 204 (Protocol.md 16.3), and the newest hex in host-a's inbox has
#     the text as its description and the address in it as its link, naming no sender ID;
#   - the same sender uploads a 1 MiB file: the library streams a file's body chunked (no
#     Content-Length), 4 KiB a chunk, as LocalSend 1.18 does; host-a answers 200, the file lands
#     whole in host-a's downloads (SHA-256 equal, no partial file left), and the newest hex names it.
# The library announces itself once, as soon as its server has started and before that server
# listens: host-a's register would be refused and wait for host-a's next announcement (30 s). The test
# holds the library's announcement until its server takes connections (at most 10 s).
# Each check is counted; the last line says how many passed. Touches only the namespaces it makes
# (hosts b and c have a default route to 10.71.0.254, which nobody holds: the library looks for its
# multicast interface by the default gateway's); every wait is bounded.
#
# Usage: localsend-py.sh BIN_DIR   (needs root, iproute2, a Python 3.12 or later with localsend 0.1.2:
#        HEXD_PY312, else the first of pyenv's 3.12 and later versions, python3.12, python3.13,
#        python3.14, python3 that is one)
#        localsend-py.sh --python   prints that interpreter (exit 1 when there is none)
set -euo pipefail

find_python() {
    local candidates=("${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3 python3.12 python3.13 python3.14
        python3)
    [ -n "${HEXD_PY312:-}" ] && candidates=("$HEXD_PY312")
    for candidate in "${candidates[@]}"; do
        command -v "$candidate" >/dev/null 2>&1 || continue
        if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}
if [ "${1:-}" = --python ]; then find_python; exit; fi

bin=${1:?usage: localsend-py.sh BIN_DIR}
tag=hexdlp$$
work=$(mktemp -d /tmp/hexd-localsend-py-XXXXXX)
pids=()
label=localsend-py
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

if ! py=$(find_python); then
    echo "$label: FAILED: ${HEXD_PY312:+HEXD_PY312 ($HEXD_PY312) is }no Python 3.12 or later, which localsend 0.1.2" \
        "needs (set HEXD_PY312, or install one)"
    exit 1
fi
if ! "$py" -c "import localsend, importlib.metadata as m; assert m.version('localsend') == '0.1.2'"; then
    echo "$label: FAILED: localsend 0.1.2 is not importable by $py ($py -m pip install localsend==0.1.2)"
    exit 1
fi

make_bridge
join_bridge a 10.71.0.1/24
join_bridge b 10.71.0.2/24
join_bridge c 10.71.0.3/24
# Multicast leaves by the route to the group: the bridge, in each namespace. The library asserts that
# a default gateway exists (multicast_expert finds its interface by it): one nobody holds.
for host in a b c; do ip -n "$tag-$host" route add 224.0.0.0/4 dev "s$host$$"; done
for host in b c; do ip -n "$tag-$host" route add default via 10.71.0.254 dev "s$host$$"; done

# The library keeps its key, certificate and alias in the XDG folders (platformdirs): one home a host.
# Always run in a subshell (in the background, or for its output): `exec` makes the subshell the
# program, so that the PID the script keeps is the one its cleanup stops.
on() {
    local host=$1
    shift
    exec env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy \
        NO_PROXY='*' no_proxy='*' HOME="$work/$host-home" XDG_STATE_HOME="$work/$host-home/state" \
        XDG_CONFIG_HOME="$work/$host-home/config" XDG_CACHE_HOME="$work/$host-home/cache" \
        XDG_RUNTIME_DIR="$work/$host-home/run" ip netns exec "$tag-$host" "$@"
}
mkdir -p "$work/b-home/run" "$work/c-home/run"
chmod 700 "$work/b-home/run" "$work/c-home/run"

start_hexd a

port_a=$(ctl a status --json | carrier localsend 'c["port"]')
[ "$port_a" = 53317 ] || fail "host-a serves LocalSend on $port_a, not 53317"

# The library's configuration (its command reads one from a file and the environment): an alias.
config='{"info": {"alias": sys.argv[2]}}'
# The library's announcement, held until its server takes connections (both snippets start with it).
hold='
import asyncio, socket
import localsend.tasks
announce = localsend.tasks.multicast.send
async def held(config, info):
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", info.port), timeout=1).close()
            break
        except OSError:
            await asyncio.sleep(0.1)
    await announce(config, info)
localsend.tasks.multicast.send = held'
# The receiver: prints a JSON line for each device it hears from and each file it is offered, and
# saves each file it is offered in the folder $1 under its name, as the library's `receive` does.
receiver="$hold"'
import asyncio, json, pathlib, sys
import aiofiles, localsend
def event(**fields):
    print(json.dumps(fields), flush=True)
async def main():
    async with localsend.create_app(localsend.Config.model_validate('"$config"')) as app:
        async def accept(device, file):
            event(event="offer", sender=device.info.alias, host=device.host, name=file.fileName, size=int(file.size),
                  type=file.fileType, preview=file.preview)
            return aiofiles.open(pathlib.Path(sys.argv[1]) / pathlib.Path(file.fileName).name, mode="wb")
        async def new_device(device):
            event(event="device", alias=device.info.alias, host=device.host, model=device.info.deviceModel)
        app.callbacks.accept = accept
        app.callbacks.new_device = new_device
        event(event="ready")
        while True:
            await asyncio.sleep(60)
asyncio.run(main())'
# The certificate's fingerprint, as the library computes it (made now, kept for the receiver).
fingerprint_py=$(on b "$py" -c 'from localsend.lib import ssl
print(ssl.Context.create(ssl.Config()).certificate_hash)' | tail -1)

# 1. The receiver on host b: host-a lists it, proven by its certificate, version 2.1.
alias_b=localsend-py
mkdir -p "$work/received"
events="$work/receiver-events.log"
: >"$events"
on b "$py" -c "$receiver" "$work/received" "$alias_b" >"$events" 2>"$work/receiver.log" &
pids+=($!)
device=""
heard=""
peers=""
for _ in $(seq 150); do
    peers=$(ctl a peers --json 2>/dev/null || true)
    device=$(objects 'o.get("kind") == "localsend" and o.get("name") == "'"$alias_b"'"' \
        '"|".join(str(o.get(k)) for k in ("name", "versionID", "endpoint")) + "|" + o["fingerprint"].upper()' \
        <<<"$peers")
    heard=$(objects 'o.get("event") == "device"' 'o["alias"], o["host"], o["model"]' <"$events" | sort -u)
    [ -n "$device" ] && [ -n "$heard" ] && break
    sleep 0.1
done
[ "$device" = "$alias_b|2.1|10.71.0.2:53317|$fingerprint_py" ] && [ "$heard" = "host-a 10.71.0.1 hexd" ] \
    && pass "host-a lists the receiver as a LocalSend device: $alias_b, 2.1, 10.71.0.2:53317," \
        "fingerprint ${fingerprint_py:0:16}…, and the receiver heard from host-a" \
    || fail "host-a's LocalSend devices: '$device' (the receiver's fingerprint is $fingerprint_py)," \
        "the receiver heard '$heard'; peers: $peers"

# 2. A link through host-a's outbox: one LocalSend message, message.txt with the text as its preview,
# which the receiver takes as an upload.
code=0
sent=$(ctl a send --to "$alias_b" --timeout 20 https://example.com/py 2>&1) || code=$?
offered=""
for _ in $(seq 50); do
    offered=$(objects 'o.get("event") == "offer" and o["name"] == "message.txt"' \
        '"|".join(str(o[k]) for k in ("sender", "host", "type", "preview"))' <"$events")
    [ -n "$offered" ] && [ "$(cat "$work/received/message.txt" 2>/dev/null)" = https://example.com/py ] && break
    sleep 0.1
done
saved=$(cat "$work/received/message.txt" 2>/dev/null || true)
[ "$code" = 0 ] && [[ "$sent" == "received by $alias_b (10.71.0.2:53317)"* ]] \
    && [ "$offered" = "host-a|10.71.0.1|text/plain|https://example.com/py" ] && [ "$saved" = https://example.com/py ] \
    && pass "hexctl send --to $alias_b: delivered ($sent), the receiver was offered the text and saved it" \
    || fail "hexctl send --to $alias_b: exit $code, $sent; offered: '$offered'; saved: '$saved'"

# 3. A 5 MiB file shared with the receiver: the file itself lands in its folder.
head -c $((5 << 20)) /dev/urandom >"$work/to the receiver.bin"
code=0
shared=$(ctl a share --to "$alias_b" "$work/to the receiver.bin" 2>&1) || code=$?
landed="$work/received/to the receiver.bin"
[ "$code" = 0 ] && [[ "$shared" == "received by $alias_b"*"LocalSend took 1 of 1 files (5.0 MiB)"* ]] \
    && [ -f "$landed" ] && [ "$(sha256sum <"$landed")" = "$(sha256sum <"$work/to the receiver.bin")" ] \
    && pass "hexctl share --to $alias_b: a 5 MiB file landed in the receiver's folder, SHA-256 equal" \
    || fail "hexctl share --to $alias_b: exit $code, $shared; $(ls -la "$work/received" 2>&1)"

# The sender on host c: waits for host-a (its new_device callback: host-a registering with it, or its
# announcement), sends it the text $3 as the apps send a message (the text kept in the folder $1 as
# note.txt), then each file $5… in turn, the n-th once the file $4-n exists. Its HTTP client's
# requests are recorded with the file they are for (the path, the answer or the error, and how the
# body was sized); the library raises on any answer but 200 before it uploads, and swallows an
# upload's failure after cancelling its session.
sender="$hold"'
import asyncio, json, os, pathlib, sys
import aiofiles, httpx, localsend, pydantic
from localsend.lib.protocol.client import InvalidCall
def event(**fields):
    print(json.dumps(fields), flush=True)
send = httpx.AsyncClient.send
sending = "note.txt"
async def recording(self, request, **kwargs):
    sized = {"length": request.headers.get("content-length"), "coding": request.headers.get("transfer-encoding")}
    try:
        response = await send(self, request, **kwargs)
    except Exception as error:
        event(event="request", file=sending, path=request.url.path, error=repr(error), **sized)
        raise
    event(event="request", file=sending, path=request.url.path, status=response.status_code, body=response.text[:80],
          **sized)
    return response
httpx.AsyncClient.send = recording
def opener(path):
    return lambda: aiofiles.open(path, mode="rb")
async def upload(app, file, device):
    global sending
    sending = file.name
    try:
        await app.uploader.upload([file], device)
        event(event="sent", file=file.name, outcome="returned")
    except InvalidCall as error:
        event(event="sent", file=file.name, outcome="raised", status=error.status_code, text=error.text)
async def main():
    async with localsend.create_app(localsend.Config.model_validate('"$config"')) as app:
        found = asyncio.get_running_loop().create_future()
        async def new_device(device):
            if device.info.deviceModel == "hexd" and not found.done():
                found.set_result(device)
        app.callbacks.new_device = new_device
        device = await asyncio.wait_for(found, 20)
        event(event="found", alias=device.info.alias, host=device.host, fingerprint=device.info.fingerprint)
        note = pathlib.Path(sys.argv[1]) / "note.txt"
        note.write_text(sys.argv[3])
        await upload(app, localsend.File("note.txt", pydantic.ByteSize(note.stat().st_size), opener(note),
                                         mime_type="text/plain", preview=sys.argv[3]), device)
        for n, path in enumerate(map(pathlib.Path, sys.argv[5:]), 1):
            for _ in range(300):
                if os.path.exists(f"{sys.argv[4]}-{n}"):
                    break
                await asyncio.sleep(0.1)
            await upload(app, localsend.File(path.name, pydantic.ByteSize(path.stat().st_size), opener(path)), device)
        event(event="done")
        os._exit(0)  # at once: leaving create_app cancels its tasks, which ends in a CancelledError
asyncio.run(main())'

# 4. The library sends host-a a text message: a hex whose description is the text, its address a link.
note="a note from localsend-py: see https://example.com/from-py."
head -c $((1 << 20)) /dev/urandom >"$work/from py.bin"
mkdir -p "$work/c-home/out"
sender_events="$work/sender-events.log"
: >"$sender_events"
on c timeout 90 "$py" -c "$sender" "$work/c-home/out" localsend-py-sender "$note" "$work/go" \
    "$work/from py.bin" >"$sender_events" 2>"$work/sender.log" &
pids+=($!)
told=""
for _ in $(seq 300); do
    told=$(objects 'o.get("event") == "sent" and o["file"] == "note.txt"' 'o["outcome"], o.get("status")' \
        <"$sender_events")
    [ -n "$told" ] && break
    sleep 0.1
done
asked=$(objects 'o.get("event") == "request" and o["path"].endswith("/prepare-upload")' \
    'o.get("status"), o.get("error", "")' <"$sender_events")
newest=$(ctl a inbox --json --limit 1 2>/dev/null || true)
hex_id=$(objects 'True' 'o["id"]' <<<"$newest")
shown=$(ctl a inbox show --full --json "$hex_id" 2>&1 || true)
hex=$(objects 'True' \
    'o.get("hexDescription"), "|", " ".join(l["url"] for l in o.get("links", [])), "|", o.get("senderUUID") or "none"' \
    <<<"$shown")
[ "$asked" = "204 " ] && [ "$hex" = "$note | https://example.com/from-py | none" ] \
    && pass "the library's text message: host-a answered prepare-upload 204 (the library takes only 200:" \
        "'$told'), the newest hex has the text as its description and its address as its link, no sender ID" \
    || fail "the library's text message: prepare-upload answered '$asked', the library '$told'; newest hex: $shown"

# 5. The library uploads the 1 MiB file, chunked: host-a takes it whole. Host-a's kernel counts the
# connections it reset with data unread (TCPAbortOnData), which the failure names.
aborted() {
    ip netns exec "$tag-a" awk '$1 == "TcpExt:" {
        if (!k) { for (i = 2; i <= NF; i++) if ($i == "TCPAbortOnData") k = i } else print $k }' /proc/net/netstat
}
resets=$(aborted)
touch "$work/go-1"
outcome=""
for _ in $(seq 300); do
    outcome=$(objects 'o.get("event") == "sent" and o["file"] == "from py.bin"' 'o["outcome"]' <"$sender_events")
    [ -n "$outcome" ] && break
    sleep 0.1
done
resets=$(($(aborted) - resets))
requests=$(objects 'o.get("event") == "request" and o["file"] == "from py.bin" and "/register" not in o["path"]' \
    'o["path"].rsplit("/", 1)[1], o.get("status", o.get("error"))' <"$sender_events" | paste -sd ';' -)
sized=$(objects 'o.get("event") == "request" and o["file"] == "from py.bin" and o["path"].endswith("/upload")' \
    'o.get("coding"), o.get("length")' <"$sender_events")
after=$(ctl a inbox --json --limit 1 2>/dev/null || true)
downloads=$(ls -A "$work/a/downloads" 2>/dev/null || true)
[ "$outcome" = returned ] && [ "$sized" = "chunked None" ] \
    && [ "$requests" = "info 200;prepare-upload 200;upload 200" ] && [ "$downloads" = "from py.bin" ] \
    && cmp -s "$work/from py.bin" "$work/a/downloads/from py.bin" \
    && [ "$(objects 'True' 'o["hexDescription"]' <<<"$after")" = "from py.bin" ] \
    && pass "the library's 1 MiB file goes chunked: host-a answered its upload 200, the file landed whole" \
        "in host-a's downloads (no partial file left) and the newest hex names it" \
    || fail "the library's 1 MiB file: the library '$outcome', its upload sized '$sized', its requests and" \
        "their answers '$requests' (host-a reset $resets connections with data unread); downloads:" \
        "'$downloads'; newest hex: $after"

echo "$label: $passed passed, 0 failed"
