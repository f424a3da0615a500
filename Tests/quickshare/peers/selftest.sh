#!/usr/bin/env bash
# The Quick Share test peers against each other, no hexd: two network namespaces joined by a veth
# pair (mDNS never touches the host's network), pyquickshare's receiver (qs_receive.py) in one, the
# browser and the senders (qs_browse.py, android_send.py, qs_send.py) in the other.
#   bash Tests/quickshare/peers/selftest.sh [PYTHON]     (as root; PYTHON: the one with pyquickshare,
#                                                         default /root/.pyenv/versions/3.10.13/bin/python3)
# Ends with "N passed, N failed"; exit 0 only when every check passed. Every wait is bounded.
set -u
py=${1:-/root/.pyenv/versions/3.10.13/bin/python3}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tag="qsp$$"
work=$(mktemp -d /tmp/qs-peers.XXXXXX)
pids=()
passed=0
failed=0

cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    ip netns del "$tag-r" 2>/dev/null || true
    ip netns del "$tag-s" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
ok() { passed=$((passed + 1)); echo "selftest: ok: $*"; }
bad() { failed=$((failed + 1)); echo "selftest: FAILED: $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
# jq -e over the JSON lines of FILE: is there a line matching FILTER?
has() { jq -e -s "any(.[]; $2)" "$1" >/dev/null 2>&1; }

[ "$(id -u)" = 0 ] || { echo "selftest: needs root (network namespaces)"; exit 2; }
command -v jq >/dev/null || { echo "selftest: needs jq"; exit 2; }
"$py" -c 'import pyquickshare' 2>/dev/null || { echo "selftest: $py has no pyquickshare"; exit 2; }

ip netns add "$tag-r" && ip netns add "$tag-s" || exit 2
ip link add "v$tag" netns "$tag-r" type veth peer name "w$tag" netns "$tag-s"
for ns in r s; do ip -n "$tag-$ns" link set lo up; done
ip -n "$tag-r" addr add 10.78.0.1/24 dev "v$tag"; ip -n "$tag-r" link set "v$tag" up
ip -n "$tag-s" addr add 10.78.0.2/24 dev "w$tag"; ip -n "$tag-s" link set "w$tag" up
ip -n "$tag-r" route add 224.0.0.0/4 dev "v$tag"; ip -n "$tag-s" route add 224.0.0.0/4 dev "w$tag"
R() { ip netns exec "$tag-r" "$py" "$@"; }
S() { ip netns exec "$tag-s" "$py" "$@"; }

head -c 300000 /dev/urandom >"$work/photo.bin"
printf 'notes of the test\n' >"$work/notes.txt"

# Starts qs_receive.py in the background as NAME (its output in $work/NAME.out, .err, .rc) and waits,
# at most 15 s, for its ready line.
receiver() {
    local name=$1; shift
    (timeout 90 ip netns exec "$tag-r" "$py" "$here/qs_receive.py" --ip 10.78.0.1 --dir "$work/$name" "$@" \
        >"$work/$name.out" 2>"$work/$name.err"; echo $? >"$work/$name.rc") &
    pids+=($!)
    for _ in $(seq 150); do grep -q '"event": "ready"' "$work/$name.out" 2>/dev/null && return 0; sleep 0.1; done
    return 1
}
# Waits, at most 30 s, for receiver NAME to exit; prints its exit status.
receiver_rc() {
    for _ in $(seq 300); do [ -s "$work/$1.rc" ] && { cat "$work/$1.rc"; return; }; sleep 0.1; done
    echo timeout
}

# 1. Accepting: texts of three kinds, two files.
check "receiver ready" receiver acc --endpoint ACPT --name "Peer Test Receiver" --port 47101 --count 5 --timeout 60
port=$(jq -r 'select(.event == "ready") | .port' "$work/acc.out")

S "$here/qs_browse.py" --timeout 10 --expect-name "Peer Test Receiver" >"$work/browse.out"
check "qs_browse finds it (exit 0)" [ $? = 0 ]
check "qs_browse decodes endpoint ID, visibility, device type, name, address, port" \
    has "$work/browse.out" '.event == "found" and .endpoint_id == "ACPT" and .valid_instance and .info.visible
        and .info.device_type_name == "phone" and .info.name == "Peer Test Receiver"
        and .addresses == ["10.78.0.1"] and .port == 47101'
S "$here/qs_browse.py" --timeout 3 --expect-name "Nobody" >/dev/null 2>&1
check "qs_browse exits 1 when the name never shows" [ $? = 1 ]

S "$here/android_send.py" --host 10.78.0.1 --port "$port" --text "x" --timeout 15 >"$work/strict.out" 2>/dev/null
check "android_send, strict, refuses pyquickshare's LAST_CHUNK at offset 0 (exit 1)" \
    sh -c "[ $? = 1 ] && grep -q 'offset 0, expected' '$work/strict.out'"

S "$here/android_send.py" --host 10.78.0.1 --port "$port" --text "hello from android_send" \
    --allow-pyquickshare-quirks --expect accepted --timeout 20 >"$work/text.out"
check "android_send text accepted" [ $? = 0 ]
check "android_send prints its PIN" has "$work/text.out" '.outcome == "accepted" and (.pin | test("^[0-9]{4}$"))'
S "$here/android_send.py" --host 10.78.0.1 --port "$port" --url "https://example.org/a?b=c" \
    --allow-pyquickshare-quirks --expect accepted --timeout 20 >"$work/url.out"
check "android_send URL accepted" [ $? = 0 ]
S "$here/android_send.py" --host 10.78.0.1 --port "$port" --text "+33 1 23 45 67 89" --kind PHONE_NUMBER \
    --allow-pyquickshare-quirks --expect accepted --timeout 20 >"$work/phone.out"
check "android_send phone number accepted" [ $? = 0 ]
S "$here/qs_send.py" --host 10.78.0.1 --port "$port" --expect accepted --timeout 20 \
    "$work/photo.bin" "$work/notes.txt" >"$work/files.out" 2>"$work/files.err"
check "qs_send two files accepted" [ $? = 0 ]

check "receiver exits 0 after 5 transfers" [ "$(receiver_rc acc)" = 0 ]
check "receiver: the text, kind text" \
    has "$work/acc.out" '.event == "result" and .kind == "text" and .text == "hello from android_send"'
check "receiver: the URL, kind url" \
    has "$work/acc.out" '.event == "result" and .kind == "url" and .text == "https://example.org/a?b=c"
        and .title == "example.org"'
check "receiver: the phone number, kind phone_number" \
    has "$work/acc.out" '.event == "result" and .kind == "phone_number"'
for f in photo.bin notes.txt; do
    sum=$(sha256sum "$work/$f" | cut -d' ' -f1)
    check "receiver: $f whole under DIR/downloads (sha256)" \
        has "$work/acc.out" ".event == \"result\" and .kind == \"file\" and .sha256 == \"$sum\"
            and .path == \"$work/acc/downloads/$f\""
done
check "same PIN on both sides (android_send text)" \
    [ "$(jq -r .pin "$work/text.out")" = "$(jq -r 'select(.event == "request"
        and .offered[0].title == "hello from android_send") | .pin' "$work/acc.out")" ]
check "same PIN on both sides (qs_send photo.bin)" \
    [ "$(jq -r 'select(.file | endswith("photo.bin")) | .pin' "$work/files.out")" = "$(jq -r 'select(.event == "request"
        and .offered[0].name == "photo.bin") | .pin' "$work/acc.out")" ]
check "no protocol error seen by the receiver" has "$work/acc.out" '.event == "done" and .protocol_errors == 0'

# 2. Declining with a REJECT frame (which pyquickshare alone never sends).
check "rejecting receiver ready" \
    receiver rej --endpoint REJT --name "Rejecter" --port 47102 --count 2 --timeout 40 --reject
S "$here/qs_send.py" --host 10.78.0.1 --port 47102 --expect rejected --timeout 15 "$work/notes.txt" \
    >"$work/rej-file.out" 2>/dev/null
check "qs_send: rejected, status REJECT" sh -c "[ $? = 0 ] && grep -q '\"status\": \"REJECT\"' '$work/rej-file.out'"
S "$here/android_send.py" --host 10.78.0.1 --port 47102 --text "no thanks" --allow-pyquickshare-quirks \
    --expect rejected --timeout 15 >"$work/rej-text.out"
check "android_send: rejected" [ $? = 0 ]
check "rejecting receiver exits 0" [ "$(receiver_rc rej)" = 0 ]
check "nothing stored when declined" sh -c "[ -z \"\$(ls -A '$work/rej/downloads')\" ]"

# 3. Declining as pyquickshare does: the connection closed without an answer.
check "silent receiver ready" \
    receiver sil --endpoint SILT --name "Silent" --port 47103 --count 1 --timeout 30 --reject-silently
S "$here/qs_send.py" --host 10.78.0.1 --port 47103 --expect closed --timeout 15 "$work/notes.txt" >/dev/null 2>&1
check "qs_send: closed without an answer" [ $? = 0 ]
check "silent receiver exits 0" [ "$(receiver_rc sil)" = 0 ]

# 4. The receiver's own failures: a timeout, and files qs_send will not send.
check "receiver exits 1 at its timeout" sh -c "
    timeout 20 ip netns exec '$tag-r' '$py' '$here/qs_receive.py' --ip 10.78.0.1 --endpoint TIME --name T \
        --dir '$work/t' --count 1 --timeout 2 >'$work/t.out' 2>/dev/null
    [ \$? = 1 ] && grep -q '\"event\": \"timeout\"' '$work/t.out'"
head -c 524288 /dev/zero >"$work/half.bin"
"$py" "$here/qs_send.py" --host 127.0.0.1 --port 9 "$work/half.bin" >/dev/null 2>&1
check "qs_send refuses a 512 KiB file (exit 2)" [ $? = 2 ]

# 5. The checks can fail: pyquickshare's receiver made to number its frames from 2, which android_send
# must refuse, and its sender made to skip number 3, which qs_receive must report (exit 4).
cat >"$work/badseq_receive.py" <<EOF
import importlib, sys
sys.dont_write_bytecode = True
sys.path.insert(0, "$here")
import pyquickshare
R = importlib.import_module("pyquickshare.receive")
def numbers():
    n = [1]
    def f():
        n[0] += 1
        return n[0]
    return f
R.make_sequence_number = numbers
import qs_receive
qs_receive.main()
EOF
cat >"$work/badseq_send.py" <<EOF
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, "$here")
from pyquickshare import send as S
def numbers():
    n = [0]
    def f():
        n[0] += 2 if n[0] == 2 else 1
        return n[0]
    return f
