#!/usr/bin/env bash
# hexd as a LocalSend receiver beside LocalSend's own, in one run so that the ratios mean something,
# in network namespaces on one bridge: host-a runs hexd, host-b PyPI's localsendd (devB, the sender),
# host-c a second localsendd (devC, the receiver to compare with); and hexd as a LocalSend sender
# beside devC, both sending to devB. It measures:
#   - throughput: a MIB MiB random file sent by devB (`send FILE --to ALIAS --wait`) to hexd, and to
#     devC, timed from the send command's start to the file being whole in the receiver's folder (the
#     SHA-256 checked after timing), median of ROUNDS rounds each (3 unless ROUNDS says), alternating;
#     then the same from the first byte written to whole (the upload alone: devB hashes the file before
#     it offers it), and the CPU time of the receivers and of devB;
#   - throughput the other way: the same file sent to devB (`--unattended`, its downloads folder) by
#     hexd (`hexctl share --to devB FILE`, which sends a LocalSend device the file itself) and by devC
#     (`send FILE --to devB --wait`), timed from the command's start to the file being whole in devB's
#     folder (the SHA-256 checked after timing, the file removed after each round), median of ROUNDS
#     rounds each, alternating; the upload alone as above (devC hashes the file before it offers it,
#     hexd offers it unhashed), and the CPU time of the senders (hexd's daemon, devC's) and of devB;
#   - a plain TLS copy of the same bytes between the same namespaces (openssl s_client in host-b to
#     s_server in host-a writing a file), timed the same way: the ceiling hexd is a percentage of; and
#     s_server's CPU time for its whole run (its start and the handshake too: a fixed cost that a small
#     MIB shows);
#   - the transport alone: the same bytes over plain TCP from host-b into a file in host-a, 1 MiB reads,
#     synced (a Python script, its CPU from getrusage): what the kernel costs any receiver, which the
#     crypto floor below leaves out;
#   - a fast sender, as localsendd's 8 KiB writes cap what devB's sends can show: a script in host-b
#     (Python's ssl, no client certificate, so an older app's offer) posting prepare-upload (no
#     sha256: neither side hashes) and then upload with the file in 1 MiB writes, to hexd and to devC,
#     timed from the upload request's first byte to the receiver's answer (the file whole in its folder
#     by then, its SHA-256 checked after timing), median of ROUNDS, alternating with the rounds above;
#     against the TLS copy, and hexd's and devC's CPU time per transfer;
#   - the same fast sender streaming as LocalSend 1.18's core does (no length: Transfer-Encoding
#     chunked, one 1 MiB chunk per write; the offer with the file's SHA-256, which the receiver
#     checks), to hexd and to devC, timed and checked the same way; and the
#     machine's floor for those bytes, measured in the same run: decrypting them with the connection's
#     cipher plus hashing them with SHA-256 (`openssl speed -evp` of each), which hexd's CPU time per
#     transfer is compared with;
#   - hexd's peak RSS during its transfers (VmRSS every 50 ms) minus its idle RSS before them;
#   - how soon hexd lists a LocalSend device after its announcement: a scripted device in host-b (a
#     TLS server of its own certificate) announces once, `hexctl peers --json` polled every 10 ms,
#     median of 5 devices;
#   - hexd's idle CPU time (/proc's ticks, and perf's task-clock where perf is) and wake-ups (context
#     switches of all its threads) over 20 s with no LocalSend device around, a fresh hexd each way,
#     `--localsend on` against `--localsend off`.
# A benchmark: it prints figures (lines "localsend-bench: ...") and enforces nothing. Touches only the
# namespaces it makes; nothing leaves them; every wait is bounded.
#
# Usage: localsend-bench.sh BIN_DIR [MIB]   (MIB 256 by default, 16 for CI; needs root, iproute2,
#        openssl, python3 with localsendd 0.1.1)
set -euo pipefail
bin=${1:?usage: localsend-bench.sh BIN_DIR [MIB]}
mib=${2:-256}
rounds=${ROUNDS:-3}
tag=hexdlb$$
work=$(mktemp -d /tmp/hexd-localsend-bench-XXXXXX)
pids=()
label=localsend-bench
# shellcheck source=Tests/netns/lib.sh
source "$(dirname "$0")/lib.sh"
began=$(date +%s)

if ! python3 -c "import localsendd"; then
    echo "$label: FAILED: localsendd is not installed (pip install localsendd)"
    exit 1
fi
size=$((mib << 20))
limit=$((60 + mib))     # seconds a transfer may take: at least 1 MiB/s
# A stranger's files count against the inbox's budgets, and stay counted once removed: every round's.
budget="$(((3 * rounds + 2) * mib + 64))MiB"

