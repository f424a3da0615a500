#!/usr/bin/env bash
# Builds hexd and hexctl statically (the Swift runtime linked in: they need only libc, libstdc++
# and, for hexd, libsqlite3 and libssl) and installs them with a systemd unit, their man pages and hexctl's
# completions for bash, zsh and fish (all made by the binaries from their own option tables).
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

share=$destdir$prefix/share
install -d "$destdir$prefix/bin" "$(dirname "$destdir$unit_target")" "$share/man/man1" "$share/man/man8" \
    "$share/bash-completion/completions" "$share/zsh/site-functions" "$share/fish/vendor_completions.d"
install -m 0755 -s "$bin/hexd" "$bin/hexctl" "$destdir$prefix/bin/"
"$bin/hexctl" --generate-manual > "$share/man/man1/hexctl.1"
"$bin/hexd" --generate-manual > "$share/man/man8/hexd.8"
"$bin/hexctl" --generate-completion-script bash > "$share/bash-completion/completions/hexctl"
"$bin/hexctl" --generate-completion-script zsh > "$share/zsh/site-functions/_hexctl"
"$bin/hexctl" --generate-completion-script fish > "$share/fish/vendor_completions.d/hexctl.fish"
sed "s|$default_binary|$prefix/bin/hexd|" "$unit_source" > "$destdir$unit_target"
chmod 0644 "$destdir$unit_target"
echo "installed $destdir$prefix/bin/hexd and hexctl, their man pages and completions under $share, and $destdir$unit_target"
