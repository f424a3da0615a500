#!/usr/bin/env bash
# Two hexd daemons on this machine find each other, one sends the other a hex, the other shows
# it. Each daemon has its own data directory and TCP port; they share the discovery port and
# broadcast on loopback. Everything is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build >/dev/null
bin=$(swift build --show-bin-path)
work=$(mktemp -d /tmp/hexd-demo-XXXXXX)
port=$((20000 + RANDOM % 20000))
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

for name in ada grace; do
    "$bin/hexd" --data-dir "$work/$name" --name "${name^}" --port 0 --discovery-port "$port" \
        --broadcast 127.255.255.255 --announce-interval 0.5 2>"$work/$name.log" &
    pids+=($!)
done
ada() { HEXD_DATA_DIR="$work/ada" "$bin/hexctl" "$@"; }
grace() { HEXD_DATA_DIR="$work/grace" "$bin/hexctl" "$@"; }

ada wait --peer Grace --timeout 20 >/dev/null
grace wait --peer Ada --timeout 20 >/dev/null
echo "== Ada's peers"; ada peers
echo "== Ada sends Grace a hex"; ada send --to grace -d "Reading list" --color "#3498DB" https://swift.org https://www.sqlite.org/wal.html
echo "== Grace's inbox"; grace inbox
id=$(grace inbox --json | grep -o '"id":"[0-9A-F-]*"' | head -n 1 | cut -c7-14)
echo "== Grace looks at it and keeps a copy"; grace inbox show "$id"; grace inbox save "$id" >/dev/null; grace hexlist
echo "== Grace's events"; timeout 1 env HEXD_DATA_DIR="$work/grace" "$bin/hexctl" watch || true
