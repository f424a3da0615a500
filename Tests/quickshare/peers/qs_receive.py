#!/usr/bin/env python3
"""A Quick Share receiver for tests: PyPI's pyquickshare 0.1.0.post1 (its `receive()`), advertising
itself over its own python-zeroconf on IP, taking N transfers and printing one JSON line per result.

  qs_receive.py --ip IP --endpoint ABCD --name NAME --dir DIR --count N --timeout S
                [--port P] [--reject | --reject-silently] [--lenient] [--trace] [--verbose]

Standard output, one JSON object a line (keys sorted):
  {"event": "ready", "ip", "port", "endpoint_id", "name", "instance"}   listening and registered
  {"event": "request", "pin", "sender": {...}, "offered": [...]}       an Introduction arrived
  {"event": "result", "kind": "text"|"url"|"address"|"phone_number"|"file"|"wifi", ...}
        text kinds: "text", "title", "size" (UTF-8 bytes); files: "path", "name", "size" (on disk),
        "declared_size", "sha256"
  {"event": "rejected", "pin", "offered", "frame_sent": true|false}
  {"event": "protocol_error", ...}   something a sender did wrong (sequence numbers, names...)
  {"event": "error", ...}            a connection pyquickshare gave up on, or this program's failure
  {"event": "done", "transfers": N}  then exit 0
Exit status: 0 after N transfers; 1 at the timeout (or on an error); 2 on bad arguments or a missing
pyquickshare; 4 after N transfers when a protocol error was seen (0 with --lenient).

--reject: decline every transfer with a ConnectionResponse REJECT frame, which pyquickshare itself never
sends (see below); --reject-silently: decline as pyquickshare does, by closing the connection without
any answer (files only: pyquickshare accepts texts before asking).

Files land in DIR/downloads/ (pyquickshare's own layout; see below). Run it under the Python that has
pyquickshare (see qs_lib.py). The pyquickshare defects worked around here, each at its workaround:
  D1 get_interfaces() skips virtual interfaces (veth): QUICKSHARE_IP.
  D2 the advertised name is fixed to "pyquickshare": NAME is patched.
  D3 files go to ./downloads/, which it never creates: chdir to DIR, mkdir downloads.
  D4 rejecting sends no frame; texts and Wi-Fi are accepted before the person is asked.
  D5 it neither checks nor exposes sequence numbers: checked here.
  D6 no ready signal and no port chosen by the caller: the server and the mDNS runner are wrapped.
  D7 mDNS goodbyes are never sent on exit (its atexit cancel runs after the loop is gone).
  D8 errors in a connection vanish into asyncio's "exception never retrieved" log: reported.
"""
from __future__ import annotations

import argparse
import asyncio
import contextvars
import hashlib
import itertools
import logging
import os
import pathlib
import sys
from typing import Any

sys.dont_write_bytecode = True  # no __pycache__ beside the peers
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qs_lib import (  # noqa: E402
    decode_endpoint_info,
    emit,
    fail,
    import_pyquickshare,
    note,
    url64,
)

PROG = "qs_receive.py"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--ip", required=True, help="IPv4 address to listen on and to advertise (QUICKSHARE_IP)")
    p.add_argument("--endpoint", required=True, help="4-character ASCII endpoint ID, e.g. ABCD")
    p.add_argument("--name", required=True, help="device name advertised in the TXT record `n`")
    p.add_argument("--dir", required=True, help="working folder; files land in DIR/downloads/")
    p.add_argument("--count", type=int, required=True, help="transfers to take before exiting 0")
    p.add_argument("--timeout", type=float, required=True, help="seconds before giving up (exit 1)")
    p.add_argument("--port", type=int, default=0, help="TCP port (default: pyquickshare's own choice)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--reject", action="store_true", help="decline each transfer with a REJECT frame")
    g.add_argument("--reject-silently", action="store_true",
                   help="decline files as pyquickshare does: close without answering")
    p.add_argument("--reject-wait", type=float, default=1.0,
                   help="seconds between a file's REJECT frame and the close (1; see the code)")
    p.add_argument("--lenient", action="store_true", help="protocol errors do not change the exit status")
    p.add_argument("--trace", action="store_true", help="every frame received, as JSON lines on stderr")
    p.add_argument("--verbose", action="store_true", help="pyquickshare's debug log on stderr")
    a = p.parse_args()
    if len(a.endpoint) != 4 or not a.endpoint.isascii() or not a.endpoint.isprintable():
        p.error("--endpoint must be 4 printable ASCII characters")
    if a.count < 1 or a.timeout <= 0:
        p.error("--count must be >= 1 and --timeout > 0")
    if not 0 <= a.port <= 65535:
        p.error("--port must be 0..65535")
    return a


