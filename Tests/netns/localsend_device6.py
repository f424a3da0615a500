#!/usr/bin/env python3
"""A scripted LocalSend device over IPv6 link-local addresses, for Tests/netns/localsend-ipv6.sh: the
devices of localsend_device.py (the same certificates, answers and log; protocol 2.2 in their description)
served on [::] and announced to LocalSend's IPv6 multicast group, a listener for that group, and a sender
of one message. Addresses are written with their zone (fe80::1%eth0).

Usage:
  localsend_device6.py serve --log FILE --keys DIR --interface IF [--trust CERT] DEVICE...
      As localsend_device.py (DEVICE is ALIAS:PORT:BEHAVIOUR, FILE its log, one JSON line per event),
      but each device serves HTTPS on [::]:PORT and announces itself once to ff12::fd3a:e420 port
      53317 on interface IF (hop limit 1); each request's line also has "from", the address it came
      from (with its zone). Runs until killed.
  localsend_device6.py listen --interface IF --seconds N [--alias ALIAS]
      Joins ff12::fd3a:e420 on IF, binds UDP [::]:53317 (shared, SO_REUSEPORT) and prints a JSON
      line {"from", "body"} per datagram heard, "from" its source address and zone; returns after N
      seconds, or once it heard an announcement whose alias is ALIAS.
  localsend_device6.py message --to ADDRESS%IF --port PORT --alias ALIAS --fingerprint FP
                               [--cert CERT --key KEY] TEXT
      POSTs a message (LocalSend 1.18's form: a prepare-upload offering one text/plain file whose
      preview is TEXT) over TLS to ADDRESS%IF:PORT, showing CERT as the client certificate when
      given, and prints the answer's status line ("closed" when there is none).
"""
import argparse
import http.server
import json
import os
import socket
import ssl
import struct
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import localsend_device  # noqa: E402  (beside this file)

GROUP, PORT = "ff12::fd3a:e420", 53317


def scoped(address):
    """An IPv6 socket address's host with its zone (fe80::1%eth0), as the script names addresses."""
    host, _, _, scope = address
    return f"{host}%{socket.if_indextoname(scope)}" if scope and "%" not in host else host


class Device6(localsend_device.Device):
    def description(self):
        return dict(super().description(), version="2.2")


class Server6(localsend_device.Server):
    address_family = socket.AF_INET6

    def __init__(self, device, log_path):  # pylint: disable=super-init-not-called
        self.device = device
        base = localsend_device.make_handler(device, log_path)

        class Handler(base):
            def record(self, path, status, text=None):
                localsend_device.write_log(log_path, {
                    "device": device.alias, "path": path, "status": status, "text": text,
                    "client": self.client(), "from": scoped(self.client_address), "time": time.time()})

        http.server.ThreadingHTTPServer.__init__(self, ("::", device.port), Handler)


def announce(device, interface):
    index = socket.if_nametoindex(interface)
    sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 1)
    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, index)
    body = dict(device.description(), announce=True)
    sock.sendto(json.dumps(body).encode(), (GROUP, PORT, 0, index))
    sock.close()


def serve(args):
    os.makedirs(args.keys, exist_ok=True)
    devices = [Device6(spec, args.keys, args.trust) for spec in args.devices]
    for device in devices:
        server = Server6(device, args.log)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        localsend_device.write_log(args.log, {"device": device.alias, "event": "start",
                                              "fingerprint": device.fingerprint, "port": device.port})
        announce(device, args.interface)
    threading.Event().wait()


def listen(args):
    index = socket.if_nametoindex(args.interface)
    sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("::", PORT))
    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
                    socket.inet_pton(socket.AF_INET6, GROUP) + struct.pack("@I", index))
    end = time.monotonic() + args.seconds
    while (left := end - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            data, source = sock.recvfrom(65536)
        except socket.timeout:
            break
        try:
            body = json.loads(data)
        except ValueError:
            body = data.decode("utf-8", "replace")
        print(json.dumps({"from": scoped(source), "body": body}), flush=True)
        if args.alias is not None and isinstance(body, dict) and body.get("alias") == args.alias:
            break


def message(args):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    if args.cert:
        ctx.load_cert_chain(args.cert, args.key)
    text = args.text
    body = json.dumps({"info": {"alias": args.alias, "version": "2.2", "deviceModel": "script",
                                "deviceType": "desktop", "fingerprint": args.fingerprint, "port": args.port,
                                "protocol": "https", "download": False},
                       "files": {"m1": {"id": "m1", "fileName": "m1.txt", "size": len(text.encode()),
                                        "fileType": "text/plain", "preview": text}}}).encode()
    host = args.to.split("%", 1)[0]
    try:
        tls = ctx.wrap_socket(socket.create_connection((args.to, args.port), timeout=10))
        tls.sendall(f"POST /api/localsend/v2/prepare-upload HTTP/1.1\r\nHost: [{host}]:{args.port}\r\n".encode()
                    + b"Content-Type: application/json\r\nContent-Length: " + str(len(body)).encode()
                    + b"\r\n\r\n" + body)
        reply = b""
        while b"\r\n" not in reply and (chunk := tls.recv(65536)):
            reply += chunk
    except OSError as error:
        print(f"closed ({error})")
        return
    print(reply.split(b"\r\n")[0].decode() or "closed")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    serving = commands.add_parser("serve")
    serving.add_argument("--log", required=True)
    serving.add_argument("--keys", required=True)
    serving.add_argument("--interface", required=True)
    serving.add_argument("--trust")
    serving.add_argument("devices", nargs="+")
    listening = commands.add_parser("listen")
    listening.add_argument("--interface", required=True)
    listening.add_argument("--seconds", type=float, required=True)
    listening.add_argument("--alias")
    sending = commands.add_parser("message")
    sending.add_argument("--to", required=True)
    sending.add_argument("--port", type=int, default=PORT)
    sending.add_argument("--alias", required=True)
    sending.add_argument("--fingerprint", required=True)
    sending.add_argument("--cert")
    sending.add_argument("--key")
    sending.add_argument("text")
    args = parser.parse_args()
    {"serve": serve, "listen": listen, "message": message}[args.command](args)


if __name__ == "__main__":
    main()
