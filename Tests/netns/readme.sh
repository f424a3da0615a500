#!/usr/bin/env bash
# README's examples that take two machines, run as a new user runs them: two hexd with their
# defaults (`hexd --name Ada`, `hexd --name Grace`, nothing else: LocalSend, KDE Connect, DNS-SD,
# the page all on), each in a network namespace of its own, joined by an ordinary IPv4 link
# (10.95.0.0/24, with no route to 255.255.255.255, as on a LAN whose router hands out no default
# route to a test host), their data in the default place under a home of their own. Checked:
#   - "Two machines": each lists the other once, as a hexd peer (no second row for its LocalSend or
#     KDE Connect persona), within a second; `send --to grace` is stored; Grace's inbox names the
#     sender by its ID, `inbox show` and `inbox save` work, `watch` shows the hex received; no
#     LocalSend or KDE Connect device is listed or linked on either side (status and log).
#   - `send --json … || echo "exit $?"` (hexctl's Scripts paragraph).
#   - "Finding and trusting each other": `pair grace` prints a code, Grace's peers show the same
#     code and the command that accepts it, `pair --accept ada` pairs both.
#   - "Delivery: the outbox": a send to Grace while she is stopped exits 75, queued; `outbox` lists
#     it; it is delivered once she is back.
#   - "Sharing files": `share --to grace` (Ada) and `fetch` (Grace) of two files, whole; `grants`
#     and `revoke`, after which a fetch is refused.
#   - "Being found": hidden, Ada is no longer listed by Grace; a send to her address still lands.
# Each check is counted; the last line says how many passed and failed. Touches only the
# namespaces it makes; everything is removed on exit. Every wait is bounded.
#
# Usage: readme.sh BIN_DIR   (needs root and iproute2)
set -euo pipefail
bin=${1:?usage: readme.sh BIN_DIR}
tag=hexdr$$
work=$(mktemp -d /tmp/hexd-readme-XXXXXX)
pids=()
label=readme
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"

make_bridge
join_bridge ada 10.95.0.1/24
join_bridge grace 10.95.0.2/24

# As a person runs them: only HOME and PATH from the environment (the data directory and the
# downloads folder are the defaults under HOME). The namespaces share the host's files: a system
# bus of the host's would carry DNS-SD records through its Avahi onto the host's networks, so
# DBUS_SYSTEM_BUS_ADDRESS names a socket that is not there, and hexd runs its own responder,
# inside the namespace.
environment() {
    echo HOME="$work/home-$1" PATH="$PATH" DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/no-system-bus"
}
as() {
    local host=$1
    shift
    # shellcheck disable=SC2046 # the variables, one word each
    ip netns exec "$tag-$host" env -i $(environment "$host") "$@"
}
hexctl() { local host=$1; shift; as "$host" "$bin/hexctl" "$@"; }
name_of() { if [ "$1" = ada ]; then echo Ada; else echo Grace; fi; }
start() {
    local host=$1
    mkdir -p "$work/home-$host"
    # The command itself in the background (no function between): its PID is hexd's.
    # shellcheck disable=SC2046 # the variables, one word each
    ip netns exec "$tag-$host" env -i $(environment "$host") "$bin/hexd" --name "$(name_of "$host")" \
        2>>"$work/$host.log" &
    pids+=($!)
    eval "pid_$host=$!"
}
lists() { hexctl "$1" peers 2>/dev/null | grep -q "\"$2\""; }

# "Two machines": within a second each lists the other.
started=$(milliseconds)
start ada
start grace
wait_until 'lists ada Grace && lists grace Ada' 100 || fail "Ada and Grace do not list each other"
listed=$(($(milliseconds) - started))
pass "Ada and Grace, with their defaults, list each other ${listed} ms after both started"
# Their LocalSend and KDE Connect personas are up (status shows them) and 2 s pass: time for every
# identity and announcement of theirs to be heard, and for the KDE Connect dial that followed one.
hexctl ada wait --timeout 10 >/dev/null && hexctl grace wait --timeout 10 >/dev/null \
    || fail "the daemons' LocalSend and KDE Connect devices did not start"
sleep 2
rows=$(hexctl ada peers | tail -n +2)
[ "$(wc -l <<<"$rows")" = 1 ] && [[ "$rows" == '"Grace"  '* ]] && [[ "$rows" == *'"2.0.0"'* ]] \
    || fail "Ada's peers are not one row for Grace, as a hexd peer: $rows"
rows_grace=$(hexctl grace peers | tail -n +2)
[ "$(wc -l <<<"$rows_grace")" = 1 ] && [[ "$rows_grace" == '"Ada"  '* ]] \
    || fail "Grace's peers are not one row for Ada: $rows_grace"
pass "each lists the other once, as a hexd peer: $rows"
for host in ada grace; do
    counts=$(hexctl "$host" status --json | foreign_devices)
    [ "$counts" = "(0, 0)" ] || fail "$(name_of "$host") lists LocalSend and KDE Connect devices: $counts"
    grep -q "KDE Connect device .*protocol\|LocalSend device .* at " "$work/$host.log" \
        && fail "$(name_of "$host") linked with the other's persona: $(grep "KDE Connect device\|LocalSend device" "$work/$host.log")"
done
pass "neither lists, registers with or links to the other's LocalSend or KDE Connect persona"