# --- Helpers, in python: the file watcher, the process sampler, the idle counter, the scripted device.
# watch.py DIR NAME SIZE SECONDS READY: prints when (ns since the epoch) a byte was first in a file of
# DIR, then when DIR/NAME was SIZE bytes ("0 0" when not within SECONDS), polling every 10 ms.
cat >"$work/watch.py" <<'PYTHON'
import os, sys, time
folder, name, size, seconds, ready = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
open(ready, "w").close()
first, end = 0, time.monotonic() + seconds
while time.monotonic() < end:
    if not first:
        try:
            if any(e.is_file() and e.stat().st_size > 0 for e in os.scandir(folder)):
                first = time.time_ns()
        except OSError:
            pass
    try:
        if os.stat(os.path.join(folder, name)).st_size == size:
            print(first or time.time_ns(), time.time_ns())
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.01)
print(0, 0)
PYTHON
# sample.py PID STOP SECONDS SENDER: samples VmRSS every 50 ms until the file STOP exists; prints the
# CPU milliseconds of PID meanwhile, its RSS at the start and its peak (KiB), and SENDER's CPU ms.
cat >"$work/sample.py" <<'PYTHON'
import os, sys, time
pid, stop, seconds, sender = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
tick = 1000 / os.sysconf("SC_CLK_TCK")
def cpu(pid=pid):
    with open(f"/proc/{pid}/stat") as f:
        return sum(int(x) for x in f.read().rsplit(")", 1)[1].split()[11:13]) * tick
def rss():
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
start_cpu, start_rss, sender_cpu = cpu(), rss(), cpu(sender)
peak, end = start_rss, time.monotonic() + seconds
while not os.path.exists(stop) and time.monotonic() < end:
    try:
        peak = max(peak, rss())
    except (OSError, StopIteration):
        break
    time.sleep(0.05)
def since(start, pid):
    try:
        return round(cpu(pid) - start)
    except OSError:
        return -1
print(since(start_cpu, pid), start_rss, peak, since(sender_cpu, sender))
PYTHON
# idle.py PID SECONDS: the CPU milliseconds (utime + stime) of PID over SECONDS, its context switches
# (voluntary and not, of each thread in /proc/PID/task/* at the end, less what it had at the start), its
# threads at the end, and how many came and went meanwhile (the switches of those that went are lost).
cat >"$work/idle.py" <<'PYTHON'
import os, sys, time
pid, seconds = sys.argv[1], float(sys.argv[2])
tick = 1000 / os.sysconf("SC_CLK_TCK")
def snapshot():
    with open(f"/proc/{pid}/stat") as f:
        used = sum(int(x) for x in f.read().rsplit(")", 1)[1].split()[11:13]) * tick
    switches = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                switches[task] = sum(int(line.split()[1]) for line in f if "ctxt_switches" in line)
        except OSError:
            pass
    return used, switches
cpu0, before = snapshot()
time.sleep(seconds)
cpu1, after = snapshot()
woken = sum(count - before.get(task, 0) for task, count in after.items())
print(round(cpu1 - cpu0), woken, len(after), len(after.keys() - before.keys()), len(before.keys() - after.keys()))
PYTHON
# device.py HEXCTL DATA ADDRESS KEYS COUNT: COUNT scripted LocalSend devices one after another, each a
# TLS server of its own certificate (KEYS/N.crt, KEYS/N.key) answering register and info, announcing
# once; prints per device the ms from the announcement to hexd's register and to hexd listing it
# (hexctl peers --json every 10 ms, at most 10 s; -1 when it did not), and the ms a poll took.
cat >"$work/device.py" <<'PYTHON'
import hashlib, http.server, json, os, socket, ssl, subprocess, sys, threading, time
hexctl, data, address, keys, count = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
env = dict(os.environ, HEXD_DATA_DIR=data)
for number in range(count):
    cert, key = f"{keys}/{number}.crt", f"{keys}/{number}.key"
    with open(cert) as pem:
        fingerprint = hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem.read())).hexdigest().upper()
    port = 53340 + number
    info = {"alias": f"bench-{number}", "version": "2.2", "deviceModel": "script", "deviceType": "desktop",
            "fingerprint": fingerprint, "port": port, "protocol": "https", "download": False}
    registered = []
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *args):
            pass
        def do_POST(self):
            if self.path.endswith("/register") and not registered:
                registered.append(time.monotonic())
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.dumps(info).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        do_GET = do_POST
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = http.server.ThreadingHTTPServer((address, port), Handler)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    time.sleep(0.3)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(address))
    announced = time.monotonic()
    sock.sendto(json.dumps(dict(info, announce=True)).encode(), ("224.0.0.167", 53317))
    listed, polls, polled = -1.0, 0, 0.0
    while time.monotonic() < announced + 10:
        before = time.monotonic()
        peers = subprocess.run([hexctl, "peers", "--json"], env=env, capture_output=True, text=True, timeout=5)
        polls, polled = polls + 1, polled + time.monotonic() - before
        if fingerprint in peers.stdout:
            listed = (time.monotonic() - announced) * 1000
            break
        time.sleep(0.01)
    register = (registered[0] - announced) * 1000 if registered else -1.0
    print(f"{listed:.1f} {register:.1f} {polled / max(polls, 1) * 1000:.1f}", flush=True)
    server.shutdown()
    server.server_close()
    time.sleep(0.5)  # hexd registers with at most 4 devices a second
PYTHON

