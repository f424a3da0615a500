#!/usr/bin/env bash
# Builds hexd and hexctl statically (the Swift runtime linked in: hexd needs only libc, libstdc++,
# libsqlite3 and libssl; hexctl only libc) and installs them with a systemd unit, their man pages,
# hexctl's completions for bash, zsh and fish (all made by the binaries from their own option tables),
# the rclone link command in <prefix>/share/hexd, and, system-wide, a firewalld service and a ufw
# profile for hexd's ports (not enabled: see below).
#
#   Examples/install.sh            system-wide: PREFIX=/usr/local, unit in /etc/systemd/system (as root)
#   Examples/install.sh --user     for you: PREFIX=~/.local, unit in ~/.config/systemd/user
#
# PREFIX and DESTDIR (a staging root for packagers) are honoured. Then:
#   systemctl daemon-reload && systemctl enable --now hexd                  (system)
#   systemctl --user daemon-reload && systemctl --user enable --now hexd    (--user)
# and, where a firewall drops what peers send (hexctl status gives a hint after a quiet minute):
#   firewall-cmd --permanent --add-service=hexd && firewall-cmd --reload    (firewalld)
#   ufw allow hexd                                                          (ufw)
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
bin=$(swift build -c release --static-swift-stdlib --show-bin-path)

# hexctl runs once per command a script gives, so it is built to start quickly, in a build folder
# of its own: libstdc++ and libgcc linked in (loading the shared libstdc++ was half its start) and
# not position-independent (no relocations to apply at each start). hexd, a daemon that listens
# on the network, stays position-independent (address-space randomisation).
hexctl_flags=(-Xswiftc -Xclang-linker -Xswiftc -no-pie)
libstdcxx=$(gcc -print-file-name=libstdc++.a 2>/dev/null || true)
if [ -f "$libstdcxx" ]; then
    # The driver asks for -lstdc++: a folder holding only the archive makes that the static one.
    mkdir -p .build-hexctl/static-libstdcxx
    ln -sf "$libstdcxx" .build-hexctl/static-libstdcxx/libstdc++.a
    hexctl_flags+=(-Xlinker -L"$PWD/.build-hexctl/static-libstdcxx" -Xswiftc -Xclang-linker -Xswiftc -static-libgcc)
fi
swift build -c release --static-swift-stdlib --scratch-path .build-hexctl --product hexctl "${hexctl_flags[@]}" >&2
hexctl_bin=$(swift build -c release --static-swift-stdlib --scratch-path .build-hexctl --show-bin-path)

share=$destdir$prefix/share
install -d "$destdir$prefix/bin" "$(dirname "$destdir$unit_target")" "$share/man/man1" "$share/man/man8" \
    "$share/bash-completion/completions" "$share/zsh/site-functions" "$share/fish/vendor_completions.d"
install -m 0755 -s "$bin/hexd" "$hexctl_bin/hexctl" "$destdir$prefix/bin/"
"$hexctl_bin/hexctl" --generate-manual > "$share/man/man1/hexctl.1"
"$bin/hexd" --generate-manual > "$share/man/man8/hexd.8"
"$hexctl_bin/hexctl" --generate-completion-script bash > "$share/bash-completion/completions/hexctl"
"$hexctl_bin/hexctl" --generate-completion-script zsh > "$share/zsh/site-functions/_hexctl"
"$hexctl_bin/hexctl" --generate-completion-script fish > "$share/fish/vendor_completions.d/hexctl.fish"
install -D -m 0755 Examples/link-commands/rclone-link "$share/hexd/rclone-link"
sed "s|$default_binary|$prefix/bin/hexd|" "$unit_source" > "$destdir$unit_target"
chmod 0644 "$destdir$unit_target"
firewall="the firewall profiles stay in Examples/ (they are system-wide)"
if ! $user; then
    install -D -m 0644 Examples/firewalld/hexd.xml "$destdir/etc/firewalld/services/hexd.xml"
    install -D -m 0644 Examples/ufw/hexd "$destdir/etc/ufw/applications.d/hexd"
    firewall="$destdir/etc/firewalld/services/hexd.xml and $destdir/etc/ufw/applications.d/hexd"
fi
echo "installed $destdir$prefix/bin/hexd and hexctl, their man pages and completions under $share," \
    "$share/hexd/rclone-link," \
    "$destdir$unit_target, and $firewall"
