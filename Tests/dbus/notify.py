#!/usr/bin/env python3
"""Desktop notifications as a person gets them: a private `dbus-daemon --session`, a small
notification server written here with jeepney (a D-Bus library we did not write), and two real
hexd on loopback, the receiving one with the bus in its environment and a stub browser.

Checks that a burst of hexes from one sender is one notification, replaced; that "Open" and
"Inbox" start the browser with the right URL; that a lone hex with one link opens that link;
that hostile text stays text (markup escaped for a server that reads markup); that a pairing
request and an alert notify; and that a bus that goes away breaks nothing. Prints the time from
an Ack to its Notify call.

Usage: Tests/dbus/notify.py BIN_DIR
"""
import json
import os
import queue
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid

from jeepney import DBusAddress, HeaderFields, MessageType, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from hexd_harness import Harness, free_udp_port  # noqa: E402

BIN = sys.argv[1]


class NotificationServer(threading.Thread):
    """org.freedesktop.Notifications, recording each Notify call and emitting signals on request."""

    def __init__(self, address):
        super().__init__(daemon=True)
        self.connection = open_dbus_connection(bus=address)
        reply = self.connection.send_and_get_reply(message_bus.RequestName("org.freedesktop.Notifications"))
        assert reply.body[0] == 1, "could not own org.freedesktop.Notifications"
        self.calls = []
        self.next_id = 1
        self.signals = queue.Queue()
        self.lock = threading.Lock()

    def run(self):
        path = DBusAddress("/org/freedesktop/Notifications", interface="org.freedesktop.Notifications")
        while True:
            while not self.signals.empty():
                member, body = self.signals.get()
                self.connection.send(new_signal(path, member, "us", body))
            try:
                message = self.connection.receive(timeout=0.05)
            except TimeoutError:
                continue
            except Exception:
                return
            if message.header.message_type != MessageType.method_call:
                continue
            member = message.header.fields.get(HeaderFields.member)
            if member == "GetCapabilities":
                self.connection.send(new_method_return(message, "as", (["body", "actions", "body-markup"],)))
            elif member == "GetServerInformation":
                self.connection.send(new_method_return(message, "ssss", ("test", "hexd", "1", "1.2")))
            elif member == "Notify":
                app, replaces, icon, summary, body, actions, hints, timeout = message.body
                with self.lock:
                    notification_id = replaces if replaces else self.next_id
                    if not replaces:
                        self.next_id += 1
                    self.calls.append({"time": time.time(), "replaces": replaces, "id": notification_id,
                                       "summary": summary, "body": body, "actions": actions, "app": app})
                self.connection.send(new_method_return(message, "u", (notification_id,)))

    def recorded(self):
        with self.lock:
            return list(self.calls)

    def invoke(self, notification_id, action):
        self.signals.put(("ActionInvoked", (notification_id, action)))