# fast.py ADDRESS FILE NAME [chunked]: LocalSend's upload of FILE, as NAME, to ADDRESS:53317 over TLS (no
# client certificate, the receiver's not checked), prepare-upload, then upload in 1 MiB writes: sized,
# without sha256; or as 1.18's core streams a file, chunked (one chunk per write), the offer with the
# file's sha256, which the receiver then checks;
# prints the ns since the epoch of the upload's first byte and of the answer, and its status ("0 0 ..."
# when it failed, with why).
cat >"$work/fast.py" <<'PYTHON'
import hashlib, json, os, socket, ssl, sys, time
address, path, name = sys.argv[1], sys.argv[2], sys.argv[3]
chunked = sys.argv[4:] == ["chunked"]
size = os.path.getsize(path)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
def connect():
    return context.wrap_socket(socket.create_connection((address, 53317), timeout=60))
def answer(sock):
    reader = sock.makefile("rb")
    status = int(reader.readline().split()[1])
    length = 0
    while (line := reader.readline().strip()):
        key, _, value = line.decode().partition(":")
        length = int(value) if key.strip().lower() == "content-length" else length
    return status, reader.read(length)
def request(sock, target, length, kind):
    framing = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    head = (f"POST {target} HTTP/1.1\r\nHost: {address}:53317\r\nContent-Type: {kind}\r\n"
            f"{framing}\r\nConnection: close\r\n\r\n")
    sock.sendall(head.encode())
try:
    info = {"alias": "fast", "version": "2.1", "deviceModel": None, "deviceType": "desktop",
            "fingerprint": "ab" * 32, "port": 53317, "protocol": "https", "download": False}
    files = {"f1": {"id": "f1", "fileName": name, "size": size, "fileType": "application/octet-stream"}}
    if chunked:  # 1.18 hashes the file before its offer (send_provider.dart, createChecksums): so this one does
        digest = hashlib.sha256()
        with open(path, "rb") as source:
            while (block := source.read(1 << 20)):
                digest.update(block)
        files["f1"]["sha256"] = digest.hexdigest()
    body = json.dumps({"info": info, "files": files}).encode()
    with connect() as sock:
        request(sock, "/api/localsend/v2/prepare-upload", len(body), "application/json")
        sock.sendall(body)
        status, reply = answer(sock)
    if status != 200:
        print(0, 0, f"prepare-upload {status} {reply[:200]!r}")
        sys.exit(0)
    reply = json.loads(reply)
    session, token = reply["sessionId"], reply["files"]["f1"]
    with connect() as sock, open(path, "rb", buffering=0) as data:
        block = bytearray(1 << 20)
        view = memoryview(block)
        first = time.time_ns()
        request(sock, f"/api/localsend/v2/upload?sessionId={session}&fileId=f1&token={token}",
                None if chunked else size, "application/octet-stream")
        while (count := data.readinto(block)):
            if chunked:
                sock.sendall(f"{count:X}\r\n".encode())
            sock.sendall(view[:count])
            if chunked:
                sock.sendall(b"\r\n")
        if chunked:
            sock.sendall(b"0\r\n\r\n")
        status, reply = answer(sock)
        done = time.time_ns()
        cipher = sock.cipher()[0]
    ok = status == 200
    print(first if ok else 0, done if ok else 0, f"cipher={cipher} upload {status} {reply[:200]!r}")
except Exception as error:
    print(0, 0, f"{type(error).__name__}: {error}")
PYTHON

# transport.py receive ADDRESS FILE | send ADDRESS FILE: the transport alone, for the floor of what any
# receiver's kernel costs: plain TCP on port 5001, no TLS and no hash; the receiver takes 1 MiB at a time
# into FILE and syncs it, then prints its own CPU milliseconds (user and system, from getrusage) and the
# ms from the first byte to synced; the sender writes FILE in 1 MiB blocks.
cat >"$work/transport.py" <<'PYTHON'
import os, resource, socket, sys, time
role, address, path = sys.argv[1], sys.argv[2], sys.argv[3]
if role == "send":
    for _ in range(100):  # the receiver may not listen yet
        try:
            sock = socket.create_connection((address, 5001), timeout=60)
            break
        except OSError:
            time.sleep(0.05)
    else:
        sys.exit("transport.py: nothing listens")
    with sock, open(path, "rb", buffering=0) as data:
        while (block := data.read(1 << 20)):
            sock.sendall(block)
    sys.exit(0)
server = socket.create_server((address, 5001))
server.settimeout(60)
connection, _ = server.accept()
connection.settimeout(60)
out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
block = bytearray(1 << 20)
view = memoryview(block)
before = resource.getrusage(resource.RUSAGE_SELF)
count = connection.recv_into(block)
first = time.monotonic()
while count:
    os.write(out, view[:count])
    count = connection.recv_into(block)
os.fdatasync(out)
after = resource.getrusage(resource.RUSAGE_SELF)
used = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
print(round(used), round((time.monotonic() - first) * 1000))
PYTHON
# rusage.py OUT COMMAND...: runs COMMAND (its standard input and output this one's) and appends its CPU
# milliseconds (user and system) to OUT.
cat >"$work/rusage.py" <<'PYTHON'
import resource, subprocess, sys
subprocess.run(sys.argv[2:])
used = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "a") as out:
    out.write(f"{round((used.ru_utime + used.ru_stime) * 1000)}\n")
