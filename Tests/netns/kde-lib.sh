# Debian's kdeconnectd (22.12) run headless in the test's namespaces, for kdeconnect.sh and
# kdeconnect-bench.sh: sourced after lib.sh (it uses $work, $tag, pids and fail).

kdeconnectd=/usr/lib/x86_64-linux-gnu/libexec/kdeconnectd
for tool in "$kdeconnectd" kdeconnect-cli dbus-daemon gdbus openssl; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (apt-get install kdeconnect dbus-daemon libglib2.0-bin)"
done

# kdeconnectd in host HOST, named kde-HOST, on a session bus of its own with no service directory
# (nothing is activated behind the test's back), its files under $work/HOST-kde.
start_kdeconnectd() {
    local host=$1 home=$work/$1-kde
    mkdir -p "$home/config/kdeconnect" "$home/runtime" "$home/cwd" "$home/bin"
    chmod 700 "$home/runtime"
    # The opener Qt hands URLs to: it records each, after when (ns since the epoch).
    printf '#!/bin/sh\necho "$(date +%%s%%N) $1" >>"%s"\n' "$work/$host-opened" >"$home/bin/xdg-open"
    chmod +x "$home/bin/xdg-open"
    printf '[General]\nname=kde-%s\n' "$host" >"$home/config/kdeconnect/config"
    cat >"$home/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$home/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
    ip netns exec "$tag-$host" dbus-daemon --config-file="$home/bus.conf" --nofork --nopidfile \
        >"$work/$host-bus.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do [ -S "$home/bus" ] && break; sleep 0.05; done
    [ -S "$home/bus" ] || fail "host-$host's session bus did not start"
    run_kdeconnectd "$host"
}
# Starts kdeconnectd in HOST on its bus (again, after stop_kdeconnectd: it keeps its files) and
# waits until it answers; its PID is in kde_pid[HOST].
declare -A kde_pid
run_kdeconnectd() {
    local host=$1 home=$work/$1-kde
    kde_env "$host"
    # The command itself in the background: its PID is kdeconnectd's, which stops.
    (cd "$home/cwd" && exec ip netns exec "$tag-$host" "${kenv[@]}" "$kdeconnectd" >>"$work/$host-kdeconnectd.log" 2>&1) &
    pids+=($!)
    kde_pid[$host]=$!
    for _ in $(seq 100); do
        kde "$host" gdbus call --timeout 1 --session --dest org.kde.kdeconnect --object-path /modules/kdeconnect \
            --method org.kde.kdeconnect.daemon.announcedName >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    fail "kdeconnectd in host-$host did not start"
}
stop_kdeconnectd() {
    kill "${kde_pid[$1]}"
    wait "${kde_pid[$1]}" 2>/dev/null || true
}
kde_env() {
    local home=$work/$1-kde
    # Qt's offscreen platform opens no URL; vnc (its server only inside the namespace) hands them to
    # xdg-open.
    kenv=(env -i PATH="$home/bin:/usr/sbin:/usr/bin:/sbin:/bin" HOME="$home" XDG_CONFIG_HOME="$home/config"
        XDG_DATA_HOME="$home/data" XDG_CACHE_HOME="$home/cache" XDG_RUNTIME_DIR="$home/runtime"
        DBUS_SESSION_BUS_ADDRESS="unix:path=$home/bus" QT_QPA_PLATFORM=vnc:size=64x64 QT_EXCLUDE_GENERIC_BEARER=1
        QT_LOGGING_RULES="kdeconnect.*.debug=true" LANG=C.UTF-8)
}
kde() { local host=$1; shift; kde_env "$host"; ip netns exec "$tag-$host" "${kenv[@]}" "$@"; }
# Whether kdeconnectd in HOST has a D-Bus object for device ID; kde_device reads its PROPERTY.
kde_sees() {
    local tree
    tree=$(kde "$1" timeout 5 gdbus introspect --session --dest org.kde.kdeconnect --object-path /modules/kdeconnect/devices \
        2>/dev/null) || return 1
    [[ "$tree" == *"node $2 "* ]]
}
kde_device() {
    kde "$1" timeout 10 gdbus call --session --dest org.kde.kdeconnect --object-path "/modules/kdeconnect/devices/$2" \
        --method org.freedesktop.DBus.Properties.Get org.kde.kdeconnect.device "$3" 2>&1
}
kde_id() { kde "$1" kdeconnect-cli --my-id 2>/dev/null; }
