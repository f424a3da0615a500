#!/usr/bin/env python3
"""A LocalSend 1.18 receiver, as the app's Rust core serves and its Dart layer decides (localsend/localsend
at the 1.18.2 head, af0416be), for Tests/netns/localsend-receiver.sh, written from that source, each behaviour
cited where it is done. The core is `packages/core/src` (`http/server/{mod,v2}.rs`, `http/server/common/*.rs`,
`http/client/v2.rs`, `multicast/`, `discovery/`), the app `app/lib`.

It is one device: an RSA-2048 self-signed certificate whose SHA-256 (upper case) is its fingerprint, HTTPS on
TCP 53317 requiring a client certificate, protocol version 2.2, announced on 224.0.0.167:53317; one upload
session at a time. What its person does with an offer is the MODE:

  accept           files: Accept with every file selected (200, a session and a token each); a message: Close (204)
  decline          Decline (403); a message, which has no Decline button: the back gesture (403)
  back             the back gesture (403), on a message too, which was shown all the same
  busy             every offer 409, as while another sender's session holds the one slot
  cancel-after N   accept; once N bytes of an upload arrived, the person cancels (the progress page's cancel)
  corrupt N        accept; the first N attempts at each file arrive altered (its first byte flipped), as a file
                   that changed while its sender read it arrives

Python's ssl cannot take any self-signed client certificate as the core's verifier does (signature and
validity only, `http/server/common/client_cert_verifier.rs`): the ones to take are given (--trust), and a
client showing another is refused in the handshake, one showing none too (as 1.18 refuses it).

Usage: localsend_receiver.py --address IPV4 --downloads DIR --trust CERT [--trust CERT ...] [--alias ALIAS]
                             [--mode MODE] [--deadline SECONDS]
A line of standard input is a MODE to switch to ("mode MODE" is printed once it holds), or "announce" (the
person refreshes: the announcement burst again). It ends on SIGTERM or after SECONDS (600 by default).

It prints one line per event on standard output:
  ready FINGERPRINT PORT                     serving, before its first announcement
  register-from ALIAS FINGERPRINT proven|ignored
                                             a register (ignored: the claimed fingerprint is not the certificate's)
  register-to ALIAS STATUS|error:WHY         its answer to an announcement it heard
  prepare JSON                               an offer: {"sender", "client" (the certificate's fingerprint),
                                             "files": [each FileDto as sent]}
  message JSON-STRING                        the offer is a message: the dialog showing it
  prepare-status STATUS                      the answer to the offer
  upload-status STATUS NAME                  the answer to an upload (NAME its fileId when it is refused 400 or 403)
  saved NAME SHA256 SIZE                     a file landed in DIR
  upload-cut NAME RECEIVED SIZE              the upload's connection ended before its body did
  corrupted NAME ATTEMPT                     corrupt N altered this attempt
  cancelled-sent STATUS|error:WHY            cancel-after: hexd's answer to the person's cancel
  after-cancel NAME BYTES SECONDS            cancel-after: what arrived after that answer, and when the upload ended
  cancel-from-sender SESSION                 the sender cancelled the session
  cancel-received SESSION                    a cancel naming no session of this receiver (answered all the same)
  mode MODE
"""
import argparse
import hashlib
import http.client
import http.server
import json
import os
import signal
import socket
import ssl
import struct
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

from localsend_identity import make_identity

API = "/api/localsend/v2/"
PORT = 53317  # multicast/mod.rs DEFAULT_PORT, the server's too
GROUP = "224.0.0.167"  # multicast/mod.rs DEFAULT_MULTICAST_GROUP
# model/discovery.rs PROTOCOL_VERSION_V2: what register, info and announcements say.
VERSION = "2.2"
# multicast/mod.rs ANNOUNCE_DELAYS (l.45-49): an announcement is a burst of three, each after waiting one of these.
ANNOUNCE_DELAYS = (0.1, 0.5, 2.0)
# discovery/mod.rs DEFAULT_DISCOVERY_TIMEOUT: the register that answers an announcement.
DISCOVERY_TIMEOUT = 0.5
# server/v2.rs MAX_UPLOAD_ATTEMPTS: a file may be uploaded again after a checksum mismatch, 3 attempts in all.
MAX_UPLOAD_ATTEMPTS = 3
READ_SIZE = 512 * 1024  # common/save.rs WRITE_BUFFER_SIZE
SOCKET_TIMEOUT = 30
JSON_LIMIT = 16 << 20

