"""Browses for _hexd._tcp with python-zeroconf, a DNS-SD stack hexd did not write.

Usage: dnssd-browse.py 4|6|all SECONDS [COUNT]
    Prints one JSON line per instance found (name, port, id, addresses) once COUNT are found or
    SECONDS have passed.
Usage: dnssd-browse.py watch SECONDS NAME
    Prints "found NAME" once the instance NAME is listed, then "removed NAME after S s" when it
    goes away (a goodbye), or nothing more within SECONDS.
"""
import json
import sys
import time

from zeroconf import IPVersion, ServiceBrowser, ServiceListener, Zeroconf

SERVICE = "_hexd._tcp.local."


class Listener(ServiceListener):
    def __init__(self):
        self.found = {}
        self.removed = {}

    def add_service(self, zc, type_, name):
        # Asked again when the answer is slow (a busy machine): a miss is not retried by zeroconf.
        info = None
        for _ in range(3):
            info = zc.get_service_info(type_, name, timeout=2000)
            if info:
                break
        if info:
            self.found[name] = {"name": name, "port": info.port,
                                "id": info.properties.get(b"id", b"").decode(),
                                "addresses": info.parsed_addresses()}

    def update_service(self, zc, type_, name):
        self.add_service(zc, type_, name)

    def remove_service(self, zc, type_, name):
        self.found.pop(name, None)
        self.removed[name] = time.monotonic()


def main():
    mode, seconds = sys.argv[1], float(sys.argv[2])
    versions = {"4": IPVersion.V4Only, "6": IPVersion.V6Only, "all": IPVersion.All, "watch": IPVersion.All}
    zc = Zeroconf(ip_version=versions[mode])
    listener = Listener()
    ServiceBrowser(zc, SERVICE, listener)
    deadline = time.monotonic() + seconds
    try:
        if mode == "watch":
            name = sys.argv[3] + "." + SERVICE
            while time.monotonic() < deadline and name not in listener.found:
                time.sleep(0.02)
            if name not in listener.found:
                return
            print(f"found {name}", flush=True)
            since = time.monotonic()
            while time.monotonic() < deadline and name not in listener.removed:
                time.sleep(0.02)
            if name in listener.removed:
                print(f"removed {name} after {listener.removed[name] - since:.2f} s", flush=True)
        else:
            want = int(sys.argv[3]) if len(sys.argv) > 3 else 0
            while time.monotonic() < deadline and (want == 0 or len(listener.found) < want):
                time.sleep(0.05)
            for item in listener.found.values():
                print(json.dumps(item), flush=True)
    finally:
        zc.close()


main()
