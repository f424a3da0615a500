#!/usr/bin/env python3
"""A KDE Connect device of protocol 8, written for the tests from KDE's protocol description
(kdeconnect-meta's protocol.md, kdeconnect-kde's core/backends/lan and core/pairinghandler.cpp),
sharing no code with hexd: an EC P-256 certificate whose common name is the device ID, the
identity broadcast with its TCP port, the dialing side's identity read in plain text (its target
fields checked), TLS as the client with the roles inverted, the identities exchanged again inside
TLS, and pairing with a dated request and the verification code.

It reads commands on standard input, one per line, and writes what happens on standard output,
one line each:
  announce              broadcast the identity (UDP 1716, 255.255.255.255)
  version N             announce protocol N from now on (7 or 8)
  send JSON             write a packet on the link (`id` added)
  pair [OFFSET]         ask to pair, the request dated now + OFFSET seconds
  close                 close the link
  quit
Lines written: `linked VERSION`, `identity JSON` (hexd's, inside TLS from 8), `target ID VERSION`
(hexd's plain identity's target fields), `packet JSON`, `code CODE` (of the last request), `closed`,
`error TEXT`.

Usage: kdeconnect_peer.py WORKDIR NAME PORT
"""
import base64
import hashlib
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
import uuid

work, name, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
device_id = uuid.uuid4().hex
key, cert = os.path.join(work, name + ".key"), os.path.join(work, name + ".crt")
subprocess.run(
    ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
     "-out", cert, "-days", "3650", "-subj", f"/O=KDE/OU=KDE Connect/CN={device_id}", "-sha512"],
    check=True, capture_output=True)
version = 8
link = None
lock = threading.Lock()
request_time = None


def say(line):
    with lock:
        print(line, flush=True)


def public_key(pem_or_der_path, der=False):
    """The SubjectPublicKeyInfo of a certificate, as DER."""
    args = ["openssl", "x509", "-pubkey", "-noout", "-in", pem_or_der_path] + (["-inform", "DER"] if der else [])
    pem = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return base64.b64decode("".join(line for line in pem.splitlines() if "-----" not in line))


def identity(with_port):
    body = {"deviceId": device_id, "deviceName": name, "deviceType": "phone", "protocolVersion": version,
            "incomingCapabilities": ["kdeconnect.share.request"],
            "outgoingCapabilities": ["kdeconnect.share.request"]}
    if with_port:
        body["tcpPort"] = port
    return packet("kdeconnect.identity", body)


def packet(kind, body):
    return (json.dumps({"id": int(time.time() * 1000), "type": kind, "body": body}) + "\n").encode()


def read_line(stream):
    line = b""
    while not line.endswith(b"\n"):
        byte = stream.recv(1)
        if not byte:
            raise EOFError("closed")
        line += byte
        if len(line) > 65536:
            raise ValueError("line too long")
    return json.loads(line)


def serve():
    """Takes hexd's links: its plain identity, then TLS as the client, then protocol 8's exchange."""
    global link
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", port))
    listener.listen(4)
    while True:
        raw, _ = listener.accept()
        try:
            raw.settimeout(10)
            plain = read_line(raw)
            body = plain["body"]
            say(f"target {body.get('targetDeviceId')} {body.get('targetProtocolVersion')}")
            if body.get("targetDeviceId") != device_id:
                raise ValueError("hexd meant another device")
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            context.load_cert_chain(cert, key)
            stream = context.wrap_socket(raw, server_side=False)
            spoken = min(version, body["protocolVersion"])
            if spoken >= 8:
                stream.sendall(identity(False))
                inside = read_line(stream)
                if inside["body"]["deviceId"] != body["deviceId"]:
                    raise ValueError("another device inside TLS")
                say("identity " + json.dumps(inside["body"], sort_keys=True))
            der = os.path.join(work, name + "-hexd.der")
            with open(der, "wb") as file:
                file.write(stream.getpeercert(binary_form=True))
            with lock:
                link = (stream, der)
            say(f"linked {spoken}")
            threading.Thread(target=read_packets, args=(stream,), daemon=True).start()
        except Exception as error:  # noqa: BLE001 - a test peer reports every failure and goes on
            say(f"error {error}")
            raw.close()


def read_packets(stream):
    try:
        while True:
            say("packet " + json.dumps(read_line(stream), sort_keys=True))
    except Exception:  # noqa: BLE001
        say("closed")


def code(timestamp):
    """KDE Connect's verification code: SHA-256 of both public keys, the larger first, and the
    request's date; its first 8 hex digits in upper case."""
    with lock:
        der = link[1]
    ours, theirs = public_key(cert), public_key(der, der=True)
    first, second = (ours, theirs) if ours > theirs else (theirs, ours)
    return hashlib.sha256(first + second + str(timestamp).encode()).hexdigest()[:8].upper()


threading.Thread(target=serve, daemon=True).start()
say(f"ready {device_id}")
for command in sys.stdin:
    verb, _, rest = command.strip().partition(" ")
    try:
        if verb == "announce":
            sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sender.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
            sender.sendto(identity(True), ("255.255.255.255", 1716))
            sender.close()
        elif verb == "version":
            version = int(rest)
        elif verb == "send":
            with lock:
                stream = link[0]
            message = json.loads(rest)
            stream.sendall(packet(message["type"], message["body"]))
        elif verb == "pair":
            stamp = int(time.time()) + int(rest or "0")
            with lock:
                stream = link[0]
            stream.sendall(packet("kdeconnect.pair", {"pair": True, "timestamp": stamp}))
            say(f"code {code(stamp)}")
        elif verb == "close":
            with lock:
                stream, link = link[0], None
            stream.close()
        elif verb == "quit":
            break
    except Exception as error:  # noqa: BLE001
        say(f"error {error}")