PYTHON

# --- The namespaces: host-a (hexd), host-b (devB, the sender), host-c (devC), on one bridge.
make_bridge
join_bridge a 10.68.0.1/24
join_bridge b 10.68.0.2/24
join_bridge c 10.68.0.3/24
# Multicast leaves by the route to the group: the bridge, in each namespace.
for host in a b c; do ip -n "$tag-$host" route add 224.0.0.0/4 dev "s$host$$"; done

# localsendd in host HOST (b or c), its state, socket and downloads in $work/lsd-HOST.
lsd() {
    local host=$1; shift
    ip netns exec "$tag-$host" env XDG_STATE_HOME="$work/lsd-$host/state" XDG_CONFIG_HOME="$work/lsd-$host/config" "$@"
}
lsctl() {  # HOST ARGUMENTS...: localsendd's control CLI, at most $limit s
    local host=$1; shift
    lsd "$host" timeout "$limit" python3 -c 'import sys; from localsendd.cli import main; sys.exit(main())' \
        --socket "$work/lsd-$host.sock" "$@"
}
start_localsendd() {  # HOST ALIAS: prints its PID (python's: no function in between; no output kept open)
    local host=$1 alias=$2
    mkdir -p "$work/lsd-$host/downloads"
    ip netns exec "$tag-$host" env XDG_STATE_HOME="$work/lsd-$host/state" XDG_CONFIG_HOME="$work/lsd-$host/config" \
        python3 -m localsendd --port 53317 --socket "$work/lsd-$host.sock" --alias "$alias" --unattended \
        --download-dir "$work/lsd-$host/downloads" --log-level info >/dev/null 2>>"$work/lsd-$host.log" &
    echo $!
}
lsd_b=$(start_localsendd b devB)
lsd_c=$(start_localsendd c devC)
pids+=("$lsd_b" "$lsd_c")

