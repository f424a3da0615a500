#!/usr/bin/env bash
# hexd and the KDE Connect Android app on a network that drops broadcasts, where the app finds devices by
# mDNS (`_kdeconnect._udp`) and meets them by unicast UDP. The app is kdeconnect_android.py, written from
# KDE/kdeconnect-android's sources. Network namespaces on one bridge that drops every UDP broadcast
# (255.255.255.255 and the subnet's, nftables), so only multicast and unicast cross it:
#   - the app started after hexd finds it by mDNS and sends it its identity; they link over TLS at protocol
#     8 (the app says `linked 8`), hexctl peers --json lists the app as a KDE Connect device at 8, and the
#     bridge did drop hexd's broadcasts;
#   - hexd started after an app whose own discovery does not find hexd (--no-browse) finds it by browsing
#     and sends it its identity by unicast UDP (the app says `heard`); they link;
#   - the app asks to pair: hexd shows the code the app shows, hexctl pair --accept pairs both sides;
#   - hexctl send --to the app with a note: the app puts it on its clipboard and shows it as a
#     notification; hexctl alert --to the app: a notification;
#   - the app pings with a message: an Alert from it in hexd;
#   - hidden (hexctl visibility hidden), hexd is not found by a freshly started app within 5 s; visible
#     again, it is found and linked.
# With --self-check instead of BIN_DIR, no hexd: two copies of the app find each other the same way, link
# at protocol 8, refuse each other's share before pairing, pair with the same code on both sides, share a
# text and ping, and link again, still paired, after one restarts: a check of the test device itself.
# Each check is counted; the last line says how many passed. Touches only the namespaces it makes; every
# wait is bounded.
#
# Usage: kdeconnect-mdns.sh BIN_DIR | --self-check   (needs root, iproute2, nftables, openssl and
#                                                     python3-zeroconf)
set -euo pipefail
bin=${1:?usage: kdeconnect-mdns.sh BIN_DIR | --self-check}
tag=hexdkm$$
work=$(mktemp -d /tmp/hexd-kdeconnect-mdns-XXXXXX)
pids=()
label=kdeconnect-mdns
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"
"$python" -c "import zeroconf" 2>/dev/null || fail "python3-zeroconf is not installed"

make_bridge
join_bridge a 10.73.0.1/24
join_bridge p 10.73.0.2/24
join_bridge q 10.73.0.3/24
join_bridge r 10.73.0.4/24
# A default route, as on a real network: hexd's broadcasts to 255.255.255.255 go out, and the bridge drops them.
for host in a p q r; do ip -n "$tag-$host" route add default dev "s$host$$"; done
# Every UDP broadcast is dropped where the bridge forwards it; the first rule counts KDE Connect's.
nft_bridge() { ip netns exec "$tag-br" nft "$@"; }
nft_bridge add table bridge hexdtest
nft_bridge add chain bridge hexdtest forward '{ type filter hook forward priority 0; }'
nft_bridge add rule bridge hexdtest forward ip daddr '{ 255.255.255.255, 10.73.0.255 }' udp dport 1716 counter drop
nft_bridge add rule bridge hexdtest forward ip daddr '{ 255.255.255.255, 10.73.0.255 }' meta l4proto udp \
    counter drop
# The KDE Connect identity broadcasts the bridge dropped, and all UDP broadcasts it dropped.
dropped() {
    nft_bridge list chain bridge hexdtest forward | awk '/counter/ {
        for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }' | paste -sd' '
}

# The app as NAME in the namespace of HOST (its state in $work, what it says in $work/NAME.log, appended
# when it starts again), waiting until it said `ready` COUNT times in all (1 unless given); `app NAME
# COMMAND` gives it a command, `said NAME PATTERN` greps what it said.
declare -A app_fd app_pid
start_app() {
    local host=$1 name=$2 fd
    [ -p "$work/$name.in" ] || mkfifo "$work/$name.in"
    ip netns exec "$tag-$host" "$python" "$(dirname "$0")/kdeconnect_android.py" "$work" "$name" 1716 \
        ${no_browse:+--no-browse} <"$work/$name.in" >>"$work/$name.log" 2>&1 &
    app_pid[$name]=$!
    pids+=($!)
    exec {fd}>"$work/$name.in"
    app_fd[$name]=$fd
    wait_until "[ \"\$(grep -c '^ready ' \"$work/$name.log\")\" -ge \"${3:-1}\" ]" || fail "$name did not start"
}
app() { local name=$1; shift; echo "$*" >&"${app_fd[$name]}"; }
said() { grep -q -- "$2" "$work/$1.log"; }
app_id() { awk '/^ready / { print $2; exit }' "$work/$1.log"; }
stop_app() {
    local fd=${app_fd[$1]}
    app "$1" quit
    exec {fd}>&-
    for _ in $(seq 100); do kill -0 "${app_pid[$1]}" 2>/dev/null || return 0; sleep 0.1; done
    fail "$1 did not stop"
}

