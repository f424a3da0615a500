#!/usr/bin/env bash
# Builds hexd and hexctl statically (the Swift runtime linked in: they need only libc, libstdc++
# and libsqlite3, for hexd) and installs them with a systemd unit.
#
#   Examples/install.sh            system-wide: PREFIX=/usr/local, unit in /etc/systemd/system (as root)
#   Examples/install.sh --user     for you: PREFIX=~/.local, unit in ~/.config/systemd/user
#
# PREFIX and DESTDIR (a staging root for packagers) are honoured. Then:
#   systemctl daemon-reload && systemctl enable --now hexd                  (system)
#   systemctl --user daemon-reload && systemctl --user enable --now hexd    (--user)
set -euo pipefail
cd "$(dirname "$0")/.."
user=false
[ "${1:-}" = "--user" ] && user=true
if $user; then
    prefix=${PREFIX:-$HOME/.local}
    unit_source=Examples/hexd-user.service
    unit_target=${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user/hexd.service
    default_binary='%h/.local/bin/hexd'
else
    prefix=${PREFIX:-/usr/local}
    unit_source=Examples/hexd.service
    unit_target=/etc/systemd/system/hexd.service
    default_binary=/usr/local/bin/hexd
fi
destdir=${DESTDIR:-}

swift build -c release --static-swift-stdlib --product hexd >&2
swift build -c release --static-swift-stdlib --product hexctl >&2
bin=$(swift build -c release --static-swift-stdlib --show-bin-path)

install -d "$destdir$prefix/bin" "$(dirname "$destdir$unit_target")"
install -m 0755 -s "$bin/hexd" "$bin/hexctl" "$destdir$prefix/bin/"
sed "s|$default_binary|$prefix/bin/hexd|" "$unit_source" > "$destdir$unit_target"
chmod 0644 "$destdir$unit_target"
echo "installed $destdir$prefix/bin/hexd, $destdir$prefix/bin/hexctl and $destdir$unit_target"