def main(run):
    bus_socket = f"{run.work}/bus"
    bus = run.spawn(["dbus-daemon", "--session", "--nofork", "--nopidfile", f"--address=unix:path={bus_socket}"],
                    stderr=subprocess.DEVNULL)
    run.wait_for(lambda: os.path.exists(bus_socket), "dbus-daemon did not start")
    server = NotificationServer(f"unix:path={bus_socket}")
    server.start()

    opened = f"{run.work}/opened"
    browser = f"{run.work}/browser"
    with open(browser, "w") as script:
        script.write(f"#!/bin/sh\nprintf '%s\\n' \"$1\" >> {opened}\n")
    os.chmod(browser, 0o755)
    discovery = free_udp_port()
    ada = run.start("Ada", discovery, ["--web", "127.0.0.1:0"], ready="web.address",
                    environment={"DBUS_SESSION_BUS_ADDRESS": f"unix:path={bus_socket}", "BROWSER": browser})
    grace = run.start("Grace", discovery, ["--notify", "off", "--web", "off"])
    _, grace_id = run.see_each_other(ada, grace)

    def opened_urls():
        return open(opened).read().split() if os.path.exists(opened) else []

    # A burst of three hexes from one sender: one notification, replaced twice.
    for index in range(3):
        run.hexctl(grace, "send", "--to", "Ada", f"https://example.com/{index}", f"https://example.org/{index}",
               "--description", f"Burst {index}")
    calls = run.wait_for(lambda: len(server.recorded()) >= 3 and server.recorded(), "no three Notify calls")
    first, second, third = calls[:3]
    run.check(first["replaces"] == 0 and second["replaces"] == first["id"] and third["replaces"] == first["id"],
              f"a burst was not one replaced notification: {[(c['replaces'], c['id']) for c in calls]}")
    run.check(first["app"] == "hexd" and "Grace" in first["summary"] and grace_id[:8] in first["summary"],
              f"the summary names no sender: {first['summary']!r}")
    run.check("Burst 0" in first["body"] and "3 hexes" in third["summary"] and "Burst 2" in third["body"],
              f"the notifications do not say what came: {third['summary']!r} {third['body']!r}")
    run.check(third["actions"] == ["open", "Open", "inbox", "Inbox"], f"actions: {third['actions']}")

    # "Open" on several hexes and "Inbox" open the page, through the file that holds the token.
    server.invoke(first["id"], "open")
    server.invoke(first["id"], "inbox")
    page_opener = "file://" + os.path.realpath(ada) + "/web-open.html"
    run.wait_for(lambda: opened_urls() == [page_opener + "#inbox"] * 2,
                 f"Open and Inbox did not open the page: {opened_urls()}")
    run.check(open(f"{ada}/web-open.html").read().count("?token=") >= 1, "the opening page does not lead to the page")

    # A hex from another sender, alone, with one link and hostile text: its own notification,
    # markup escaped (this server reads markup), and Open opens the link itself.
    port = run.status(ada)["tcpPort"]
    envelope = {"versionID": "2.0.0", "operationType": "Store", "messageID": str(uuid.uuid4()).upper(),
                "jmObjectType": "Hex", "jmObject": {
                    "senderUUID": str(uuid.uuid4()).upper(), "senderName": "Mallory\u202egnp.exe",
                    "hexDescription": "<b>bold</b> & <a href='javascript:x'>co</a>",
                    "links": [{"url": "https://example.net/one"}]}}
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(json.dumps(envelope).encode() + b"\n")
        acked = time.time()
        run.check('"stored"' in connection.makefile().readline(), "the hostile hex was not stored")
    lone = run.wait_for(lambda: len(server.recorded()) >= 4 and server.recorded()[3], "no Notify for a lone hex")
    run.check(lone["replaces"] == 0, "another sender's hex replaced the burst's notification")
    run.check("&lt;b&gt;bold&lt;/b&gt; &amp; &lt;a" in lone["body"] and "<b>" not in lone["body"],
              f"markup from a peer was not escaped: {lone['body']!r}")
    run.check("\u202e" not in lone["summary"] and "Mallorygnp.exe" in lone["summary"],
              f"a right-to-left override reached the summary: {lone['summary']!r}")
    # The time from an Ack to its Notify call, against the same hex's event on `hexctl watch`.
    watch = run.spawn([f"{BIN}/hexctl", "--data-dir", ada, "watch", "--json"], stdout=subprocess.PIPE, text=True)
    to_notify, to_watch = [(lone["time"] - acked) * 1000], []
    for index in range(10):
        envelope["messageID"] = str(uuid.uuid4()).upper()
        envelope["jmObject"]["senderUUID"] = str(uuid.uuid4()).upper()
        envelope["jmObject"]["hexDescription"] = f"timed {index}"
        count = len(server.recorded())
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            connection.sendall(json.dumps(envelope).encode() + b"\n")
            reply = json.loads(connection.makefile().readline())
            acked = time.time()
        while True:
            event = json.loads(watch.stdout.readline())
            if event.get("kind") == "hexReceived" and event.get("id") == reply.get("hexID"):
                to_watch.append((time.time() - acked) * 1000)
                break
        call = run.wait_for(lambda: len(server.recorded()) > count and server.recorded()[count], "no Notify")
        to_notify.append((call["time"] - acked) * 1000)
    watch.terminate()
    print(f"notify: a hex acked to its Notify call: median {statistics.median(to_notify):.1f} ms of "
          f"{len(to_notify)}; to its event on hexctl watch: {statistics.median(to_watch):.1f} ms (target: 50 ms)")
    server.invoke(lone["id"], "open")
    run.wait_for(lambda: opened_urls()[-1:] == ["https://example.net/one"],
                 f"Open did not open the link: {opened_urls()}")

    # A pairing request shows its code; an alert notifies.
    code = json.loads(run.hexctl(grace, "pair", "Ada", "--json").stdout)["code"]
    pairing = run.wait_for(lambda: next((c for c in server.recorded() if "asks to pair" in c["summary"]), None),
                           "no Notify for a pairing request")
    run.check(code in pairing["body"] and "Grace" in pairing["summary"], f"the pairing notification: {pairing}")
    run.hexctl(grace, "alert", "--to", "Ada", "lunch", "is", "ready")
    alert = run.wait_for(lambda: next((c for c in server.recorded() if c["summary"].startswith("Alert from")), None),
                         "no Notify for an alert")
    run.check("lunch is ready" in alert["body"], f"the alert notification: {alert}")

    # The bus goes away: hexes are still stored, the daemon serves on and says so once.
    bus.kill()
    bus.wait()
    for index in range(2):
        run.hexctl(grace, "send", "--to", "Ada", "https://example.com/after", "--description", f"After the bus {index}")
    run.check(run.hexctl(ada, "status", code=None).returncode == 0, "Ada stopped serving when the bus went away")
    log = open(f"{run.work}/Ada.log").read()
    run.check(log.count("the session bus went away") == 1, "the bus's going away was not logged once")
    descriptions = [hex_item["hexDescription"] for hex_item in run.json_lines(ada, "inbox")]
    run.check("After the bus 1" in descriptions, "a hex sent after the bus went away was not stored")
    print("notify: ok")



with Harness(BIN, label="notify") as harness:
    main(harness)
