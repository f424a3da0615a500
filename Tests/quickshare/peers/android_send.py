#!/usr/bin/env python3
"""Sends a text or a URL over Quick Share the way an Android phone does, and checks what the receiver
sends back strictly: a test peer of this project's own.

  android_send.py --host H --port P (--text T | --url U | --file PATH) [--kind TEXT|URL|ADDRESS|PHONE_NUMBER]
                  [--timeout S] [--expect accepted|rejected] [--device-name NAME] [--endpoint ABCD]
                  [--title T] [--keep-alive-interval-ms MS] [--keep-alive-timeout-ms MS]
                  [--no-safe-to-disconnect] [--allow-pyquickshare-quirks] [--linger S] [--trace]

The frames, their order and their fields are those of NearDrop's outbound connection (grishka/NearDrop
at 01e4231, NearbyShare/OutboundNearbyConnection.swift, cited as OUT:<line>, and NearbyConnection.swift,
cited as NC:<line>), with the ConnectionRequest and ConnectionResponse fields that Google's Nearby
Connections fills in (google/nearby connections/implementation/offline_frames.cc,
ForConnectionRequestConnections and ForConnectionResponse, cited as NEARBY):
  1 ConnectionRequest in clear: endpoint ID, name and info (version 0, visible, phone), a nonce,
    mediums [WIFI_LAN], medium metadata, keep-alive interval 5000 ms and timeout 30000 ms
  2 UKEY2 ClientInit (P-256 only, commitment = SHA-512 of the ClientFinish), then ServerInit checked,
    ClientFinish, and our ConnectionResponse (ACCEPT, ANDROID) sent before the peer's is read
  3 the peer's ConnectionResponse in clear, which must be ACCEPT
  4 encrypted from here, each direction's sequence numbers from 1; sharing frames as BYTES payloads
    (a data chunk, then an empty LAST_CHUNK whose offset is the size): PairedKeyEncryption, then
    after the peer's, PairedKeyResult UNABLE, then after the peer's, an Introduction with one
    TextMetadata (id, payload id, type, size, title)
    or, with --file, one FileMetadata (name, type from the MIME type, payload id, size, MIME type,
    id: OUT:280-312, and the attachment id Android sets as well, FileMetadata.id, field 6)
  5 the peer's Response: ACCEPT brings the BYTES payload with the text and its empty LAST_CHUNK, or
    the file as a FILE payload in chunks of 512 KiB, then an empty LAST_CHUNK at its size
    (OUT:356-436 sendNextFileChunk); any answer is followed by a DisconnectionFrame and the end of
    the connection
Keep-alives are sent every interval once encrypted, and a peer's keep-alive is answered with ack.

What the receiver sends is checked as NearDrop checks it, and stricter: the framing (length under
5 MiB), the UKEY2 ServerInit fields, the SecureMessage header, the HMAC, sequence numbers exactly 1, 2,
3..., each BYTES chunk at the offset the payload has reached, and the sharing frames in the order above
(PairedKeyEncryption, PairedKeyResult, Response); anything else fails loudly and names the frame.

Standard output: one JSON line {"outcome": "accepted"|"rejected", "pin": "1234", "status", ...}, or
{"event": "error", "error": ...}. Exit status: 0 with an outcome (the --expect one, when given); 1 on a
protocol error, a closed connection or the timeout; 2 on bad arguments; 3 when the outcome is not the
--expect one.

--allow-pyquickshare-quirks tolerates the two things PyPI's pyquickshare 0.1.0.post1 sends that Android
would not: its LAST_CHUNK at offset 0 (PQS/common.py:255-265, make_send passes no offset), and its
keep-alives wrapped in BYTES payloads (PQS/common.py:204-216 sends an OfflineFrame KEEP_ALIVE through
make_send), which parse as sharing frames of type CERTIFICATE_INFO.
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac as hmac_mod
import json
import mimetypes
import os
import random
import secrets
import string
import struct
import sys
import time
from typing import Any
from urllib.parse import urlsplit

sys.dont_write_bytecode = True  # no __pycache__ beside the peers
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qs_lib import emit, encode_endpoint_info, fail, import_pyquickshare, note  # noqa: E402

PROG = "android_send.py"
SANE_FRAME_LENGTH = 5 * 1024 * 1024  # NC:18, checked at NC:118


class ProtocolError(Exception):
    pass


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--text", help="the text to send (default kind TEXT)")
    g.add_argument("--url", help="the URL to send (default kind URL)")
    g.add_argument("--file", help="a file to send (its name, MIME type and size in the offer)")
    p.add_argument("--kind", choices=("TEXT", "URL", "ADDRESS", "PHONE_NUMBER"),
                   help="TextMetadata.type (default TEXT for --text, URL for --url)")
    p.add_argument("--title", help="TextMetadata.text_title (default: a URL's host, as OUT:274; else "
                                   "the text's first 64 characters)")
    p.add_argument("--timeout", type=float, default=30, help="seconds for the whole exchange (30)")
    p.add_argument("--expect", choices=("accepted", "rejected"), help="exit 3 on another outcome")
    p.add_argument("--device-name", default="Pixel 8", help="endpoint name and info name (Pixel 8)")
    p.add_argument("--endpoint", help="4-character endpoint ID (default random [A-Z0-9]{4})")
    p.add_argument("--keep-alive-interval-ms", type=int, default=5000)
    p.add_argument("--keep-alive-timeout-ms", type=int, default=30000)
    p.add_argument("--no-safe-to-disconnect", action="store_true",
                   help="leave safe_to_disconnect_version out of our ConnectionResponse")
    p.add_argument("--allow-pyquickshare-quirks", action="store_true",
                   help="tolerate pyquickshare 0.1.0.post1's LAST_CHUNK offset and keep-alive payloads")
    p.add_argument("--linger", type=float, default=2.0,
                   help="seconds to wait for the peer to close after our DisconnectionFrame (2)")
    p.add_argument("--trace", action="store_true", help="every frame, as JSON lines on stderr")
    a = p.parse_args()
    if not 0 < a.port < 65536 or a.timeout <= 0 or a.linger < 0 or a.keep_alive_interval_ms <= 0:
        p.error("--port 1..65535, --timeout > 0, --linger >= 0, --keep-alive-interval-ms > 0")
    if a.endpoint is not None and (len(a.endpoint) != 4 or not a.endpoint.isascii()):
        p.error("--endpoint must be 4 ASCII characters")
    if a.kind is None:
        a.kind = "URL" if a.url is not None else "TEXT"
    return a


def random_int64() -> int:  # OUT:40 Int64.random(in: Int64.min...Int64.max)
    return random.randint(-(2 ** 63), 2 ** 63 - 1)


class Peer:
    """One connection: the plain framing (NC:99-163) and, once keys exist, the secure channel
    (NC:165-305) with strict sequence numbers."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, args: argparse.Namespace,
                 pb: dict[str, Any]) -> None:
        self.reader, self.writer, self.args, self.pb = reader, writer, args, pb
        self.keychain: Any = None
        self.send_seq: Any = None  # pyquickshare's make_sequence_number(): 1, 2, 3... (NC:165-168)
        self.recv_seq = 0  # NC:259-260
        self.buffers: dict[int, bytearray] = {}
        self.events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.warnings: list[str] = []
        self.peer_frames: list[str] = []
        self.closed_by_peer = False

    def trace(self, direction: str, **kv: Any) -> None:
        if self.args.trace:
            sys.stderr.write(json.dumps({"trace": direction, **kv}, sort_keys=True, default=str) + "\n")
            sys.stderr.flush()

    # --- plain frames: 4-byte big-endian length, then the message (NC:145-163, NC:99-143)
    def write_plain(self, data: bytes, what: str) -> None:
        self.trace("out", plain=what, size=len(data))
        self.writer.write(struct.pack(">I", len(data)) + data)

    async def read_frame(self) -> bytes:
        head = await self.reader.readexactly(4)
        (length,) = struct.unpack(">I", head)
        if length >= SANE_FRAME_LENGTH:  # NC:118-122
            raise ProtocolError(f"frame length {length} is not under {SANE_FRAME_LENGTH}")
        return await self.reader.readexactly(length)

    # --- the secure channel
    def seal_offline(self, frame: Any, what: str) -> None:
        """An OfflineFrame that is not a payload (keep-alive, disconnection), encrypted as NC:165-204
        does: DeviceToDeviceMessage{sequence_number, message}, AES-256-CBC with PKCS#7 and a random IV,
        HeaderAndBody naming AES_256_CBC / HMAC_SHA256 with GcmMetadata{DEVICE_TO_DEVICE_MESSAGE, 1},
        SecureMessage signed with HMAC-SHA256. pyquickshare's payloadify() (PQS/common.py:106-171) does
        the same but only for payload frames, so the last part of it is repeated here."""
        from cryptography.hazmat.primitives import padding
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        D2D, SG, SM = self.pb["D2D"], self.pb["SG"], self.pb["SM"]
        d2d = D2D.DeviceToDeviceMessage()
        d2d.sequence_number = self.send_seq()
        d2d.message = frame.SerializeToString()
        iv = os.urandom(16)
        padder = padding.PKCS7(128).padder()
        enc = Cipher(algorithms.AES(self.keychain.encrypt_key), modes.CBC(iv)).encryptor()
        body = enc.update(padder.update(d2d.SerializeToString()) + padder.finalize()) + enc.finalize()
        md = SG.GcmMetadata()
        md.type = SG.DEVICE_TO_DEVICE_MESSAGE
        md.version = 1
        hb = SM.HeaderAndBody()
        hb.header.encryption_scheme = SM.AES_256_CBC
        hb.header.signature_scheme = SM.HMAC_SHA256
        hb.header.iv = iv
        hb.header.public_metadata = md.SerializeToString()
        hb.body = body
        sm = SM.SecureMessage()
        sm.header_and_body = hb.SerializeToString()
        sm.signature = hmac_mod.new(self.keychain.send_hmac_key, sm.header_and_body, hashlib.sha256).digest()
        self.trace("out", seq=d2d.sequence_number, offline=what)
        self.write_plain_raw(sm.SerializeToString())

    def write_plain_raw(self, data: bytes) -> None:
        self.writer.write(struct.pack(">I", len(data)) + data)

    def send_bytes_payload(self, data: bytes, payload_id: int, what: str) -> None:
        """NC:210-233 sendBytesPayload: one chunk with everything (offset 0, flags 0), then an empty
        chunk with flags 1 (LAST_CHUNK) at offset len(data), both with the header {id, BYTES,
        total_size, is_sensitive false}. Built with pyquickshare's payloadify() (PQS/common.py:106-171),
        which is right when given the offset (its own make_send gives the last chunk offset 0)."""
        from pyquickshare.common import payloadify
        O = self.pb["O"]
        bytes_type = O.PayloadTransferFrame.PayloadHeader.BYTES
        for body, flags, offset in ((data, 0, 0), (b"", 1, len(data))):
            seq_box: list[int] = []

            def seq() -> int:
                n = self.send_seq()
                seq_box.append(n)
                return n

            sealed = payloadify(body, self.keychain, id=payload_id, flags=flags, type=bytes_type,
                                offset=offset, total_size=len(data), sequence_number=seq)
            self.trace("out", seq=seq_box[0], payload=what, payload_id=payload_id, flags=flags,
                       offset=offset, body=len(body))
            self.write_plain_raw(sealed)

    async def send_file_payload(self, path: str, size: int, payload_id: int) -> None:
        """OUT:356-436 sendNextFileChunk: chunks of 512 KiB read from the file (offset, flags 0), each
        written before the next is read, then an empty chunk with flags 1 (LAST_CHUNK) at the file's
        size, all with the header {id, FILE, total_size, is_sensitive false}."""
        from pyquickshare.common import payloadify
        file_type = self.pb["O"].PayloadTransferFrame.PayloadHeader.FILE
        offset = 0
        with open(path, "rb") as f:
            while True:
                body = f.read(512 * 1024)
                if offset == size or not body:
                    break
                self.write_plain_raw(payloadify(body, self.keychain, id=payload_id, flags=0, type=file_type,
                                                offset=offset, total_size=size, sequence_number=self.send_seq))
                offset += len(body)
                await self.writer.drain()
        if offset != size:
            raise ProtocolError(f"{path} changed while it was sent: {offset} bytes, not {size}")
        self.write_plain_raw(payloadify(b"", self.keychain, id=payload_id, flags=1, type=file_type,
                                        offset=size, total_size=size, sequence_number=self.send_seq))
        self.trace("out", payload="FILE", payload_id=payload_id, chunks=-(-size // (512 * 1024)), size=size)

    def send_sharing(self, frame: Any, what: str) -> None:  # NC:206-208 sendTransferSetupFrame
        self.send_bytes_payload(frame.SerializeToString(), random_int64(), what)

    def open_secure(self, data: bytes) -> Any:
        """NC:235-261, stricter: the header's schemes and metadata, the HMAC (constant-time), the
        padding, and the sequence number exactly one more than the last."""
        from cryptography.hazmat.primitives import padding
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        D2D, SG, SM, O = self.pb["D2D"], self.pb["SG"], self.pb["SM"], self.pb["O"]
        sm = SM.SecureMessage()
        sm.ParseFromString(data)
        if not sm.HasField("header_and_body") or not sm.HasField("signature"):  # NC:236
            raise ProtocolError("SecureMessage without header_and_body or signature")
        want = hmac_mod.new(self.keychain.receive_hmac_key, sm.header_and_body, hashlib.sha256).digest()
        if not hmac_mod.compare_digest(want, sm.signature):  # NC:237-238
            raise ProtocolError("HMAC does not match (wrong keys, or the wrong direction's keys)")
        hb = SM.HeaderAndBody()
        hb.ParseFromString(sm.header_and_body)
        h = hb.header
        if h.encryption_scheme != SM.AES_256_CBC or h.signature_scheme != SM.HMAC_SHA256 or len(h.iv) != 16:
            raise ProtocolError(f"SecureMessage header: encryption {h.encryption_scheme}, signature "
                                f"{h.signature_scheme}, IV of {len(h.iv)} bytes")
        md = SG.GcmMetadata()
        md.ParseFromString(h.public_metadata)
        if md.type != SG.DEVICE_TO_DEVICE_MESSAGE or md.version != 1:
            raise ProtocolError(f"GcmMetadata type {md.type} version {md.version}")
        dec = Cipher(algorithms.AES(self.keychain.decrypt_key), modes.CBC(h.iv)).decryptor()
        unpad = padding.PKCS7(128).unpadder()
        try:
            plain = unpad.update(dec.update(hb.body) + dec.finalize()) + unpad.finalize()
        except ValueError as e:
            raise ProtocolError(f"bad AES-CBC body or padding: {e}") from e
        d2d = D2D.DeviceToDeviceMessage()
        d2d.ParseFromString(plain)
        if not d2d.HasField("message") or not d2d.HasField("sequence_number"):  # NC:258
            raise ProtocolError("DeviceToDeviceMessage without message or sequence_number")
        self.recv_seq += 1
        if d2d.sequence_number != self.recv_seq:  # NC:259-260
            raise ProtocolError(f"wrong sequence number: expected {self.recv_seq}, got {d2d.sequence_number}")
        frame = O.OfflineFrame()
        frame.ParseFromString(d2d.message)
        return d2d.sequence_number, frame

    def keep_alive_frame(self, ack: bool) -> Any:  # NC:436-451
        O = self.pb["O"]
        f = O.OfflineFrame()
        f.version = O.OfflineFrame.V1
        f.v1.type = O.V1Frame.KEEP_ALIVE
        f.v1.keep_alive.ack = ack
        return f

    async def reader_loop(self) -> None:
        """Reads encrypted frames until the end, putting ("sharing", Frame), ("disconnection", None),
        ("eof", None) or ("error", message) on self.events."""
        O, W = self.pb["O"], self.pb["W"]
        try:
            while True:
                try:
                    data = await self.read_frame()
                except asyncio.IncompleteReadError:
                    self.closed_by_peer = True
                    await self.events.put(("eof", None))
                    return
                seq, frame = self.open_secure(data)
                if frame.version != O.OfflineFrame.V1 or not frame.HasField("v1"):
                    raise ProtocolError(f"OfflineFrame version {frame.version} without v1 (seq {seq})")
                t = frame.v1.type
                if t == O.V1Frame.PAYLOAD_TRANSFER:  # NC:263-296
                    await self.on_payload(seq, frame.v1.payload_transfer)
                elif t == O.V1Frame.KEEP_ALIVE:  # NC:297-301: answered with ack
                    self.trace("in", seq=seq, offline="KEEP_ALIVE", ack=frame.v1.keep_alive.ack)
                    if not frame.v1.keep_alive.ack:
                        self.seal_offline(self.keep_alive_frame(True), "KEEP_ALIVE ack")
                        await self.writer.drain()
                elif t == O.V1Frame.DISCONNECTION:
                    self.trace("in", seq=seq, offline="DISCONNECTION")
                    self.peer_frames.append("DISCONNECTION")
                    await self.events.put(("disconnection", None))
                else:  # NC:302-304 prints and ignores the rest
                    name = O.V1Frame.FrameType.Name(t)
                    self.trace("in", seq=seq, offline=name)
                    self.warnings.append(f"ignored encrypted {name} frame (seq {seq})")
        except (ProtocolError, ValueError) as e:
            await self.events.put(("error", str(e)))
        except Exception as e:  # noqa: BLE001
            await self.events.put(("error", f"{type(e).__name__}: {e}"))

    async def on_payload(self, seq: int, pt: Any) -> None:
        O, W = self.pb["O"], self.pb["W"]
        header, chunk = pt.payload_header, pt.payload_chunk
        PH = O.PayloadTransferFrame.PayloadHeader
        self.trace("in", seq=seq, payload_type=PH.PayloadType.Name(header.type), payload_id=header.id,
                   flags=chunk.flags, offset=chunk.offset, body=len(chunk.body), total_size=header.total_size)
        if pt.packet_type != O.PayloadTransferFrame.DATA:
            self.warnings.append(f"ignored payload packet of type {pt.packet_type} (seq {seq})")
            return
        if not header.HasField("type") or not header.HasField("id"):  # NC:268
            raise ProtocolError(f"payload header without type or id (seq {seq})")
        if not pt.HasField("payload_chunk") or not chunk.HasField("offset") or not chunk.HasField("flags"):
            raise ProtocolError(f"payload chunk without offset or flags (seq {seq})")  # NC:269
        if header.type != PH.BYTES:
            raise ProtocolError(f"a receiver sent a {PH.PayloadType.Name(header.type)} payload (seq {seq})")
        if header.total_size > SANE_FRAME_LENGTH:  # NC:272-275
            raise ProtocolError(f"BYTES payload of {header.total_size} bytes")
        buf = self.buffers.setdefault(header.id, bytearray())
        last = bool(chunk.flags & 1)
        if chunk.offset != len(buf):  # NC:280-283
            quirk = self.args.allow_pyquickshare_quirks and last and chunk.offset == 0 and not chunk.body
            if not quirk:
                raise ProtocolError(f"chunk of payload {header.id} at offset {chunk.offset}, expected "
                                    f"{len(buf)} (seq {seq})")
            self.warnings.append(f"LAST_CHUNK of payload {header.id} at offset 0, not {len(buf)} "
                                 f"(pyquickshare's make_send)")
        buf += chunk.body
        if last:  # NC:287-293
            del self.buffers[header.id]
            if len(buf) != header.total_size:
                raise ProtocolError(f"payload {header.id} has {len(buf)} bytes, header said {header.total_size}")
            frame = W.Frame()
            try:
                frame.ParseFromString(bytes(buf))
            except Exception as e:  # noqa: BLE001
                raise ProtocolError(f"BYTES payload {header.id} is not a sharing Frame: {e}") from e
            await self.events.put(("sharing", frame))


async def exchange(args: argparse.Namespace) -> dict[str, Any]:  # noqa: C901, PLR0912, PLR0915
    from cryptography.hazmat.primitives.asymmetric import ec

    from pyquickshare import ukey2 as U
    from pyquickshare.common import make_sequence_number
    from pyquickshare.protos import (
        device_to_device_messages_pb2 as D2D,
        offline_wire_formats_pb2 as O,
        securegcm_pb2 as SG,
        securemessage_pb2 as SM,
        ukey_pb2 as UK,
        wire_format_pb2 as W,
    )
    from pyquickshare.receive import to_pin

    pb = {"D2D": D2D, "O": O, "SG": SG, "SM": SM, "UK": UK, "W": W}
    endpoint_id = args.endpoint or "".join(secrets.choice(string.ascii_uppercase + string.digits) for _ in range(4))
    reader, writer = await asyncio.open_connection(args.host, args.port)
    peer = Peer(reader, writer, args, pb)
    # When the connection was made (ns since the epoch): the start of what a benchmark times.
    result: dict[str, Any] = {"endpoint_id": endpoint_id, "connected_ns": time.time_ns()}

    # 1. ConnectionRequest (OUT:135-147, sent on connect with the ClientInit right after, OUT:67-76).
    # NearDrop fills endpoint ID, name, info and mediums [WIFI_LAN]; Android's Nearby Connections adds
    # a nonce, medium metadata and the keep-alive interval and timeout (NEARBY ForConnectionRequest...).
    cr = O.OfflineFrame()
    cr.version = O.OfflineFrame.V1
    cr.v1.type = O.V1Frame.CONNECTION_REQUEST
    req = cr.v1.connection_request
    req.endpoint_id = endpoint_id
    req.endpoint_name = args.device_name
    req.endpoint_info = encode_endpoint_info(args.device_name, device_type=1)  # phone
    req.nonce = random.randint(-(2 ** 31), 2 ** 31 - 1)
    req.mediums.append(O.ConnectionRequestFrame.WIFI_LAN)
    req.medium_metadata.supports_5_ghz = True
    req.keep_alive_interval_millis = args.keep_alive_interval_ms
    req.keep_alive_timeout_millis = args.keep_alive_timeout_ms
    peer.write_plain(cr.SerializeToString(), "CONNECTION_REQUEST")

    # 2. UKEY2 ClientInit (OUT:149-185): a P-256 key; the ClientFinish is built first, since the
    # ClientInit commits to SHA-512 of it; one cipher commitment, P256_SHA512; next protocol
    # AES_256_CBC-HMAC_SHA256. The key's coordinates as pyquickshare's encode_public_key writes them
    # (PQS/ukey2.py:203-221: two's complement with a leading 0x00, as the reference's ExportEcP256Key).
    # pyquickshare's own do_client_key_exchange (PQS/ukey2.py:411-473) is not used: it checks nothing
    # of the ServerInit (not even that it is one) and sends no ConnectionRequest.
    private_key = ec.generate_private_key(ec.SECP256R1())
    finish = UK.Ukey2ClientFinished()
    finish.public_key = U.encode_public_key(private_key.public_key()).SerializeToString()
    finish_msg = UK.Ukey2Message()
    finish_msg.message_type = UK.Ukey2Message.CLIENT_FINISH
    finish_msg.message_data = finish.SerializeToString()
    client_finish = finish_msg.SerializeToString()
    init = UK.Ukey2ClientInit()
    init.version = 1
    init.random = os.urandom(32)
    init.next_protocol = "AES_256_CBC-HMAC_SHA256"
    init.cipher_commitments.append(UK.Ukey2ClientInit.CipherCommitment(
        handshake_cipher=UK.P256_SHA512, commitment=hashlib.sha512(client_finish).digest()))
    init_msg = UK.Ukey2Message()
    init_msg.message_type = UK.Ukey2Message.CLIENT_INIT
    init_msg.message_data = init.SerializeToString()
    client_init = init_msg.SerializeToString()
    peer.write_plain(client_init, "UKEY2 CLIENT_INIT")
    await writer.drain()

    # ServerInit, checked as OUT:187-206 does (message type, version 1, 32 random bytes, P256_SHA512).
    server_init_raw = await peer.read_frame()
    msg = UK.Ukey2Message()
    msg.ParseFromString(server_init_raw)
    if msg.message_type == UK.Ukey2Message.ALERT:
        alert = UK.Ukey2Alert()
        alert.ParseFromString(msg.message_data)
        raise ProtocolError(f"UKEY2 alert {UK.Ukey2Alert.AlertType.Name(alert.type)}: {alert.error_message!r}")
    if msg.message_type != UK.Ukey2Message.SERVER_INIT:
        raise ProtocolError(f"expected UKEY2 SERVER_INIT, got message type {msg.message_type}")
    server_init = UK.Ukey2ServerInit()
    server_init.ParseFromString(msg.message_data)
    if server_init.version != 1 or len(server_init.random) != 32 or server_init.handshake_cipher != UK.P256_SHA512:
        raise ProtocolError(f"ServerInit version {server_init.version}, random of {len(server_init.random)} "
                            f"bytes, cipher {server_init.handshake_cipher}")
    peer.trace("in", plain="UKEY2 SERVER_INIT", size=len(server_init_raw))
    generic = SM.GenericPublicKey()
    generic.ParseFromString(server_init.public_key)
    server_key = U.decode_public_key(generic)  # PQS/ukey2.py:224-248 (raises unless EC_P256 on the curve)
    # Keys (NC:348-403): pyquickshare's derive_keys (PQS/ukey2.py:251-335) hashes the ECDH secret's
    # fixed 32-byte x coordinate, as google/ukey2's C++ reference does (EVP_PKEY_derive, then SHA-256);
    # NearDrop (NC:362) hashes the magnitude form, which differs about once in 256 handshakes.
    # derive_keys gives the server's view; swap_keychain (PQS/ukey2.py:338-353) the client's.
    peer.keychain = U.swap_keychain(U.derive_keys(client_init, server_init_raw, private_key, server_key))
    result["pin"] = to_pin(peer.keychain.auth_string)  # NC:307-321 pinCodeFromAuthKey
    peer.send_seq = make_sequence_number()

    # ClientFinish (OUT:209), then our ConnectionResponse at once (OUT:212-221; ACCEPT, status 0, and
    # os_info ANDROID where NearDrop says APPLE). NEARBY ForConnectionResponse also sets
    # multiplex_socket_bitmask and safe_to_disconnect_version (field 7, absent from pyquickshare's
    # proto, so added as a raw field).
    peer.write_plain(client_finish, "UKEY2 CLIENT_FINISH")
    resp = O.OfflineFrame()
    resp.version = O.OfflineFrame.V1
    resp.v1.type = O.V1Frame.CONNECTION_RESPONSE
    r = resp.v1.connection_response
    r.response = O.ConnectionResponseFrame.ACCEPT
    r.status = 0
    r.os_info.type = O.OsInfo.ANDROID
    r.multiplex_socket_bitmask = 0
    if not args.no_safe_to_disconnect:
        r.MergeFromString(bytes([7 << 3, 1]))  # safe_to_disconnect_version = 1
    peer.write_plain(resp.SerializeToString(), "CONNECTION_RESPONSE")
    await writer.drain()

    # 3. The peer's ConnectionResponse in clear (OUT:92-93, checked as OUT:227-233).
    data = await peer.read_frame()
    presp = O.OfflineFrame()
    presp.ParseFromString(data)
    if presp.version != O.OfflineFrame.V1 or presp.v1.type != O.V1Frame.CONNECTION_RESPONSE:
        raise ProtocolError(f"expected the peer's ConnectionResponse in clear, got frame type "
                            f"{O.V1Frame.FrameType.Name(presp.v1.type)}")
    if presp.v1.connection_response.response != O.ConnectionResponseFrame.ACCEPT:
        raise ProtocolError("the peer's ConnectionResponse is not ACCEPT (OUT:233)")
    result["peer_os"] = O.OsInfo.OsType.Name(presp.v1.connection_response.os_info.type)
    peer.trace("in", plain="CONNECTION_RESPONSE", os=result["peer_os"])

    # 4. Encrypted from here. PairedKeyEncryption (OUT:235-250): 6 random bytes of secret_id_hash,
    # 72 of signed_data.
    reader_task = asyncio.create_task(peer.reader_loop())

    async def keep_alives() -> None:  # Android sends one every keep_alive_interval_millis
        while True:
            await asyncio.sleep(args.keep_alive_interval_ms / 1000)
            peer.seal_offline(peer.keep_alive_frame(False), "KEEP_ALIVE")
            await writer.drain()

    ka_task = asyncio.create_task(keep_alives())

    def sharing(ftype: int) -> Any:
        f = W.Frame()
        f.version = W.Frame.V1
        f.v1.type = ftype
        return f

    async def expect(ftype: int, where: str) -> Any:
        """The next sharing frame must be FTYPE (OUT:108-128 with :253-266, :324-325)."""
        while True:
            kind, value = await peer.events.get()
            if kind == "error":
                raise ProtocolError(value)
            if kind in ("eof", "disconnection"):
                raise ProtocolError(f"the peer ended the connection ({kind}) while we waited for its {where}")
            frame = value
            name = W.V1Frame.FrameType.Name(frame.v1.type)
            peer.peer_frames.append(name)
            peer.trace("in", sharing=name)
            if frame.v1.type == W.V1Frame.CANCEL:  # OUT:109-114
                raise ProtocolError(f"the peer cancelled while we waited for its {where}")
            if (args.allow_pyquickshare_quirks and frame.v1.type == W.V1Frame.CERTIFICATE_INFO
                    and not frame.v1.certificate_info.public_certificate):
                peer.warnings.append("ignored an empty CERTIFICATE_INFO (pyquickshare's keep-alive "
                                     "sent as a BYTES payload)")
                continue
            if frame.version != W.Frame.V1 or frame.v1.type != ftype:
                raise ProtocolError(f"out of order: expected {where} "
                                    f"({W.V1Frame.FrameType.Name(ftype)}), got {name}")
            return frame

    try:
        pke = sharing(W.V1Frame.PAIRED_KEY_ENCRYPTION)
        pke.v1.paired_key_encryption.secret_id_hash = os.urandom(6)
        pke.v1.paired_key_encryption.signed_data = os.urandom(72)
        peer.send_sharing(pke, "PAIRED_KEY_ENCRYPTION")
        await writer.drain()

        # The peer's PairedKeyEncryption, then PairedKeyResult UNABLE (OUT:253-263).
        f = await expect(W.V1Frame.PAIRED_KEY_ENCRYPTION, "PairedKeyEncryption")
        if not f.v1.HasField("paired_key_encryption"):  # OUT:254
            raise ProtocolError("PAIRED_KEY_ENCRYPTION frame without paired_key_encryption")
        pkr = sharing(W.V1Frame.PAIRED_KEY_RESULT)
        pkr.v1.paired_key_result.status = W.PairedKeyResultFrame.UNABLE
        peer.send_sharing(pkr, "PAIRED_KEY_RESULT")
        await writer.drain()

        # The peer's PairedKeyResult, then the Introduction (OUT:265-322): one TextMetadata with the
        # payload ID (OUT:40, a random Int64), type, size in UTF-8 bytes and title (OUT:272-277), and
        # the attachment id Android sets as well (TextMetadata.id, field 6).
        f = await expect(W.V1Frame.PAIRED_KEY_RESULT, "PairedKeyResult")
        if not f.v1.HasField("paired_key_result"):  # OUT:266
            raise ProtocolError("PAIRED_KEY_RESULT frame without paired_key_result")
        payload_id = random_int64()
        intro = sharing(W.V1Frame.INTRODUCTION)
        if args.file is not None:
            size = os.path.getsize(args.file)
            fmeta = intro.v1.introduction.file_metadata.add()
            fmeta.name = os.path.basename(args.file)
            fmeta.mime_type = mimetypes.guess_type(args.file)[0] or "application/octet-stream"
            major = fmeta.mime_type.split("/")[0]
            fmeta.type = {"image": W.FileMetadata.IMAGE, "video": W.FileMetadata.VIDEO,
                          "audio": W.FileMetadata.AUDIO}.get(major, W.FileMetadata.UNKNOWN)
            fmeta.payload_id = payload_id
            fmeta.size = size
            fmeta.id = random_int64()
            result.update(payload_id=payload_id, kind="FILE", name=fmeta.name, size=size)
        else:
            text = args.url if args.url is not None else args.text
            body = text.encode("utf-8")
            title = args.title
            if title is None:
                title = (urlsplit(text).hostname or "URL") if args.kind == "URL" else text[:64]
            meta = intro.v1.introduction.text_metadata.add()
            meta.id = random_int64()
            meta.payload_id = payload_id
            meta.type = W.TextMetadata.Type.Value(args.kind)
            meta.size = len(body)
            meta.text_title = title
            result.update(payload_id=payload_id, kind=args.kind, title=title, size=len(body))
        peer.send_sharing(intro, "INTRODUCTION")
        await writer.drain()

        # 5. The answer (OUT:324-348).
        f = await expect(W.V1Frame.RESPONSE, "Response")
        status = f.v1.connection_response.status
        result["status"] = W.ConnectionResponseFrame.Status.Name(status)
        if status == W.ConnectionResponseFrame.ACCEPT:
            result["outcome"] = "accepted"
            if args.file is not None:
                await peer.send_file_payload(args.file, result["size"], payload_id)
            else:
                peer.send_bytes_payload(body, payload_id, "TEXT")  # OUT:350-354 sendURL
        else:
            result["outcome"] = "rejected"
        ka_task.cancel()
        # OUT:353 / :337 sendDisconnectionAndDisconnect (NC:412-424): DisconnectionFrame, then our FIN.
        disc = O.OfflineFrame()
        disc.version = O.OfflineFrame.V1
        disc.v1.type = O.V1Frame.DISCONNECTION
        disc.v1.disconnection.SetInParent()
        try:
            peer.seal_offline(disc, "DISCONNECTION")
            await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()
        except OSError as e:  # ConnectionResetError, BrokenPipeError, or ENOTCONN from shutdown()
            peer.warnings.append(f"the peer had closed before our DisconnectionFrame ({type(e).__name__}: {e})")
        # Whatever the peer still sends is checked (sequence numbers go on) until it closes.
        loop = asyncio.get_running_loop()
        until = loop.time() + args.linger
        while True:
            try:
                kind, value = await asyncio.wait_for(peer.events.get(), max(0.0, until - loop.time()))
            except asyncio.TimeoutError:
                peer.warnings.append(f"the peer kept the connection open {args.linger} s after our "
                                     f"DisconnectionFrame")
                break
            if kind == "error":
                if peer.closed_by_peer or "Connection reset" in str(value):
                    break
                raise ProtocolError(f"after the transfer: {value}")
            if kind == "eof":
                break
            if kind == "sharing":
                name = W.V1Frame.FrameType.Name(value.v1.type)
                peer.peer_frames.append(name)
                peer.warnings.append(f"a {name} frame after the answer")
    finally:
        ka_task.cancel()
        reader_task.cancel()
        writer.close()
    result["peer_frames"] = peer.peer_frames
    result["warnings"] = peer.warnings
    result["closed_by_peer"] = peer.closed_by_peer
    return result


def main() -> None:
    args = parse_args()
    import_pyquickshare(PROG)
    try:
        result = asyncio.run(asyncio.wait_for(exchange(args), args.timeout))
    except asyncio.TimeoutError:
        fail(PROG, f"no answer within {args.timeout} s")
    except ProtocolError as e:
        fail(PROG, f"protocol error: {e}")
    except (ConnectionError, asyncio.IncompleteReadError, OSError) as e:
        fail(PROG, f"connection: {type(e).__name__}: {e}")
    emit(result)
    if args.expect and result.get("outcome") != args.expect:
        note(f"{PROG}: error: outcome {result.get('outcome')}, expected {args.expect}")
        sys.exit(3)


if __name__ == "__main__":
    main()