output = threading.Lock()


def say(*words):
    with output:
        print(*words, flush=True)


def parse_mode(text):
    words = text.split()
    if words[:1] in (["accept"], ["decline"], ["back"], ["busy"]) and len(words) == 1:
        return words[0], 0
    if words[:1] in (["cancel-after"], ["corrupt"]) and len(words) == 2 and words[1].isdigit():
        return words[0], int(words[1])
    raise ValueError(f"unknown mode {text!r}")


def is_message(files):
    """receive_session_state.dart `message` (l.58-63): one file whose type is text (a `text/*` MIME type or
    protocol 1's `text`, file_dto.dart decodeFromMime l.119-133) and which carries a preview."""
    if len(files) != 1:
        return None
    (dto,) = files.values()
    kind = dto.get("fileType") or ""
    return dto.get("preview") if kind.startswith("text/") or kind == "text" else None


def is_offer(info, files):
    """dto_v2.rs PrepareUploadRequestDtoV2: `info` a RegisterDtoV2 (its port and protocol are where the sender's own
    server is) and `files` FileDto (model/transfer.rs) by id."""
    return (isinstance(info, dict) and isinstance(info.get("port"), int) and info.get("protocol") in ("http", "https")
            and isinstance(files, dict)
            and all(isinstance(dto, dict) and {"id", "fileName", "size", "fileType"} <= dto.keys()
                    and isinstance(dto["size"], int) and dto["size"] >= 0 for dto in files.values()))


class Session:
    """common/session.rs UploadSessionV2: the sender (its address, and from its offer's `info` the port and
    protocol its own server has, receive_controller.dart l.99) and each accepted file's token and status."""

    def __init__(self, sender):
        self.id = str(uuid.uuid4())
        self.sender = sender
        self.files = {}


class Body:
    """A request's body as hyper reads it: sized by Content-Length, or chunked (RFC 9112, 7.1; the 1.18 sender
    streams with no length, client/mod.rs upload_body); neither is an empty body. EOFError when the connection
    ends before the body does."""

    def __init__(self, headers, stream):
        self.stream = stream
        self.chunked = "chunked" in (headers.get("Transfer-Encoding") or "").lower()
        self.left = 0 if self.chunked else int(headers.get("Content-Length") or 0)
        self.done = not self.chunked and self.left == 0

    def read(self):
        if self.done:
            return b""
        if self.chunked and self.left == 0:
            line = self.stream.readline(1024)
            if not line.endswith(b"\n"):
                raise EOFError
            self.left = int(line.split(b";")[0].strip(), 16)
            if self.left == 0:
                while (line := self.stream.readline(8192)) not in (b"\r\n", b"\n"):
                    if not line.endswith(b"\n"):
                        raise EOFError
                self.done = True
                return b""
        data = self.stream.read1(min(READ_SIZE, self.left))
        if not data:
            raise EOFError
        self.left -= len(data)
        if self.left == 0:
            if not self.chunked:
                self.done = True
            elif self.stream.readline(16) not in (b"\r\n", b"\n"):
                raise EOFError
        return data

    def read_all(self, limit):
        data = b""
        while chunk := self.read():
            data += chunk
            if len(data) > limit:
                raise EOFError
        return data