out=$(hexctl ada send --to grace -d "Trip photos" https://example.com/a https://example.org/b) \
    || fail "send --to grace: $out"
[[ "$out" == "stored by Grace ("*") over TLS (key "*"stored in the inbox as "* ]] || fail "send --to grace: $out"
pass "send --to grace, as README writes it: $out"
ada_id=$(hexctl ada status --json | json 'data["peerUUID"]')
line=$(hexctl grace inbox)
[[ "$line" == *'"Trip photos"  from "Ada" '"${ada_id:0:8}"' (new)  2 links'* ]] \
    || fail "Grace's inbox does not name Ada by her ID: $line"
pass "Grace's inbox names the sender by its ID: $line"
hex=$(hexctl grace inbox --json --limit 1 | json 'data["id"]')
shown=$(hexctl grace inbox show "${hex:0:4}")
[[ "$shown" == *'link 2: "https://example.org/b"'* && "$shown" == *"from: \"Ada\" \"$ada_id\""* ]] \
    || fail "inbox show: $shown"
hexctl grace inbox save "${hex:0:4}" >/dev/null || fail "inbox save"
hexctl grace hexlist | grep -q '"Trip photos"' || fail "the hex saved is not in Grace's hexlist"
event=$(hexctl grace watch --since 0 --until hexReceived --timeout 5) || fail "watch: $event"
[[ "$event" == *'hexReceived "Ada" '"${ada_id:0:8}"* ]] || fail "watch does not show the hex received: $event"
pass "inbox show, inbox save and watch on Grace's machine"

# hexctl's Scripts paragraph.
json_out=$(hexctl ada send --to grace --json https://example.com || echo "exit $?")
[[ "$(json 'data["status"]' <<<"$json_out")" = stored ]] || fail "send --json: $json_out"
pass "send --to grace --json: $json_out"

# Pairing with the code.
# `pair grace` prints the code and waits for Grace's answer.
hexctl ada pair grace >"$work/pair.txt" 2>&1 &
asker=$!
wait_until 'grep -q "^verification code: " "$work/pair.txt"' || fail "pair grace printed no code: $(cat "$work/pair.txt")"
code=$(sed -n 's/^verification code: \([0-9A-F]*\)$/\1/p' "$work/pair.txt")
wait_until 'hexctl grace peers | grep -q "\"Ada\" asks to pair, code $code: if it shows the same, run: hexctl pair --accept $ada_id"' \
    || fail "Grace's peers do not show Ada's request with code $code: $(hexctl grace peers)"
accepted=$(hexctl grace pair --accept ada) || fail "pair --accept ada: $accepted"
[[ "$accepted" == "paired with \"Ada\" ($ada_id), code $code"* ]] || fail "pair --accept ada: $accepted"
wait "$asker" || fail "pair grace ended in failure: $(cat "$work/pair.txt")"
hexctl ada peers | grep -q '"Grace" .* paired ' || fail "Ada does not show Grace paired: $(hexctl ada peers)"
pass "pair grace, the same code on Grace's side, pair --accept ada: $accepted"

# The outbox: Grace away, a send waits (75) and goes once she is back.
held=$(hexctl grace inbox --json | grep -c '"id"')
kill "$pid_grace"
wait "$pid_grace" 2>/dev/null || true
wait_until '! lists ada Grace' 100 || fail "Grace's bye did not take her off Ada's list"
code=0
away=$(hexctl ada send --to grace https://example.com/doc 2>&1) || code=$?
[ "$code" = 75 ] && [[ "$away" == *"not delivered yet"*"queued as"* ]] || fail "a send to Grace away: exit $code, $away"
hexctl ada outbox | grep -q 'hex  to "Grace"' || fail "the send is not in Ada's outbox: $(hexctl ada outbox)"
start grace
wait_until '[ "$(hexctl ada outbox)" = "the outbox is empty" ]' 150 \
    || fail "Ada's outbox still holds the send: $(hexctl ada outbox)"
[ "$(hexctl grace inbox --json | grep -c '"id"')" = $((held + 1)) ] \
    || fail "the queued send did not reach Grace once she was back: $(hexctl grace inbox)"
pass "a send while Grace was away exited 75, queued, and was delivered when she came back"

# Sharing files.
mkdir -p "$work/files"
head -c 300000 /dev/urandom >"$work/files/q3.pdf"
head -c 7000 /dev/urandom >"$work/files/q4.pdf"
shared=$(hexctl ada share --to grace -d "Q3 reports" "$work/files/q3.pdf" "$work/files/q4.pdf") \
    || fail "share --to grace: $shared"
hex=$(hexctl grace inbox --json --limit 1 | json 'data["id"]')
fetched=$(hexctl grace fetch "${hex:0:4}") || fail "fetch: $fetched"
for file in q3.pdf q4.pdf; do
    cmp -s "$work/files/$file" "$work/home-grace/Downloads/$file" || fail "$file did not land whole: $fetched"
done
grants=$(hexctl ada grants)
[ "$(grep -c '"Grace"' <<<"$grants")" = 2 ] || fail "Ada's grants do not list both files for Grace: $grants"
hexctl ada revoke "$(hexctl ada grants --json | head -1 | json 'data["id"][:4]')" >/dev/null || fail "revoke"
refused=0
hexctl grace fetch "${hex:0:4}" --downloads "$work/again" >/dev/null 2>&1 || refused=$?
[ "$refused" != 0 ] || fail "a fetch after revoke still fetched every file"
pass "share --to grace, fetch into ~/Downloads (both files whole), grants, and revoke"

# Being found: hidden, Ada is dropped by Grace, and a send by address still lands.
hexctl ada visibility hidden >/dev/null || fail "visibility hidden"
wait_until '! lists grace Ada' || fail "Grace still lists Ada hidden: $(hexctl grace peers)"
out=$(hexctl grace send --to 10.95.0.1:18521 https://example.com/hidden) || fail "a send by address: $out"
[[ "$out" == "stored by 10.95.0.1:18521 over TLS"* ]] || fail "a send by address: $out"
pass "hidden, Ada is no longer listed by Grace, and a send to 10.95.0.1:18521 still lands"
echo "$label: $passed passed, 0 failed"
