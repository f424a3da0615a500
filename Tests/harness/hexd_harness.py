"""Real hexd processes on loopback for the Python-driven tests (Tests/web, Tests/dbus): each
daemon in a directory of the run's own, its log kept for the failure report, everything stopped
and removed at the end.

    with Harness(bin_dir, label="page") as run:
        ada = run.start("Ada", discovery, ["--web", "127.0.0.1:0"])
        run.hexctl(ada, "status")
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def store_envelope(sender_name, description, links, sender_uuid=None, color="#3498db"):
    """A current peer's Store line, as any host on the network could send it (plaintext)."""
    return json.dumps({
        "versionID": "2.0.0", "operationType": "Store", "messageID": str(uuid.uuid4()).upper(),
        "jmObjectType": "Hex",
        "jmObject": {"senderUUID": sender_uuid or str(uuid.uuid4()).upper(), "senderName": sender_name,
                     "hexDescription": description, "hexColor": color, "links": links},
    }).encode() + b"\n"


class Harness:
    def __init__(self, bin_dir, label):
        self.bin = bin_dir
        self.label = label
        self.work = tempfile.mkdtemp(prefix=f"hexd-{label}-")
        self.daemons = []
        self.processes = []

    def __enter__(self):
        return self

    def __exit__(self, *_):
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(self.work, ignore_errors=True)

    def fail(self, message):
        print(f"{self.label}: FAILED:", message)
        for name in sorted({name for name, _ in self.daemons}):
            print(f"--- {name}'s log (last lines)")
            with open(f"{self.work}/{name}.log") as log:
                print("".join(log.readlines()[-30:]))
        sys.exit(1)

    def check(self, condition, message):
        if not condition:
            self.fail(message)

    def wait_for(self, condition, message, seconds=15):
        deadline = time.time() + seconds
        while time.time() < deadline:
            value = condition()
            if value:
                return value
            time.sleep(0.05)
        self.fail(message)

    def spawn(self, arguments, **options):
        """A helper process of the test, stopped at the end."""
        process = subprocess.Popen(arguments, **options)
        self.processes.append(process)
        return process

    def start(self, name, discovery, extra=(), environment=None, ready=None):
        """Starts hexd `name` (its data directory kept across restarts) and returns the directory
        once its control socket answers, and `ready` (a file in it) exists when given."""
        data = f"{self.work}/{name}"
        process = self.spawn(
            [f"{self.bin}/hexd", "--data-dir", data, "--port", "0", "--discovery-port", str(discovery),
             "--broadcast", "127.255.255.255", "--announce-interval", "0.3", "--name", name,
             *([] if "--kdeconnect" in extra else ["--kdeconnect", "off"]), *extra],
            stdout=open(f"{self.work}/{name}.log", "a"), stderr=subprocess.STDOUT,
            # No test daemon reaches the machine's system bus (its Avahi, or its BlueZ, which would
            # broadcast a Bluetooth LE advertisement for a Quick Share send that waits).
            env={**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={self.work}/no-system-bus",
                 **(environment or {})})
        self.daemons.append((name, process))
        self.wait_for(lambda: process.poll() is None and self.hexctl(data, "status", code=None).returncode == 0
                      and (ready is None or os.path.exists(f"{data}/{ready}")), f"{name} did not start", seconds=20)
        return data

    def process(self, name):
        """The running process of daemon `name`."""
        return next(process for each, process in reversed(self.daemons) if each == name)

    def hexctl(self, data, *arguments, code=0, environment=None):
        result = subprocess.run([f"{self.bin}/hexctl", "--data-dir", data, *arguments], capture_output=True,
                                text=True, timeout=60, env={**os.environ, **(environment or {})})
        if code is not None and result.returncode != code:
            self.fail(f"hexctl {' '.join(arguments)} exited {result.returncode}: {result.stderr.strip()}")
        return result

    def json_lines(self, data, *arguments):
        output = self.hexctl(data, *arguments, "--json").stdout
        return [json.loads(line) for line in output.splitlines() if line.strip()]

    def status(self, data):
        return json.loads(self.hexctl(data, "status", "--json").stdout)

    def send(self, data, *arguments):
        """`hexctl send … --json`: its last line, the outcome."""
        return json.loads(self.hexctl(data, "send", *arguments, "--json").stdout.splitlines()[-1])

    def see_each_other(self, first, second):
        first_id, second_id = self.status(first)["peerUUID"], self.status(second)["peerUUID"]
        self.wait_for(lambda: any(p["uuid"] == second_id for p in self.json_lines(first, "peers"))
                      and any(p["uuid"] == first_id for p in self.json_lines(second, "peers")),
                      "the daemons did not find each other")
        return first_id, second_id