class Receiver:
    def __init__(self, args, key_path, cert_path, fingerprint):
        self.args, self.key_path, self.cert_path, self.fingerprint = args, key_path, cert_path, fingerprint
        self.lock = threading.Lock()
        self.mode, self.count = parse_mode(args.mode)
        # The one session slot (server/v2.rs prepare_upload, "Claim the single session slot", l.254-268).
        self.session = None
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert_path, key_path)
        # server/mod.rs start_server_with_listener l.394: client certificates are mandatory while no web page is
        # served.
        self.context.verify_mode = ssl.CERT_REQUIRED
        for path in args.trust:
            self.context.load_verify_locations(path)

    def set_mode(self, text):
        mode, count = parse_mode(text)
        with self.lock:
            self.mode, self.count = mode, count
        say("mode", text)

    def description(self):
        """dto_v2.rs RegisterResponseDtoV2 / InfoResponseDtoV2, as server/v2.rs register and info fill them."""
        return {"alias": self.args.alias, "version": VERSION, "deviceModel": "Pixel 8", "deviceType": "mobile",
                "fingerprint": self.fingerprint, "download": False}

    def register_body(self):
        """dto_v2.rs RegisterDtoV2, what discovery/mod.rs register_dto sends."""
        return dict(self.description(), port=PORT, protocol="https")

    def client(self, host, port, protocol, pinned, timeout):
        """client/mod.rs create_reqwest_client: this device's certificate shown as the client certificate, the
        server's pinned to `pinned` (the HTTPS case; over HTTP nothing is shown or checked)."""
        if protocol != "https":
            return http.client.HTTPConnection(host, port, timeout=timeout)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # no CA: the fingerprint below is the check
        context.load_cert_chain(self.cert_path, self.key_path)
        context.set_alpn_protocols(["http/1.1"])
        made = http.client.HTTPSConnection(host, port, context=context, timeout=timeout)
        made.connect()
        shown = hashlib.sha256(made.sock.getpeercert(binary_form=True)).hexdigest().upper()
        if shown != pinned.upper():
            made.close()
            raise ssl.SSLError(f"the server showed {shown}, not the pinned {pinned}")
        return made

    def answer_announcement(self, address, message):
        """discovery/mod.rs answer_announcement (l.503-565): a register to the announcer, at the port and over
        the protocol it announced, pinned to the fingerprint it claimed, within DEFAULT_DISCOVERY_TIMEOUT."""
        try:
            made = self.client(address, int(message["port"]), message.get("protocol"), message["fingerprint"],
                               DISCOVERY_TIMEOUT)
            made.request("POST", API + "register", body=json.dumps(self.register_body()),
                         headers={"Content-Type": "application/json"})
            status = made.getresponse().status
            made.close()
        except (OSError, ssl.SSLError, http.client.HTTPException, KeyError, ValueError) as error:
            status = f"error:{type(error).__name__}"
        say("register-to", message.get("alias"), status)

    def listen(self, sock, stop):
        """multicast/mod.rs receive_loop (l.330-394): every message that parses as MulticastMessageV2 (its
        required members, model/discovery.rs) but its own (by fingerprint) is answered by a register (1.18 is
        announce-only: nothing goes back by UDP)."""
        while not stop.is_set():
            try:
                data, (address, _) = sock.recvfrom(65536)
                message = json.loads(data)
            except (socket.timeout, ValueError):
                continue
            if (isinstance(message, dict) and {"alias", "version", "fingerprint", "port"} <= message.keys()
                    and message.get("protocol") in ("http", "https") and message["fingerprint"] != self.fingerprint):
                threading.Thread(target=self.answer_announcement, args=(address, message), daemon=True).start()

    def announce(self, sock):
        """multicast/mod.rs MulticastState.send, in a burst (MulticastHandle.announce): the description, its port
        and protocol, and the legacy `announce: true`."""
        message = json.dumps(dict(self.register_body(), announce=True)).encode()
        for delay in ANNOUNCE_DELAYS:
            time.sleep(delay)
            sock.sendto(message, (GROUP, PORT))

    def cancel_by_person(self, session):
        """receive_controller.dart cancelSession (l.650-681), what the progress page's cancel calls while files
        arrive (progress_page.dart l.164-166): the session is cancelled on the server first, so further uploads
        fail (IsolateHttpServerCancelSessionAction, server/mod.rs cancel_v2_session l.207-228), then the sender is
        told: POST /api/localsend/v2/cancel?sessionId=<this receiver's session id> (client/v2.rs cancel,
        l.284-304), to the sender's address with the port and protocol of its offer's `info`, pinned to the
        certificate it showed (http_provider.dart pinnedTo). The answer is not looked at (client/v2.rs)."""
        with self.lock:
            if self.session is session:
                self.session = None
        sender = session.sender
        try:
            made = self.client(sender["ip"], sender["port"], sender["protocol"], sender["fingerprint"], 10)
            made.request("POST", API + "cancel?" + urllib.parse.urlencode({"sessionId": session.id}),
                         headers={"Content-Length": "0"})
            status = made.getresponse().status
            made.close()
        except (OSError, ssl.SSLError, http.client.HTTPException) as error:
            status = f"error:{type(error).__name__}:{error}"
        say("cancelled-sent", status)