bench_hexd() {  # DATA LOCALSEND [OPTIONS...]: hexd in host-a; prints its PID once it answers hexctl
    local data=$1 localsend=$2; shift 2
    ip netns exec "$tag-a" "$bin/hexd" --kdeconnect off --data-dir "$work/$data" --name host-a --mdns off \
        --web off --notify off --localsend "$localsend" --log-level debug "$@" >/dev/null 2>"$work/$data.log" &
    local pid=$!
    for _ in $(seq 200); do [ -S "$work/$data/hexd.sock" ] && break; sleep 0.05; done
    for _ in $(seq 100); do
        HEXD_DATA_DIR="$work/$data" "$bin/hexctl" wait --timeout 1 >/dev/null 2>&1 && break
        sleep 0.05
    done
    echo "$pid"
}
stop() {  # PID: SIGTERM, then SIGKILL after 5 s
    kill "$1" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
hexd_pid=$(bench_hexd a on --announce-interval 1 --downloads "$work/a-downloads" \
    --sender-budget "$budget" --strangers-budget "$budget" --inbox-budget "$budget")
pids+=("$hexd_pid")
ctl a status >/dev/null 2>&1 || fail "hexd did not start"
for host in b c; do
    for _ in $(seq 100); do [ -S "$work/lsd-$host.sock" ] && break; sleep 0.05; done
    [ -S "$work/lsd-$host.sock" ] || fail "localsendd did not start in host-$host"
done
# devB sends by alias: it has to list both receivers first.
listed=""
for _ in $(seq 200); do
    listed=$(lsctl b devices --json 2>/dev/null || true)
    [[ "$listed" == *'"host-a"'* && "$listed" == *'"devC"'* ]] && break
    sleep 0.1
done
[[ "$listed" == *'"host-a"'* && "$listed" == *'"devC"'* ]] || fail "devB does not list host-a and devC: $listed"

# --- Announcement to listed: five scripted devices in host-b, one after another.
mkdir -p "$work/keys"
for number in $(seq 0 4); do
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=LocalSend -keyout "$work/keys/$number.key" \
        -out "$work/keys/$number.crt" 2>/dev/null
done
ip netns exec "$tag-b" timeout 120 python3 "$work/device.py" "$bin/hexctl" "$work/a" 10.68.0.2 "$work/keys" 5 \
    >"$work/discovered" || true

# --- Transfers: the file, the TLS server's certificate, the disk's own speed for context.
head -c "$size" /dev/urandom >"$work/bench.bin"
sync  # no writeback of it meanwhile
digest=$(sha256sum <"$work/bench.bin")
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=ceiling -keyout "$work/tls.key" -out "$work/tls.crt" \
    2>/dev/null
mkdir -p "$work/tls-in" "$work/a-downloads"
mkfifo "$work/silence"
exec 3<>"$work/silence"  # nothing is ever written to it, and it never ends
disk_start=$(date +%s%N)
dd if="$work/bench.bin" of="$work/tls-in/dd.bin" bs=1M conv=fsync 2>/dev/null
disk_ms=$((($(date +%s%N) - disk_start) / 1000000))
rm -f "$work/tls-in/dd.bin"

# One transfer of the file, round NUMBER, by KIND: hexd, localsendd or tls (devB, or s_client, to
# hexd, devC or s_server), or from-hexd or from-localsendd (hexd or devC to devB). Appends to
# $work/results "KIND NUMBER START FIRST WHOLE CPU_MS RSS_START_KIB RSS_PEAK_KIB SENDER_CPU_MS GOOD"
# (times in ns since the epoch, FIRST and WHOLE 0 when the file did not land whole; CPU the
# receiver's, and the sender's: devB's, which for tls sends nothing, or hexd's or devC's; GOOD yes
# when its SHA-256 is the file's).
transfer() {
    local kind=$1 number=$2 folder receiver sender=$lsd_b server=""
    case $kind in
        hexd | fast-hexd | chunked-hexd) folder=$work/a-downloads receiver=$hexd_pid ;;
        localsendd | fast-localsendd | chunked-localsendd) folder=$work/lsd-c/downloads receiver=$lsd_c ;;
        from-hexd) folder=$work/lsd-b/downloads receiver=$lsd_b sender=$hexd_pid ;;
        from-localsendd) folder=$work/lsd-b/downloads receiver=$lsd_b sender=$lsd_c ;;
        tls)
            folder=$work/tls-in
            # s_server reads its standard input too: one at its end makes it stop, or spin.
            ip netns exec "$tag-a" python3 "$work/rusage.py" "$work/tls-cpu" openssl s_server -quiet -naccept 1 \
                -accept 4433 -cert "$work/tls.crt" -key "$work/tls.key" <&3 >"$folder/bench.bin" 2>>"$work/tls.log" &
            server=$!
            receiver=$server
            for _ in $(seq 100); do
                [ -n "$(ip netns exec "$tag-a" ss -Hltn 'sport = :4433')" ] && break
                sleep 0.05
            done
            ;;
    esac
    rm -f "$work/ready" "$work/stop"
    python3 "$work/watch.py" "$folder" bench.bin "$size" "$limit" "$work/ready" >"$work/watched" &
    local watcher=$!
    python3 "$work/sample.py" "$receiver" "$work/stop" "$((limit + 30))" "$sender" >"$work/sampled" &
    local sampler=$!
    for _ in $(seq 100); do [ -f "$work/ready" ] && break; sleep 0.02; done
    local start
    start=$(date +%s%N)
    case $kind in
        hexd | localsendd)
            local to=host-a
            [ "$kind" = localsendd ] && to=devC
            lsctl b send "$work/bench.bin" --to "$to" --wait --quiet >"$work/sent" 2>&1 || true
            ;;
        from-hexd)
            HEXD_DATA_DIR="$work/a" ip netns exec "$tag-a" timeout "$limit" "$bin/hexctl" share --to devB \
                --send-timeout "$limit" "$work/bench.bin" >"$work/sent" 2>&1 || true
            ;;
        from-localsendd)
            lsctl c send "$work/bench.bin" --to devB --wait --quiet >"$work/sent" 2>&1 || true
            ;;
        fast-hexd | fast-localsendd | chunked-hexd | chunked-localsendd)
            local address=10.68.0.1 framing=""
            [[ "$kind" == *-localsendd ]] && address=10.68.0.3
            [[ "$kind" == chunked-* ]] && framing=chunked
            ip netns exec "$tag-b" timeout "$limit" python3 "$work/fast.py" "$address" "$work/bench.bin" bench.bin \
                $framing >"$work/sent" 2>&1 || true
            ;;
        tls)
            ip netns exec "$tag-b" timeout "$limit" openssl s_client -quiet -no_ign_eof -nocommands \
                -connect 10.68.0.1:4433 <"$work/bench.bin" >/dev/null 2>>"$work/tls.log" || true
            echo "sent" >"$work/sent"
            ;;
    esac
    wait "$watcher" || true
    touch "$work/stop"
    wait "$sampler" || true
    if [ -n "$server" ]; then  # s_server ends after its one connection, and then says what it used
        for _ in $(seq 100); do kill -0 "$server" 2>/dev/null || break; sleep 0.05; done
        stop "$server"
    fi
    local first whole cpu rss_start rss_peak sender_cpu good=no
    read -r first whole <"$work/watched" || true
    read -r cpu rss_start rss_peak sender_cpu <"$work/sampled" || true
    if [[ "$kind" == fast-* || "$kind" == chunked-* ]]; then  # timed by the sender: first byte to answer
        local upload=0 answered=0
        read -r upload answered _ <"$work/sent" || true
        grep -ao 'cipher=[A-Za-z0-9_-]*' "$work/sent" | cut -d= -f2 >"$work/cipher" || true
        [ "$answered" = 0 ] && whole=0
        [ "$whole" = 0 ] || whole=$answered first=$upload start=$upload
    fi
    first=${first:-0} whole=${whole:-0} cpu=${cpu:--1} rss_start=${rss_start:-0} rss_peak=${rss_peak:-0}
    sender_cpu=${sender_cpu:--1}
    if [ "$whole" != 0 ]; then
        [ "$(sha256sum <"$folder/bench.bin")" = "$digest" ] && good=yes
        [ "$good" = yes ] || echo "$label: round $number to $kind: the file landed, but its SHA-256 differs"
    else
        echo "$label: round $number to $kind: no whole file within $limit s ($(tr -d '\r' <"$work/sent" | tail -1))"
    fi
    echo "$kind $number $start $first $whole $cpu $rss_start $rss_peak $sender_cpu $good" >>"$work/results"
    rm -rf "${folder:?}"/*
    sleep 1
}
: >"$work/results"
for number in $(seq "$rounds"); do
    for kind in hexd localsendd tls fast-hexd fast-localsendd chunked-hexd chunked-localsendd; do
        transfer "$kind" "$number"
    done
done
# The transport alone, ROUNDS times: TCP into a synced file, no TLS, no hash.
: >"$work/transport"
for _ in $(seq "$rounds"); do
    ip netns exec "$tag-a" timeout "$limit" python3 "$work/transport.py" receive 10.68.0.1 "$work/tls-in/tcp.bin" \
        >>"$work/transport" &
    receiver=$!
    ip netns exec "$tag-b" timeout "$limit" python3 "$work/transport.py" send 10.68.0.1 "$work/bench.bin" || true
    wait "$receiver" || true
    rm -f "$work/tls-in/tcp.bin"
    sleep 1
done
# hexd and devC send to devB by alias: each has to list it first.
by_a="" by_c=""
for _ in $(seq 200); do
    by_a=$(ctl a peers --json 2>/dev/null || true)
    by_c=$(lsctl c devices --json 2>/dev/null || true)
    [[ "$by_a" == *'"devB"'* && "$by_c" == *'"devB"'* ]] && break
    sleep 0.1
done
[[ "$by_a" == *'"devB"'* ]] || fail "hexd does not list devB: $by_a"
[[ "$by_c" == *'"devB"'* ]] || fail "devC does not list devB: $by_c"
for number in $(seq "$rounds"); do
    for kind in from-hexd from-localsendd; do transfer "$kind" "$number"; done
done

# --- Idle: no LocalSend device around (devB, devC and the first hexd stopped), a fresh hexd each way.
stop "$hexd_pid"
stop "$lsd_b"
stop "$lsd_c"
for mode in on off; do
    idle_pid=$(bench_hexd "idle-$mode" "$mode")
    pids+=("$idle_pid")
    sleep 3  # past the announcements at start (100 ms, 500 ms, 2 s)
    # perf's task-clock, where perf is, counts the CPU time finer than /proc's 10 ms ticks.
    perf_pid=""
    if command -v perf >/dev/null; then
        perf stat -x, -e task-clock -p "$idle_pid" -o "$work/idle-$mode.perf" -- sleep 20 >/dev/null 2>&1 &
        perf_pid=$!
    fi
    python3 "$work/idle.py" "$idle_pid" 20 >"$work/idle-$mode.counted" \
        || echo "-1 -1 0 0 0" >"$work/idle-$mode.counted"
    [ -n "$perf_pid" ] && { wait "$perf_pid" || true; }
    stop "$idle_pid"
done

# The floor: the connection's cipher (what hexd's TLS with the fast sender agreed on) and SHA-256, each
# over 16 KiB blocks for 3 s, in bytes a second.
cipher=$(cat "$work/cipher" 2>/dev/null || true)
case $cipher in
    *CHACHA20*) evp=chacha20-poly1305 ;;
    *AES_128_GCM* | *AES128-GCM*) evp=aes-128-gcm ;;
    *) evp=aes-256-gcm cipher=${cipher:-TLS_AES_256_GCM_SHA384} ;;
esac
speed() { openssl speed -evp "$1" -bytes 16384 -seconds 3 2>/dev/null | awk -v name="$1" 'tolower($0) ~ name && /k$/ {
    value = $NF; sub(/k$/, "", value); print value * 1000 }' | tail -1; }
echo "$cipher $(speed "$evp") $(speed sha256)" >"$work/floor"

# --- The figures.
python3 - "$work" "$mib" "$disk_ms" "$(($(date +%s) - began))" <<'PYTHON'
import statistics, sys
work, mib, disk, took = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
say = lambda text: print("localsend-bench: " + text)
rows = {kind: [] for kind in ("hexd", "localsendd", "tls", "fast-hexd", "fast-localsendd", "chunked-hexd",
                              "chunked-localsendd", "from-hexd", "from-localsendd")}
with open(f"{work}/results") as results:
    for line in results:
        kind, number, start, first, whole, cpu, rss_start, rss_peak, sender, good = line.split()
        rows[kind].append(dict(start=int(start), first=int(first), whole=int(whole), cpu=int(cpu),
                               rss_start=int(rss_start), rss_peak=int(rss_peak), sender=int(sender),
                               good=good == "yes"))
def landed(kind):
    return [r for r in rows[kind] if r["whole"] and r["good"]]
def median_rate(kind, since):
    seconds = [(r["whole"] - r[since]) / 1e9 for r in landed(kind)]
    if not seconds:
        return None, "none landed"
    return mib / statistics.median(seconds), "/".join(f"{s:.2f}" for s in seconds) + " s"
def rate_text(rate):
    return "n/a" if rate is None else f"{rate:.1f} MiB/s"
def ratio(a, b):
    return "n/a" if a is None or b is None or b == 0 else f"{a / b:.2f}"
def percent(a, b):
    return "n/a" if a is None or b is None or b == 0 else f"{a / b * 100:.0f} %"
hexd, hexd_rounds = median_rate("hexd", "start")
lsd, lsd_rounds = median_rate("localsendd", "start")
say(f"{mib} MiB from localsendd, send start to whole, median of {len(rows['hexd'])} rounds: to hexd "
    f"{rate_text(hexd)} ({hexd_rounds}), to localsendd {rate_text(lsd)} ({lsd_rounds}); hexd/localsendd "
    f"{ratio(hexd, lsd)}")
hexd_up, hexd_up_rounds = median_rate("hexd", "first")
lsd_up, lsd_up_rounds = median_rate("localsendd", "first")
say(f"the upload alone (first byte written to whole): hexd {rate_text(hexd_up)} ({hexd_up_rounds}), "
    f"localsendd {rate_text(lsd_up)} ({lsd_up_rounds}); hexd/localsendd {ratio(hexd_up, lsd_up)}")
tls, tls_rounds = median_rate("tls", "start")
tls_up, tls_up_rounds = median_rate("tls", "first")
say(f"plain TLS copy (openssl s_client -> s_server, same namespaces), median of {len(rows['tls'])}: "
    f"{rate_text(tls)} ({tls_rounds}); hexd at {percent(hexd, tls)} of it; first byte written to whole "
    f"{rate_text(tls_up)} ({tls_up_rounds}), hexd's upload alone at {percent(hexd_up, tls_up)} of it")
def cpu(kind, key):
    return statistics.median([r[key] for r in rows[kind]]) if rows[kind] else -1
fast, fast_rounds = median_rate("fast-hexd", "first")
fast_lsd, fast_lsd_rounds = median_rate("fast-localsendd", "first")
say(f"a fast sender (Python ssl, 1 MiB writes) to hexd: {rate_text(fast)} ({fast_rounds}, the upload's first "
    f"byte to the answer, median of {len(rows['fast-hexd'])}); plain TLS copy {rate_text(tls_up)} first byte "
    f"to whole ({rate_text(tls)} from the start); hexd at {percent(fast, tls_up)} of it "
    f"({percent(fast, tls)}); hexd's CPU {cpu('fast-hexd', 'cpu'):.0f} ms per {mib} MiB")
say(f"the fast sender to localsendd (devC): {rate_text(fast_lsd)} ({fast_lsd_rounds}), its CPU "
    f"{cpu('fast-localsendd', 'cpu'):.0f} ms per {mib} MiB; receivers hexd/localsendd {ratio(fast, fast_lsd)}; "
    f"localsendd at {percent(fast_lsd, tls_up)} of the TLS copy")
chunked, chunked_rounds = median_rate("chunked-hexd", "first")
chunked_lsd, chunked_lsd_rounds = median_rate("chunked-localsendd", "first")
say(f"a chunked sender (1 MiB chunks, as LocalSend 1.18 streams) to hexd: {rate_text(chunked)} ({chunked_rounds}), "
    f"to localsendd: {rate_text(chunked_lsd)} ({chunked_lsd_rounds}); receivers hexd/localsendd "
    f"{ratio(chunked, chunked_lsd)}; CPU per {mib} MiB: hexd {cpu('chunked-hexd', 'cpu'):.0f} ms, localsendd "
    f"{cpu('chunked-localsendd', 'cpu'):.0f} ms")
with open(f"{work}/floor") as floor_file:
    cipher, decrypt, digest_rate = floor_file.read().split()
floor_ms = mib * 1048576 / float(decrypt) * 1000 + mib * 1048576 / float(digest_rate) * 1000
say(f"the floor for {mib} MiB on this machine: {cipher} at {float(decrypt) / 1e9:.2f} GB/s and SHA-256 at "
    f"{float(digest_rate) / 1e9:.2f} GB/s (openssl speed -evp, 16 KiB blocks) make {floor_ms:.0f} ms; hexd's CPU "
    f"per chunked upload {cpu('chunked-hexd', 'cpu') / floor_ms:.2f}x it, per sized upload "
    f"{cpu('fast-hexd', 'cpu') / floor_ms:.2f}x")
def medians(path):  # each column's median over the lines of PATH, and how many lines there were
    try:
        with open(path) as lines:
            rows = [list(map(int, line.split())) for line in lines if line.strip()]
    except (OSError, ValueError):
        return None, 0
    return ([statistics.median(column) for column in zip(*rows)] if rows else None), len(rows)
(transport, transport_rounds), (s_server, s_server_rounds) = medians(f"{work}/transport"), medians(f"{work}/tls-cpu")
chunked_cpu = cpu('chunked-hexd', 'cpu')
if transport:
    transport_cpu, transport_ms = transport
    say(f"the transport alone (plain TCP from host-b into a synced file in host-a, 1 MiB reads, no TLS, no "
        f"hash), median of {transport_rounds}: {transport_cpu:.0f} ms CPU per {mib} MiB, "
        f"{mib / transport_ms * 1000:.1f} MiB/s; the floor and it make {floor_ms + transport_cpu:.0f} ms, of which "
        f"hexd's CPU per chunked upload is {chunked_cpu / (floor_ms + transport_cpu):.2f}x "
        f"({chunked_cpu - floor_ms - transport_cpu:.0f} ms more)")
else:
    say("the transport alone: not measured (no round finished)")
if s_server:
    say(f"openssl s_server's CPU for the TLS copy, its whole run (start and handshake too; decrypting, writing "
        f"16 KiB at a time, no hash, no sync), median of {s_server_rounds}: {s_server[0]:.0f} ms per {mib} MiB, "
        f"{s_server[0] / floor_ms:.2f}x the floor")
say(f"CPU time per {mib} MiB, median: receiving, hexd {cpu('hexd', 'cpu'):.0f} ms, localsendd "
    f"{cpu('localsendd', 'cpu'):.0f} ms; sending (devB), to hexd {cpu('hexd', 'sender'):.0f} ms, to localsendd "
    f"{cpu('localsendd', 'sender'):.0f} ms")
out, out_rounds = median_rate("from-hexd", "start")
lsd_out, lsd_out_rounds = median_rate("from-localsendd", "start")
say(f"{mib} MiB to localsendd (devB), send start to whole, median of {len(rows['from-hexd'])}: from hexd "
    f"{rate_text(out)} ({out_rounds}), from localsendd {rate_text(lsd_out)} ({lsd_out_rounds}); hexd/localsendd "
    f"{ratio(out, lsd_out)}")
out_up, out_up_rounds = median_rate("from-hexd", "first")
lsd_out_up, lsd_out_up_rounds = median_rate("from-localsendd", "first")
say(f"to devB, the upload alone (first byte written to whole): from hexd {rate_text(out_up)} ({out_up_rounds}), "
    f"from localsendd {rate_text(lsd_out_up)} ({lsd_out_up_rounds}); hexd/localsendd {ratio(out_up, lsd_out_up)}")
say(f"CPU time per {mib} MiB to devB, median: sending, hexd {cpu('from-hexd', 'sender'):.0f} ms, localsendd (devC) "
    f"{cpu('from-localsendd', 'sender'):.0f} ms; receiving (devB), from hexd {cpu('from-hexd', 'cpu'):.0f} ms, "
    f"from localsendd {cpu('from-localsendd', 'cpu'):.0f} ms")
if rows["hexd"]:
    idle = rows["hexd"][0]["rss_start"] / 1024
    peak = max(r["rss_peak"] for r in rows["hexd"]) / 1024
    peaks = "/".join(f"{r['rss_peak'] / 1024:.1f}" for r in rows["hexd"])
    say(f"hexd RSS: idle {idle:.1f} MiB before the transfers, peak {peak:.1f} MiB during them "
        f"(+{peak - idle:.1f} MiB; rounds' peaks {peaks} MiB)")
found = []
with open(f"{work}/discovered") as discovered:
    found = [tuple(map(float, line.split())) for line in discovered if line.strip()]
listed = [f[0] for f in found if f[0] >= 0]
if listed:
    say(f"announcement -> listed by hexd, median of {len(listed)} of {len(found)} devices: "
        f"{statistics.median(listed):.0f} ms (each {'/'.join(f'{x:.0f}' for x in listed)}; hexd's register "
        f"reached the device after {statistics.median(f[1] for f in found if f[1] >= 0):.0f} ms; a poll "
        f"takes {statistics.median(f[2] for f in found):.0f} ms)")
else:
    say(f"announcement -> listed by hexd: none of {len(found)} devices was listed within 10 s")
idle = {}
for mode in ("on", "off"):
    with open(f"{work}/idle-{mode}.counted") as counted:
        idle[mode] = tuple(int(x) for x in counted.read().split())
    try:
        with open(f"{work}/idle-{mode}.perf") as counted:
            clock = next(float(line.split(",")[0]) for line in counted if "task-clock" in line)
        idle[mode] += (clock, f", perf task-clock {clock:.1f} ms")
    except (OSError, StopIteration, ValueError):
        idle[mode] += (None, "")
def threads(mode):
    _, _, count, came, went = idle[mode][:5]
    return f"{count} threads" + (f", {came} came and {went} went" if came or went else "")
(on_cpu, on_wakes, _, _, _, on_clock, on_perf) = idle["on"]
(off_cpu, off_wakes, _, _, _, off_clock, off_perf) = idle["off"]
say(f"idle 20 s, no LocalSend device: --localsend on {on_cpu} ms CPU{on_perf}, {on_wakes} wake-ups "
    f"({threads('on')}); off {off_cpu} ms CPU{off_perf}, {off_wakes} wake-ups ({threads('off')}); "
    f"on/off CPU {ratio(on_cpu, off_cpu)}{'' if on_clock is None else ' (perf ' + ratio(on_clock, off_clock) + ')'}"
    f", wake-ups {ratio(on_wakes, off_wakes)}")
say(f"context: dd writes and fsyncs the {mib} MiB on the receivers' disk in {disk} ms; "
    f"the run took {took} s")
PYTHON