if [ "$bin" = --self-check ]; then
    start_app p android-x
    x_id=$(app_id android-x)
    sleep 1.5
    start_app q android-y
    y_id=$(app_id android-y)
    wait_until "said android-x '^linked 8 $y_id' && said android-y '^linked 8 $x_id'" \
        || fail "android-x and android-y did not link"
    said android-y "^found android-x $x_id 10.73.0.2\$" || fail "android-y did not find android-x by mDNS"
    said android-x "^heard android-y $y_id 10.73.0.3\$" || fail "android-x did not hear android-y's identity"
    [ "$(dropped)" = "0 0" ] || fail "the bridge dropped broadcasts (KDE Connect's, all): $(dropped)"
    pass "android-y (started later) found android-x by mDNS and sent its identity by unicast; they linked at \
protocol 8; neither sent a broadcast"

    app android-x share-text too early
    wait_until "said android-y '^dropped kdeconnect.share.request'" || fail "android-y took a share before pairing"
    ! said android-y "^clipboard" || fail "android-y put a share before pairing on its clipboard"
    app android-x pair
    wait_until "said android-x '^code ' && said android-y '^request '" || fail "android-y got no pairing request"
    code=$(awk '/^code / { print $2 }' "$work/android-x.log")
    said android-y "^request $code\$" || fail "android-y shows another code than android-x's $code"
    app android-y accept
    wait_until "said android-x '^paired' && said android-y '^paired'" || fail "android-x and android-y did not pair"
    pass "a share before pairing was dropped; android-x asked to pair, both showed $code, android-y accepted"

    app android-x share-text "hello there"
    app android-y ping
    app android-x ping the pizza is here
    wait_until "said android-y '^clipboard hello there\$' && said android-x '^notification Ping!\$' \
        && said android-y '^notification the pizza is here\$'" || fail "the share or the pings did not arrive"
    pass "android-x's text went to android-y's clipboard; a bare ping showed Ping!, one with a message showed it"

    stop_app android-y
    wait_until "said android-x '^closed $y_id'" || fail "android-x did not see android-y go"
    start_app q android-y 2
    [ "$(app_id android-y)" = "$y_id" ] || fail "android-y came back with another ID"
    wait_until "[ \"\$(grep -c '^linked 8 $x_id' \"$work/android-y.log\")\" -ge 2 ]" \
        || fail "android-y did not link again"
    app android-y share-text "still paired"
    wait_until "said android-x '^clipboard still paired\$'" || fail "android-x did not take android-y's share"
    pass "android-y restarted with its ID and key: they linked again with the stored certificates, still paired"
    stop_app android-x
    stop_app android-y
    echo "$label: $passed passed, 0 failed"
    exit 0
fi

# hexd as host-a, as start_hexd starts it but with its own DNS-SD responder (--mdns on, and a system bus
# that is not there, so that no Avahi outside the namespaces is used). Appends to $work/a.log.
start_hexd_mdns() {
    DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/no-bus" ip netns exec "$tag-a" "$bin/hexd" --data-dir "$work/a" \
        --name host-a --announce-interval 1 --mdns on --web off --notify off --log-level debug 2>>"$work/a.log" &
    hexd_pid=$!
    pids+=($!)
    for _ in $(seq 200); do [ -S "$work/a/hexd.sock" ] && break; sleep 0.05; done
    ctl a wait --timeout 10 >/dev/null 2>&1 || fail "hexd did not start"
}
peer_json() { ctl a peers --json | objects "o.get('name') == '$1'" 'json.dumps(o, separators=(",", ":"))'; }

start_hexd_mdns
hexd_id=$(openssl x509 -in "$work/a/kdeconnect.crt" -noout -subject -nameopt multiline \
    | awk '/commonName/ { print $3 }')