def make_handler(receiver):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def certificate(self):
            der = self.connection.getpeercert(binary_form=True)
            return hashlib.sha256(der).hexdigest().upper() if der else None

        def reply(self, status, payload=None, message=None, close=False):
            """common/response.rs: JSON bodies; common/error.rs: an error's body is {"message"}. `close` when the
            request's body was not read to its end: the connection cannot carry another request."""
            if message is not None:
                payload = {"message": message}
            data = json.dumps(payload).encode() if payload is not None else b""
            self.send_response(status)
            if data:
                self.send_header("Content-Type", "application/json")
            if status != 204:
                self.send_header("Content-Length", str(len(data)))
            if close:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

        def refuse(self, status, message, body):
            """An answer given before the body was read: the rest of it is read and dropped (within the socket's
            timeout), so that a sender writing its whole body first still reads the answer."""
            self.reply(status, message=message, close=True)
            try:
                while body.read():
                    pass
            except (EOFError, OSError, ValueError):
                pass

        def do_GET(self):
            # server/mod.rs handle_request_inner l.624-631: v1 info too, for apps up to 1.17 that probe it.
            if urllib.parse.urlsplit(self.path).path in (API + "info", "/api/localsend/v1/info"):
                self.reply(200, receiver.description())  # server/v2.rs info l.209-224
            else:
                self.reply(404)  # server/mod.rs l.665-669

        def do_POST(self):
            parts = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
            try:
                body = Body(self.headers, self.rfile)
            except ValueError:
                self.reply(400, message="Invalid framing", close=True)
                return
            if parts.path == API + "register":
                self.register(body)
            elif parts.path == API + "prepare-upload":
                self.prepare_upload(body)
            elif parts.path == API + "upload":
                self.upload(body, query)
            elif parts.path == API + "cancel":
                self.cancel(body, query)
            else:
                self.refuse(404, None, body)  # server/mod.rs l.665-669: an empty body

        def json_body(self, body):
            """common/collect_to_json.rs: a body that is no such JSON is 400 "Invalid JSON body"."""
            try:
                payload = json.loads(body.read_all(JSON_LIMIT))
            except (EOFError, OSError, ValueError):
                payload = None
            if not isinstance(payload, dict):
                self.reply(400, message="Invalid JSON body")
                return None
            return payload

        def register(self, body):
            """server/v2.rs register (l.154-207): taken only when the claimed fingerprint is the client
            certificate's (l.161-166), answered with this device's description either way."""
            payload = self.json_body(body)
            if payload is None:
                return
            if not {"alias", "version", "fingerprint", "port", "protocol"} <= payload.keys():
                self.reply(400, message="Invalid JSON body")  # dto_v2.rs RegisterDtoV2's required members
                return
            claimed = str(payload["fingerprint"]).upper()
            say("register-from", payload.get("alias"), claimed,
                "proven" if claimed == self.certificate() else "ignored")
            self.reply(200, receiver.description())

        def prepare_upload(self, body):
            """server/v2.rs prepare_upload (l.226-360) with the person's decision of receive_controller.dart
            onPrepareUpload (l.70-235): no PIN is set (check_pin passes); a body that is no offer 400, no files
            400 "No files provided" (l.247-249); the slot taken 409 (l.255-261); declined 403 "Rejected"
            (l.301-308); nothing accepted 204 (l.327-333); else 200 {sessionId, files: {id: token}}."""
            payload = self.json_body(body)
            if payload is None:
                return
            info, files = payload.get("info"), payload.get("files")
            if not is_offer(info, files):
                self.reply(400, message="Invalid JSON body")
                return
            if not files:
                self.reply(400, message="No files provided")
                return
            client = self.certificate()
            sender = {"ip": self.client_address[0], "port": info["port"], "protocol": info["protocol"],
                      # receive_controller.dart l.89: the certificate's fingerprint, the claimed one without TLS.
                      "fingerprint": client or info.get("fingerprint", "")}
            session = Session(sender)
            with receiver.lock:
                mode = receiver.mode
                taken = receiver.session is not None or mode == "busy"
                if not taken:
                    receiver.session = session
            say("prepare", json.dumps({"sender": info.get("alias"), "client": client,
                                       "files": list(files.values())}))
            if taken:
                say("prepare-status", 409)
                self.reply(409, message="Blocked by another session")
                return
            message = is_message(files)
            if message is not None:
                # receive_controller.dart l.164-182, 234: a message is always shown (Quick Save never applies to
                # one, l.129) and added to the history, whatever the person then does.
                say("message", json.dumps(message))
            if mode in ("decline", "back") or message is not None:
                with receiver.lock:
                    receiver.session = None
                # receive_page.dart: Decline (l.344-346) and the back gesture (PopScope, l.91-96) both call
                # onDecline: declineFileRequest (receive_controller.dart l.618-626), 403. A message's Close
                # (receive_page.dart l.292-305) accepts nothing (receive_controller.dart l.194-199, 532-538): 204.
                status = 403 if mode in ("decline", "back") else 204
                say("prepare-status", status)
                if status == 403:
                    self.reply(403, message="Rejected")
                else:
                    self.reply(204)
                return
            # Accept with the selection the page starts with, every file (receive_controller.dart l.231,
            # receive_page.dart l.357).
            with receiver.lock:
                session.files = {dto["id"]: {"dto": dto, "token": str(uuid.uuid4()), "status": "pending",
                                             "attempts": 0} for dto in files.values()}
                tokens = {file_id: file["token"] for file_id, file in session.files.items()}
            say("prepare-status", 200)
            self.reply(200, {"sessionId": session.id, "files": tokens})

        def upload(self, body, query):
            """server/v2.rs upload (l.362-453): missing parameters 400 (l.370-379); no such session, another
            address, an unknown file, a wrong token, or a file not pending 403 "Invalid token or IP address"
            (l.381-399); then the body is saved (common/save.rs save_req_to_target): more bytes than offered, fewer,
            or a connection that ends first 500; a SHA-256 other than the offered one 422 "Checksum mismatch"
            (checked when the offer has one: verifyChecksums is on by default, persistence_provider.dart l.405);
            else 200."""
            session_id, file_id, token = query.get("sessionId"), query.get("fileId"), query.get("token")
            if None in (session_id, file_id, token):
                self.refuse(400, "Missing parameters", body)
                return
            with receiver.lock:
                session, mode, count = receiver.session, receiver.mode, receiver.count
                file = session.files.get(file_id) if session and session.id == session_id else None
                valid = (file is not None and session.sender["ip"] == self.client_address[0]
                         and file["token"] == token and file["status"] == "pending")
                if valid:
                    file["status"] = "in-progress"
                    file["attempts"] += 1
                    attempt = file["attempts"]
            if not valid:
                say("upload-status", 403, file_id)
                self.refuse(403, "Invalid token or IP address", body)
                return
            dto = file["dto"]
            name = os.path.basename(str(dto["fileName"])) or file_id
            size, expected = int(dto["size"]), dto.get("sha256")
            corrupt = mode == "corrupt" and attempt <= count
            if corrupt:
                say("corrupted", name, attempt)
            part = os.path.join(receiver.args.downloads, name + ".part")
            digest, received, cut = hashlib.sha256(), 0, False
            cancelled_at, after = None, 0
            with open(part, "wb") as out:
                while True:
                    try:
                        data = body.read()
                    except (EOFError, OSError, ValueError):
                        cut = True
                        break
                    if not data:
                        break
                    if corrupt and received == 0:
                        data = bytes([data[0] ^ 0xFF]) + data[1:]
                    received += len(data)
                    if cancelled_at is not None:
                        after += len(data)
                    if received > size:  # common/save.rs write_file_from_receiver l.297-301: stops reading
                        break
                    digest.update(data)
                    out.write(data)
                    if mode == "cancel-after" and cancelled_at is None and received >= count:
                        # Reading stops while the person's cancel goes out (a receiver slower than its
                        # sender), and resumes once it is answered: the 1.18 server reads an upload under way to
                        # its end ("Uploads that are already in progress still run to completion",
                        # server/mod.rs l.210), so what arrives after the answer is the sender's doing.
                        receiver.cancel_by_person(session)
                        cancelled_at = time.monotonic()
            if cancelled_at is not None:
                say("after-cancel", name, after, f"{time.monotonic() - cancelled_at:.2f}")
            sha256 = digest.hexdigest()
            if cut:
                status = 500  # to nobody: the connection is gone
                self.close_connection = True
                say("upload-cut", name, received, size)
            elif received != size:  # common/save.rs l.297-301, 315-319
                status = 500
            elif expected and sha256 != str(expected).lower():  # common/save.rs l.225-233
                status = 422
            else:
                status = 200
            if status == 200:
                os.replace(part, os.path.join(receiver.args.downloads, name))
                say("saved", name, sha256, received)
            else:
                os.remove(part)
            self.finalize(session, file, status)
            if not cut:
                say("upload-status", status, name)
                if status == 200:
                    self.reply(200)
                else:
                    self.reply(status, message="Checksum mismatch" if status == 422 else f"Status code: {status}",
                               close=not body.done)

        def finalize(self, session, file, status):
            """server/v2.rs finalize_file (l.653-692): a checksum mismatch makes the file pending again while
            attempts are left (l.666-668), so the sender may send it again with the same token; the session ends
            once every file finished or failed; a session cancelled meanwhile is left alone (the upload's answer
            stands: 200 for a whole body)."""
            with receiver.lock:
                if receiver.session is not session or file["status"] != "in-progress":
                    return
                if status == 200:
                    file["status"] = "finished"
                elif status == 422 and file["attempts"] < MAX_UPLOAD_ATTEMPTS:
                    file["status"] = "pending"
                else:
                    file["status"] = "failed"
                if all(f["status"] in ("finished", "failed") for f in session.files.values()):
                    receiver.session = None

        def cancel(self, body, query):
            """server/v2.rs cancel (l.455-528): the session this receiver holds, named by the sender at the
            address it prepared from, ends; any other id is a transfer this device might be sending
            (CancelReceived, l.514-524), this one sends none. 200 with an empty body either way. (Offers are
            decided at once here, so none is ever pending for a cancel without an id, l.464-489.)"""
            session_id = query.get("sessionId")
            with receiver.lock:
                session = receiver.session
                ours = (session is not None and session.id == session_id
                        and session.sender["ip"] == self.client_address[0])
                if ours:
                    receiver.session = None
            say("cancel-from-sender" if ours else "cancel-received", session_id)
            try:
                body.read_all(JSON_LIMIT)
            except (EOFError, OSError, ValueError):
                self.reply(200, close=True)
                return
            self.reply(200)

    return Handler


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self, receiver):
        self.receiver = receiver
        super().__init__(("", PORT), make_handler(receiver))  # server/mod.rs start_with_port: the wildcard address

    def finish_request(self, request, client_address):
        # The handshake in the request's own thread: a slow one holds nobody else.
        request.settimeout(SOCKET_TIMEOUT)
        try:
            tls = self.receiver.context.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError) as error:
            print(f"handshake from {client_address[0]}: {error}", file=sys.stderr, flush=True)
            return
        try:
            super().finish_request(tls, client_address)
        finally:
            try:
                tls.close()
            except OSError:
                pass