def main() -> None:
    args = parse_args()
    folder = pathlib.Path(args.dir).resolve()
    # D3: PQS/receive.py:197-209 writes f"downloads/{payload_header.file_name}" relative to the working
    # directory and never creates downloads/. So the work happens in DIR, with DIR/downloads made here.
    (folder / "downloads").mkdir(parents=True, exist_ok=True)
    os.chdir(folder)
    # D1: PQS/mdns/receive.py:23-34 get_interfaces() keeps only interfaces whose sysfs path is not
    # under /devices/virtual/net/ (every veth, bridge and lo), so in a namespace it finds none, listens
    # on nothing useful and advertises no address. get_interface_info() (PQS/mdns/receive.py:107-124)
    # takes QUICKSHARE_IP instead when set, which also skips its firewalld D-Bus calls (:130-141).
    # The endpoint ID is passed to receive() for the same reason: otherwise it is derived from the MAC
    # of sorted(get_interfaces())[0] (PQS/receive.py:360-362), an IndexError on an empty list.
    os.environ["QUICKSHARE_IP"] = args.ip
    if args.verbose:
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    import_pyquickshare(PROG)
    try:
        code = asyncio.run(run(args, folder))
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)


async def run(args: argparse.Namespace, folder: pathlib.Path) -> int:  # noqa: C901, PLR0915
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from zeroconf import IPVersion
    from zeroconf.asyncio import AsyncZeroconf

    import importlib

    from pyquickshare import common as C
    # The package's __init__ rebinds the name `receive` to the function (PQS/__init__.py:5), so the
    # module is taken from sys.modules.
    R = importlib.import_module("pyquickshare.receive")
    MR = importlib.import_module("pyquickshare.mdns.receive")
    from pyquickshare.protos import (
        device_to_device_messages_pb2 as D2D,
        offline_wire_formats_pb2 as O,
        securemessage_pb2 as SM,
        wire_format_pb2 as W,
    )
    from pyquickshare.results import FileResult, TextResult, WifiResult

    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.timeout
    server_ready = asyncio.Event()
    mdns_ready = asyncio.Event()
    chosen: dict[str, Any] = {}
    protocol_errors: list[dict[str, Any]] = []
    conn_var: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("qs_conn", default=None)
    counter = itertools.count(1)

    def remaining() -> float:
        return max(0.0, deadline - loop.time())

    def protocol_error(conn: dict[str, Any] | None, what: str, **extra: Any) -> None:
        ev = {"event": "protocol_error", "error": what, "connection": conn and conn["id"], **extra}
        protocol_errors.append(ev)
        emit(ev)

    def trace(**kv: Any) -> None:
        if args.trace:
            import json
            sys.stderr.write(json.dumps({"trace": "in", **kv}, sort_keys=True, default=str) + "\n")
            sys.stderr.flush()

    # D2: PQS/receive.py:44,365 advertises the module constant NAME ("pyquickshare"), read at call time.
    R.NAME = args.name

    # D6: the port is picked inside get_interface_info() (PQS/mdns/receive.py:126-128, a UDP port that
    # happened to be free, then used for TCP). Wrapped to learn it, or to impose --port.
    orig_get_interface_info = R.get_interface_info

    async def get_interface_info() -> Any:
        info = await orig_get_interface_info()
        if args.port:
            info = info._replace(port=args.port)
        chosen["info"] = info
        return info

    R.get_interface_info = get_interface_info

    # D6/D8: PQS/receive.py:325-334 _socket_server, the same server with a ready signal, and each
    # connection run through handle_client() below, which reports what pyquickshare would lose.
    orig_handle_client = R._handle_client

    async def socket_server(requests: asyncio.Queue[Any], *, interface_info: Any) -> None:
        server = await asyncio.start_server(
            lambda reader, writer: handle_client(requests, reader, writer),
            interface_info.ips, interface_info.port)
        server_ready.set()
        async with server:
            await server.serve_forever()

    R._socket_server = socket_server

    async def handle_client(requests: asyncio.Queue[Any], reader: Any, writer: Any) -> None:
        conn: dict[str, Any] = {"id": next(counter), "peer": writer.get_extra_info("peername"),
                                "plain_reads": 0, "meta": {}, "received": [], "send": None,
                                "request": None, "next_seq": 1, "sender": None}
        conn_var.set(conn)
        try:
            await orig_handle_client(requests, reader, writer)
        except Exception as e:  # noqa: BLE001 - D8: reported instead of lost
            emit({"event": "error", "stage": "connection", "connection": conn["id"],
                  "peer": list(conn["peer"] or ()), "error": f"{type(e).__name__}: {e}"})
            req = conn["request"]
            if req is not None and not req.done.done():
                req.done.set_exception(RuntimeError(f"connection failed: {type(e).__name__}: {e}"))
            writer.close()

    # The two plain frames pyquickshare reads itself (PQS/receive.py:121 the ConnectionRequest, :145 the
    # sender's ConnectionResponse; the UKEY2 messages are read by ukey2.py's own `read`).
    orig_read = R.read

    async def read_plain(reader: Any) -> bytes:
        data = await orig_read(reader)
        conn = conn_var.get()
        if conn is not None:
            conn["plain_reads"] += 1
            frame = O.OfflineFrame()
            try:
                frame.ParseFromString(data)
            except Exception as e:  # noqa: BLE001
                protocol_error(conn, f"plain frame {conn['plain_reads']} is not an OfflineFrame: {e}")
                raise
            trace(connection=conn["id"], plain=O.V1Frame.FrameType.Name(frame.v1.type))
            if conn["plain_reads"] == 1 and frame.v1.type == O.V1Frame.CONNECTION_REQUEST:
                cr = frame.v1.connection_request
                info = decode_endpoint_info(bytes(cr.endpoint_info))
                conn["sender"] = {"endpoint_id": cr.endpoint_id, "endpoint_name": cr.endpoint_name,
                                  "info": info, "mediums": [O.ConnectionRequestFrame.Medium.Name(m)
                                                            for m in cr.mediums]}
                # PQS/receive.py:134 takes the name as endpoint_info[18:].decode("utf-8"), ignoring the
                # length byte: trailing TLVs end up in its name, or fail to decode and end the connection.
                if len(cr.endpoint_info) > 18 + (cr.endpoint_info[17] if len(cr.endpoint_info) > 17 else 0):
                    note(f"{PROG}: the sender's endpoint info has bytes after its name; pyquickshare "
                         f"reads them as part of the name (PQS/receive.py:134)")
            elif conn["plain_reads"] == 2:
                if frame.v1.type != O.V1Frame.CONNECTION_RESPONSE:
                    protocol_error(conn, "second plain frame after UKEY2 is not a ConnectionResponse",
                                   got=O.V1Frame.FrameType.Name(frame.v1.type))
                else:
                    resp = frame.v1.connection_response
                    conn["sender_os"] = O.OsInfo.OsType.Name(resp.os_info.type)
        return data

    R.read = read_plain

    # D5: PQS/common.py:174-201 decrypt() verifies the HMAC but drops DeviceToDeviceMessage's
    # sequence_number, and nothing checks it. Wrapped: the same decryption once more for the number.
    orig_decrypt = C.decrypt

    def decrypt(frame: Any, keychain: Any) -> Any:
        offline = orig_decrypt(frame, keychain)  # raises on a bad HMAC
        conn = conn_var.get()
        hb = SM.HeaderAndBody()
        hb.ParseFromString(frame.header_and_body)
        dec = Cipher(algorithms.AES(keychain.decrypt_key), modes.CBC(hb.header.iv)).decryptor()
        unpad = padding.PKCS7(128).unpadder()
        d2d = D2D.DeviceToDeviceMessage()
        d2d.ParseFromString(unpad.update(dec.update(hb.body) + dec.finalize()) + unpad.finalize())
        kv: dict[str, Any] = {"seq": d2d.sequence_number, "offline": O.V1Frame.FrameType.Name(offline.v1.type)}
        if offline.v1.type == O.V1Frame.PAYLOAD_TRANSFER:
            pt = offline.v1.payload_transfer
            kv.update(payload_type=O.PayloadTransferFrame.PayloadHeader.PayloadType.Name(pt.payload_header.type),
                      payload_id=pt.payload_header.id, flags=pt.payload_chunk.flags,
                      offset=pt.payload_chunk.offset, body=len(pt.payload_chunk.body),
                      total_size=pt.payload_header.total_size, file_name=pt.payload_header.file_name)
        if conn is not None:
            kv["connection"] = conn["id"]
            if d2d.sequence_number != conn["next_seq"]:
                protocol_error(conn, "wrong sequence number", expected=conn["next_seq"], got=d2d.sequence_number)
            conn["next_seq"] = d2d.sequence_number + 1
        trace(**kv)
        return offline

    C.decrypt = decrypt  # looked up at call time by C.iter_payload_messages

    # What the Introduction offered, and the order its payloads complete in, so that each result of
    # PQS/results.py (which carry neither TextMetadata.type nor the payload id) gets its kind back.
    orig_iter = R.iter_payload_messages

    async def iter_payload_messages(reader: Any, keychain: Any) -> Any:
        conn = conn_var.get()
        async for header, data in orig_iter(reader, keychain):
            if conn is not None:
                if header.id in conn["meta"]:
                    conn["received"].append(header.id)
                else:
                    frame = W.Frame()
                    try:
                        frame.ParseFromString(data)
                        ftype = W.V1Frame.FrameType.Name(frame.v1.type)
                    except Exception:  # noqa: BLE001
                        ftype = "unparseable"
                    trace(connection=conn["id"], sharing=ftype, payload_id=header.id, size=len(data))
                    if frame.v1.type == W.V1Frame.INTRODUCTION:
                        intro = frame.v1.introduction
                        for m in intro.text_metadata:
                            conn["meta"][m.payload_id] = {"kind": W.TextMetadata.Type.Name(m.type).lower(),
                                                          "title": m.text_title, "size": m.size, "id": m.id}
                        for m in intro.file_metadata:
                            conn["meta"][m.payload_id] = {"kind": "file", "name": m.name, "size": m.size,
                                                          "mime_type": m.mime_type, "id": m.id}
                            if "/" in m.name or "\\" in m.name or m.name in ("", ".", ".."):
                                protocol_error(conn, "file name is not a plain name", name=m.name)
                        for m in intro.wifi_credentials_metadata:
                            conn["meta"][m.payload_id] = {"kind": "wifi", "ssid": m.ssid}
                        if intro.file_metadata and intro.text_metadata:
                            # PQS/receive.py:269-300 is an if/elif: a mixed Introduction gets files only.
                            note(f"{PROG}: mixed files and texts: pyquickshare keeps the files only")
            yield header, data

    R.iter_payload_messages = iter_payload_messages

    # The send function of each connection (PQS/common.py:234-268), for --reject's frame.
    orig_make_send = R.make_send

    def make_send(writer: Any, keychain: Any, sequence_number: Any) -> Any:
        send = orig_make_send(writer, keychain, sequence_number)
        conn = conn_var.get()
        if conn is not None:
            conn["send"] = send
            conn["pin"] = R.to_pin(keychain.auth_string)
        return send

    R.make_send = make_send

    class ShareRequest(R.ShareRequest):  # PQS/receive.py:76-93, with its connection attached
        def __init__(self, header: Any, pin: str) -> None:
            super().__init__(header, pin)
            self.conn = conn_var.get()
            if self.conn is not None:
                self.conn["request"] = self

    R.ShareRequest = ShareRequest

    def response_frame(status: int) -> bytes:  # as PQS/receive.py:102-108 builds ACCEPT
        f = W.Frame()
        f.version = W.Frame.V1
        f.v1.type = W.V1Frame.RESPONSE
        f.v1.connection_response.status = status
        return f.SerializeToString()

    if args.reject:
        # D4: PQS/receive.py:226-236,291-300 answers texts (and Wi-Fi, :249-267) with _generate_accept()
        # before the person decides; with --reject that answer is a REJECT. Files are answered by
        # reject_with_frame() below, since PQS/receive.py:287-289 sends nothing ("TODO: send a rejection").
        R._generate_accept = lambda: response_frame(W.ConnectionResponseFrame.REJECT)

    # D6/D7: PQS/mdns/receive.py:37-55 IPV4Runner, the same registration with a ready signal; its
    # unregister runs when _start_mdns_service's task is cancelled (PQS/receive.py:378-383), which
    # stop() below does inside the loop (PQS/common.py:64-67's atexit cancel comes too late).
    class Runner(MR.IPV4Runner):
        async def register_services(self, infos: list[Any]) -> None:
            self.aiozc = AsyncZeroconf(ip_version=IPVersion.V4Only)
            background = await asyncio.gather(*[self.aiozc.async_register_service(i) for i in infos])
            await asyncio.gather(*background)
            chosen["instance"] = [i.name for i in infos]
            mdns_ready.set()
            await asyncio.Event().wait()

    R.IPV4Runner = Runner

    requests: asyncio.Queue[Any] = asyncio.Queue()

    async def pump() -> None:
        async for req in R.receive(endpoint_id=args.endpoint.encode("ascii")):
            await requests.put(req)

    pump_task = asyncio.create_task(pump())

    async def stop() -> None:
        pump_task.cancel()
        for t in list(C.tasks):
            t.cancel()
        pending = [t for t in [pump_task, *C.tasks] if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=3)

    async def wait_event(ev: asyncio.Event) -> None:
        waiter = asyncio.create_task(ev.wait())
        done, _ = await asyncio.wait({waiter, pump_task}, timeout=remaining(),
                                     return_when=asyncio.FIRST_COMPLETED)
        if waiter not in done:
            waiter.cancel()
            if pump_task.done() and pump_task.exception():
                raise RuntimeError(f"pyquickshare's receive() failed: {pump_task.exception()!r}")
            raise asyncio.TimeoutError

    try:
        await wait_event(server_ready)
        await wait_event(mdns_ready)
    except asyncio.TimeoutError:
        await stop()
        fail(PROG, f"not listening and registered within {args.timeout} s")
    except RuntimeError as e:
        await stop()
        fail(PROG, str(e))
    info = chosen["info"]
    emit({"event": "ready", "ip": args.ip, "port": info.port, "endpoint_id": args.endpoint,
          "name": args.name, "instance": chosen.get("instance"), "dir": str(folder),
          "expected_instance": url64(b"\x23" + args.endpoint.encode() + b"\xfc\x9f\x5e\x00\x00")})

    transfers = 0
    code = 0
    try:
        while transfers < args.count:
            try:
                req = await asyncio.wait_for(requests.get(), remaining())
            except asyncio.TimeoutError:
                emit({"event": "timeout", "transfers": transfers, "expected": args.count})
                note(f"{PROG}: error: {transfers} of {args.count} transfers within {args.timeout} s")
                code = 1
                break
            conn = req.conn or {}
            offered = list(conn.get("meta", {}).values())
            emit({"event": "request", "pin": req.pin, "connection": conn.get("id"),
                  "sender": conn.get("sender"), "sender_os": conn.get("sender_os"), "offered": offered})
            try:
                if args.reject or args.reject_silently:
                    frame_sent = False
                    if args.reject and any(m["kind"] == "file" for m in offered) and conn.get("send"):
                        await conn["send"](response_frame(W.ConnectionResponseFrame.REJECT))
                        frame_sent = True
                        # After reject() pyquickshare closes at once (PQS/receive.py:306-318) with the
                        # sender's frames still unread, so the kernel resets the connection, and a
                        # reset can make the sender's kernel drop the REJECT before it is read
                        # (seen: pyquickshare's sender got EPIPE instead of the answer). The sender
                        # is given time to read it and close first.
                        await asyncio.sleep(min(args.reject_wait, remaining()))
                    elif args.reject:
                        frame_sent = True  # through the patched _generate_accept above
                    await asyncio.wait_for(req.reject(), remaining())
                    emit({"event": "rejected", "pin": req.pin, "offered": offered, "frame_sent": frame_sent})
                else:
                    results = await asyncio.wait_for(req.accept(), remaining())
                    report(results, conn, folder, FileResult, TextResult, WifiResult, protocol_error)
            except asyncio.TimeoutError:
                emit({"event": "timeout", "transfers": transfers, "expected": args.count,
                      "waiting_for": "the end of a transfer"})
                note(f"{PROG}: error: a transfer did not end within {args.timeout} s")
                code = 1
                break
            except RuntimeError as e:
                emit({"event": "error", "stage": "transfer", "error": str(e)})
            transfers += 1
    finally:
        await stop()
    if code == 0:
        emit({"event": "done", "transfers": transfers, "protocol_errors": len(protocol_errors)})
        if protocol_errors and not args.lenient:
            note(f"{PROG}: error: {len(protocol_errors)} protocol error(s), see the protocol_error lines")
            code = 4
    return code