S.make_sequence_number = numbers
import qs_send
qs_send.main()
EOF
(timeout 30 ip netns exec "$tag-r" "$py" "$work/badseq_receive.py" --ip 10.78.0.1 --endpoint BADR --name B \
    --dir "$work/badr" --port 47104 --count 1 --timeout 6 >/dev/null 2>&1) &
pids+=($!)
for _ in $(seq 100); do ip netns exec "$tag-r" ss -ltn 2>/dev/null | grep -q ':47104 ' && break; sleep 0.1; done
S "$here/android_send.py" --host 10.78.0.1 --port 47104 --text x --allow-pyquickshare-quirks --timeout 10 \
    >"$work/badr-send.out" 2>/dev/null
check "android_send refuses a receiver whose sequence numbers start at 2" \
    sh -c "[ $? = 1 ] && grep -q 'wrong sequence number: expected 1, got 2' '$work/badr-send.out'"
receiver bads --endpoint BADS --name B --port 47105 --count 1 --timeout 20
S "$work/badseq_send.py" --host 10.78.0.1 --port 47105 --timeout 10 "$work/notes.txt" >/dev/null 2>&1
check "qs_receive exits 4" [ "$(receiver_rc bads)" = 4 ]
check "qs_receive names the sequence error" \
    has "$work/bads.out" '.event == "protocol_error" and .expected == 3 and .got == 4'

# 6. Goodbyes: a receiver that ends (here at its timeout) unregisters, and a browser sees it go.
(timeout 30 ip netns exec "$tag-s" "$py" "$here/qs_browse.py" --timeout 8 >"$work/bye-browse.out" 2>/dev/null) &
browse_pid=$!
pids+=($browse_pid)
sleep 1
timeout 20 ip netns exec "$tag-r" "$py" "$here/qs_receive.py" --ip 10.78.0.1 --endpoint BYEE --name Goodbye \
    --dir "$work/bye" --count 1 --timeout 3 >/dev/null 2>&1
wait "$browse_pid"
check "a browser saw the receiver come and go" \
    sh -c "grep -q '\"endpoint_id\": \"BYEE\"' '$work/bye-browse.out' &&
        grep -q '\"event\": \"removed\"' '$work/bye-browse.out'"

if [ "$failed" != 0 ]; then
    for f in "$work"/*.out "$work"/*.err; do echo "--- $f"; cat "$f"; done
fi
echo "selftest: $passed passed, $failed failed"
[ "$failed" = 0 ]