[ ${#hexd_id} -eq 32 ] || fail "hexd's KDE Connect certificate names no 32-digit device ID: $hexd_id"

# a. The app starts after hexd: it finds hexd by mDNS, hexd dials it.
start_app p android-p
p_id=$(app_id android-p)
wait_until "said android-p '^linked 8 $hexd_id'" || fail "android-p did not link with hexd"
said android-p "^found host-a $hexd_id 10.73.0.1\$" || fail "android-p did not find hexd by mDNS"
wait_until '[[ -n "$(peer_json android-p)" ]]' || fail "hexd does not list android-p: $(ctl a peers)"
row=$(peer_json android-p)
[[ "$row" == *'"kind":"kdeconnect"'* && "$row" == *"\"uuid\":\"kdeconnect:$p_id\""* \
    && "$row" == *'"versionID":"8"'* ]] || fail "hexctl peers --json lists android-p as: $row"
read -r kde_dropped all_dropped <<<"$(dropped)"
[ "$all_dropped" -gt 0 ] || fail "the bridge dropped no broadcast: is its rule in place?"
pass "android-p (started after hexd) found hexd by mDNS and linked at protocol 8; hexctl peers lists it as KDE \
Connect 8 (the bridge dropped $kde_dropped KDE Connect broadcasts, $all_dropped UDP broadcasts in all)"

# b. The app starts first, hexd after, and the app's own discovery does not find hexd (--no-browse):
# only hexd's browse, and its identity by unicast, can bring them together.
stop_app android-p
kill "$hexd_pid"
wait "$hexd_pid" 2>/dev/null || true
no_browse=1 start_app q android-q
q_id=$(app_id android-q)
sleep 1.5 # its service published (probed, announced)
start_hexd_mdns
wait_until "said android-q '^linked 8 $hexd_id'" || fail "android-q did not link with hexd"
said android-q "^heard host-a $hexd_id 10.73.0.1\$" || fail "hexd did not send android-q its identity by unicast"
wait_until '[[ "$(peer_json android-q)" == *"\"versionID\":\"8\""* ]]' \
    || fail "hexd does not list android-q at 8: $(ctl a peers)"
pass "hexd (started after android-q) found it by browsing and sent it its identity by unicast UDP; they linked at 8"

# c. The app asks to pair; hexd accepts.
app android-q pair
wait_until "said android-q '^code '" || fail "android-q did not ask to pair: $(tail -3 "$work/android-q.log")"
code=$(awk '/^code / { print $2 }' "$work/android-q.log")
wait_until '[[ "$(peer_json android-q)" == *"awaitingUs\":true"* ]]' || fail "hexd does not show android-q's request"
[[ "$(peer_json android-q)" == *"\"code\":\"$code\""* ]] \
    || fail "hexd's code is not android-q's $code: $(peer_json android-q)"
ctl a pair --accept android-q >/dev/null || fail "hexctl pair --accept android-q failed"
wait_until "said android-q '^paired'" || fail "android-q got no acceptance"
[[ "$(peer_json android-q)" == *'"trust":"paired"'* ]] || fail "hexd does not say android-q is paired"
pass "android-q asked to pair: hexd showed its code ($code); hexctl pair --accept paired both sides"

# d. A note and an alert to the app.
sent=$(ctl a send --to android-q -d "some note text" https://example.org/note 2>&1) \
    || fail "hexctl send --to android-q: $sent"
wait_until "said android-q '^clipboard .*some note text' && said android-q '^notification .*some note text'" \
    || fail "android-q did not get the note on its clipboard and as a notification: $(tail -3 "$work/android-q.log")"
sent=$(ctl a alert --to android-q "the pizza is here" 2>&1) || fail "hexctl alert --to android-q: $sent"
wait_until "said android-q '^notification the pizza is here\$'" || fail "android-q did not show the alert"
pass "hexctl send --to android-q: the note went to its clipboard and a notification; hexctl alert: a notification"

# e. The app pings.
app android-q ping hello
wait_until '[[ "$(ctl a alerts --json --limit 1 2>/dev/null)" == *"\"message\":\"hello\""* ]]' \
    || fail "android-q's ping is not among hexd's alerts: $(ctl a alerts 2>&1)"
[ "$(ctl a alerts --json --limit 1 | json 'data["senderID"]')" = "kdeconnect:$q_id" ] \
    || fail "the ping's alert: $(ctl a alerts --json --limit 1)"
pass "android-q's ping with a message became an Alert from kdeconnect:${q_id:0:8}…"

# f. Hidden, hexd is not found by an app started fresh; visible again, it is.
stop_app android-q
ctl a visibility hidden >/dev/null || fail "hexctl visibility hidden failed"
start_app r android-r
sleep 5
! said android-r "^found host-a" && ! said android-r "^heard host-a" && ! said android-r "^linked" \
    || fail "hidden, hexd was found by android-r, or sent it its identity"
ctl a visibility visible >/dev/null || fail "hexctl visibility visible failed"
wait_until "said android-r '^linked 8 $hexd_id'" || fail "visible again, hexd did not link with android-r"
pass "hidden, hexd was not found by android-r in 5 s, nor sent it its identity; visible again, they linked"
stop_app android-r

echo "$label: $passed passed, 0 failed"