def report(results: list[Any], conn: dict[str, Any], folder: pathlib.Path, FileResult: Any, TextResult: Any,
           WifiResult: Any, protocol_error: Any) -> None:
    received = conn.get("received", [])
    meta = conn.get("meta", {})
    downloads = (folder / "downloads").resolve()
    for i, result in enumerate(results):
        m = meta.get(received[i], {}) if i < len(received) else {}
        if isinstance(result, FileResult):
            path = (folder / result.path).resolve()
            # PQS/receive.py:201 joins the sender's payload_header.file_name unchecked: "../x" escapes.
            inside = downloads in path.parents
            if not inside:
                protocol_error(conn, "file written outside DIR/downloads", path=str(path))
            data = path.read_bytes() if path.is_file() else b""
            # PQS/common.py:289-337 assembles chunks by seeking to each offset and never compares the
            # result with total_size: a short or holed file is taken as complete. Checked here.
            if len(data) != result.size or ("size" in m and len(data) != m["size"]):
                protocol_error(conn, "file size differs from the payload header or the FileMetadata",
                               name=result.name, on_disk=len(data), header=result.size,
                               metadata=m.get("size"))
            emit({"event": "result", "kind": "file", "name": result.name, "path": str(path),
                  "size": len(data), "declared_size": result.size, "metadata": m,
                  "sha256": hashlib.sha256(data).hexdigest()})
        elif isinstance(result, TextResult):
            emit({"event": "result", "kind": m.get("kind", "text"), "text": result.text,
                  "title": result.title, "size": len(result.text.encode("utf-8")), "metadata": m})
        elif isinstance(result, WifiResult):
            emit({"event": "result", "kind": "wifi", "ssid": result.ssid, "password": result.password,
                  "security_type": int(result.security_type)})
    if not results:
        emit({"event": "result", "kind": "none", "note": "the connection ended before any payload"})


if __name__ == "__main__":
    main()
