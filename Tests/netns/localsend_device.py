#!/usr/bin/env python3
"""Scripted LocalSend devices (protocol 2.1 over HTTPS) for Tests/netns/localsend-answers.sh.

Usage: localsend_device.py --log FILE --keys DIR --address IPV4 [--trust CERT] DEVICE...
  DEVICE is ALIAS:PORT:BEHAVIOUR, BEHAVIOUR what prepare-upload is answered:
    accept     204 (the message shown, as LocalSend 1.18 does)
    decline    403 (the person declined)
    pin        401 (a PIN is wanted)
    busy-once  409 the first time, 204 after
    slow:N     held N seconds, then 204 (a person slow to answer)
    file       200 with a session (s1) and a token (tok) for the one file offered, whose
               POST /api/localsend/v2/upload?sessionId=s1&fileId=ID&token=tok is answered 200
Each device makes its own self-signed RSA-2048 certificate (openssl, kept in DIR), serves HTTPS on TCP PORT
(register and info answer its description), and announces itself once by multicast to
224.0.0.167:53317 from IPV4 (TTL 1). With --trust, a client certificate is asked for (not required)
and checked against CERT, the one the sender is expected to show.
FILE gets one JSON line per event: {"device", "event": "start", "fingerprint", "port"} once a device
serves, then {"device", "path", "status", "text", "client"} per request as it arrives: text is the
preview of the single file offered (prepare-upload) or the uploaded body (upload), client the SHA-256
of the client certificate shown (upper case) or null. Runs until killed.
"""
import argparse
import hashlib
import http.server
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse

API = "/api/localsend/v2/"
log_lock = threading.Lock()


def write_log(path, record):
    with log_lock, open(path, "a", encoding="utf-8") as log:
        log.write(json.dumps(record) + "\n")


class Device:
    def __init__(self, spec, directory, trust):
        alias, port, behaviour = spec.split(":", 2)
        self.alias, self.port, self.behaviour, self.hold = alias, int(port), behaviour, 0.0
        if behaviour.startswith("slow:"):
            self.hold = float(behaviour.split(":", 1)[1])
        elif behaviour not in ("accept", "decline", "pin", "busy-once", "file"):
            sys.exit(f"unknown behaviour {behaviour!r}")
        self.prepared = 0
        self.lock = threading.Lock()
        key, cert = os.path.join(directory, f"{self.port}.key"), os.path.join(directory, f"{self.port}.crt")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=LocalSend", "-keyout", key, "-out", cert],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(cert, encoding="ascii") as pem:
            der = ssl.PEM_cert_to_DER_cert(pem.read())
        self.fingerprint = hashlib.sha256(der).hexdigest().upper()
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        if trust:
            self.context.verify_mode = ssl.CERT_OPTIONAL
            self.context.load_verify_locations(trust)
        else:
            self.context.verify_mode = ssl.CERT_NONE

    def description(self):
        return {"alias": self.alias, "version": "2.1", "deviceModel": "script", "deviceType": "desktop",
                "fingerprint": self.fingerprint, "port": self.port, "protocol": "https", "download": False}

    def answer_prepare(self):
        """The status to answer this prepare-upload with, and how long to hold it first."""
        with self.lock:
            self.prepared += 1
            count = self.prepared
        return {"accept": (204, 0), "decline": (403, 0), "pin": (401, 0), "file": (200, 0),
                "busy-once": (409 if count == 1 else 204, 0)}.get(self.behaviour, (204, self.hold))


def make_handler(device, log_path):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def client(self):
            der = self.connection.getpeercert(binary_form=True)
            return hashlib.sha256(der).hexdigest().upper() if der else None

        def body(self):
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def reply(self, status, payload=None):
            data = json.dumps(payload).encode() if payload is not None else b""
            self.send_response(status)
            if data:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True

        def record(self, path, status, text=None):
            write_log(log_path, {"device": device.alias, "path": path, "status": status, "text": text,
                                 "client": self.client(), "time": time.time()})

        def do_GET(self):
            path = urllib.parse.urlsplit(self.path).path
            if path == API + "info":
                self.record(path, 200)
                self.reply(200, device.description())
            else:
                self.record(path, 404)
                self.reply(404)

        def do_POST(self):
            parts = urllib.parse.urlsplit(self.path)
            path, query = parts.path, urllib.parse.parse_qs(parts.query)
            raw = self.body()
            if path == API + "register":
                self.record(path, 200)
                self.reply(200, device.description())
            elif path == API + "prepare-upload":
                try:
                    files = json.loads(raw)["files"]
                    (file_id, offered), = files.items()
                    text = offered.get("preview")
                except (ValueError, KeyError, TypeError, AttributeError):
                    self.record(path, 400)
                    self.reply(400)
                    return
                status, hold = device.answer_prepare()
                self.record(path, status, text)
                time.sleep(hold)
                if status == 200:
                    self.reply(200, {"sessionId": "s1", "files": {file_id: "tok"}})
                else:
                    self.reply(status)
            elif path == API + "upload" and device.behaviour == "file":
                good = query.get("sessionId") == ["s1"] and query.get("token") == ["tok"]
                self.record(path, 200 if good else 403, raw.decode("utf-8", "replace"))
                self.reply(200 if good else 403)
            elif path == API + "cancel":
                self.record(path, 200)
                self.reply(200)
            else:
                self.record(path, 404)
                self.reply(404)

    return Handler


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self, device, log_path):
        self.device = device
        super().__init__(("", device.port), make_handler(device, log_path))

    def finish_request(self, request, client_address):
        # The TLS handshake in the request's own thread: a slow one holds nobody else.
        request.settimeout(30)
        try:
            tls = self.device.context.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError) as error:
            print(f"{self.device.alias}: handshake from {client_address[0]}: {error}", file=sys.stderr)
            return
        try:
            super().finish_request(tls, client_address)
        finally:
            try:
                tls.close()
            except OSError:
                pass


def announce(device, address):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(address))
    body = dict(device.description(), announce=True)
    sock.sendto(json.dumps(body).encode(), ("224.0.0.167", 53317))
    sock.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log", required=True)
    parser.add_argument("--keys", required=True)
    parser.add_argument("--address", required=True)
    parser.add_argument("--trust")
    parser.add_argument("devices", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.keys, exist_ok=True)
    devices = [Device(spec, args.keys, args.trust) for spec in args.devices]
    for device in devices:
        server = Server(device, args.log)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        write_log(args.log, {"device": device.alias, "event": "start", "fingerprint": device.fingerprint,
                             "port": device.port})
        announce(device, args.address)
    threading.Event().wait()


if __name__ == "__main__":
    main()