def multicast_socket(address):
    """multicast/socket.rs bind_multicast_socket_v4 (l.90-118): one socket on the port, shared, joined on the
    interface, sending from it with loopback on and TTL 1."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("", PORT))
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                    struct.pack("4s4s", socket.inet_aton(GROUP), socket.inet_aton(address)))
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(address))
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    sock.settimeout(1)
    return sock


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", required=True)
    parser.add_argument("--downloads", required=True)
    parser.add_argument("--trust", action="append", required=True)
    parser.add_argument("--alias", default="Phone")
    parser.add_argument("--mode", default="accept")
    parser.add_argument("--deadline", type=float, default=600)
    args = parser.parse_args()
    os.makedirs(args.downloads, exist_ok=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with tempfile.TemporaryDirectory() as directory:
        receiver = Receiver(args, *make_identity(directory))
        server = Server(receiver)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        sock = multicast_socket(args.address)
        threading.Thread(target=receiver.listen, args=(sock, stop), daemon=True).start()
        say("ready", receiver.fingerprint, PORT)
        threading.Thread(target=receiver.announce, args=(sock,), daemon=True).start()

        def control():
            for line in sys.stdin:
                line = line.strip()
                if line == "announce":
                    threading.Thread(target=receiver.announce, args=(sock,), daemon=True).start()
                elif line:
                    try:
                        receiver.set_mode(line)
                    except ValueError as error:
                        print(error, file=sys.stderr, flush=True)

        threading.Thread(target=control, daemon=True).start()
        stop.wait(args.deadline)


if __name__ == "__main__":
    main()
