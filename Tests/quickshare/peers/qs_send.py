#!/usr/bin/env python3
"""A Quick Share file sender for tests: PyPI's pyquickshare 0.1.0.post1 (its `_handle_target`), dialling
HOST:PORT directly, one connection per FILE, printing one JSON line per file.

  qs_send.py --host H --port P [--timeout S] [--expect accepted|rejected|closed] [--trace] FILE...

Standard output, one JSON object a line (keys sorted):
  {"outcome": "accepted"|"rejected"|"closed", "file", "size", "sha256", "pin", "status",
   "frames": [...], "peer_closed": bool, "reset": null or the error a reset raised}
     accepted  the receiver answered ACCEPT and the whole file was written to the socket
     rejected  it answered with any other ConnectionResponse status ("status" names it)
     closed    it ended the connection without answering (what pyquickshare's own receiver does)
     "pin" is the 4-digit code pyquickshare computes from the UKEY2 auth string (PQS/receive.py:60-73);
     "frames" lists the sharing frames received after the first, in order.
  {"event": "error", "error", "file"}   then exit 1
Exit status: 0 when every file got an outcome (and the --expect one, when given); 1 on an error or a
timeout; 2 on bad arguments, a missing pyquickshare or a file of 512 KiB or more; 3 when an outcome is
not the --expect one.

How it works around pyquickshare (each at its workaround below):
  D1 send_to() needs mDNS discovery (which also starts a BLE advertisement through BlueZ) and then
     refuses every standard receiver for its visibility-bit defect: _handle_target() is called on a
     connection of our own, as its tests/test_client_server.py does.
  D2 _handle_target() calls get_interfaces(), which skips virtual interfaces: in a namespace the list
     is empty and sorted(...)[0] raises IndexError. The list is patched.
  D3 files of 512 KiB or more hang or are sent wrong: refused here (--allow-large to try anyway).
  D4 _handle_target() returns nothing, and never ends while the receiver keeps the connection open:
     the outcome is read from the frames, and the whole send bounded by --timeout.
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import os
import sys
from typing import Any

sys.dont_write_bytecode = True  # no __pycache__ beside the peers
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qs_lib import emit, fail, import_pyquickshare, note  # noqa: E402

PROG = "qs_send.py"
CHUNK_SIZE = 512 * 1024  # PQS/send.py:56


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--host", required=True, help="receiver's address")
    p.add_argument("--port", type=int, required=True, help="receiver's TCP port")
    p.add_argument("--timeout", type=float, default=30, help="seconds for each file's connection (30)")
    p.add_argument("--expect", choices=("accepted", "rejected", "closed"),
                   help="exit 3 unless every file has this outcome")
    p.add_argument("--allow-large", action="store_true",
                   help="send files of 512 KiB or more despite pyquickshare's defect (D3)")
    p.add_argument("--trace", action="store_true", help="frames received, as JSON lines on stderr")
    p.add_argument("--verbose", action="store_true", help="pyquickshare's debug log on stderr")
    p.add_argument("files", nargs="+", metavar="FILE")
    a = p.parse_args()
    if not 0 < a.port < 65536 or a.timeout <= 0:
        p.error("--port must be 1..65535 and --timeout > 0")
    for f in a.files:
        if not os.path.isfile(f):
            p.error(f"not a file: {f}")
        # D3: PQS/send.py:162-164 sizes a semaphore int((size // 512 KiB) * 0.9) for files of 512 KiB or
        # more: 0 for sizes in [512 KiB, 1 MiB), so write_task never runs and the send hangs forever.
        # From 1 MiB on, write_task (:166-188) runs chunks concurrently, each doing f.seek() then an
        # awaited f.read() on the one shared aiofile handle, so a chunk can carry another offset's bytes.
        # The final empty chunk is written from an executor thread (:206-209), outside the event loop.
        if os.path.getsize(f) >= CHUNK_SIZE and not a.allow_large:
            p.exit(2, f"{PROG}: error: {f} is {os.path.getsize(f)} bytes; pyquickshare 0.1.0.post1 hangs "
                      f"or corrupts files of {CHUNK_SIZE} bytes or more (use files under 512 KiB, or "
                      f"--allow-large)\n")
    return a


def main() -> None:
    args = parse_args()
    if args.verbose:
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    import_pyquickshare(PROG)
    outcomes = asyncio.run(send_all(args))
    if args.expect and any(o != args.expect for o in outcomes):
        note(f"{PROG}: error: outcomes {outcomes}, expected {args.expect} for all")
        sys.exit(3)


async def send_all(args: argparse.Namespace) -> list[str]:
    install_patches(args)
    outcomes: list[str] = []
    for path in args.files:
        try:
            res = await send_one(args, path)
        except Exception as e:  # noqa: BLE001
            fail(PROG, f"{type(e).__name__}: {e}", 1, file=path)
        emit(res)
        outcomes.append(res["outcome"])
    return outcomes


STATE: dict[str, Any] = {}  # the file being sent


def install_patches(args: argparse.Namespace) -> None:  # noqa: C901
    from pyquickshare import send as S
    from pyquickshare.protos import wire_format_pb2 as W
    from pyquickshare.receive import to_pin

    # D2: PQS/send.py:316-318 computes (and throws away) derive_endpoint_id_from_mac(
    # pick_mac_deterministically(get_interfaces())); PQS/mdns/receive.py:23-34 get_interfaces() skips
    # every interface under /devices/virtual/net/, so in a network namespace (veth, lo) it returns [] and
    # pick_mac_deterministically (PQS/common.py:344-346) raises IndexError. Any interface with a MAC
    # will do, since the result is unused; lo always has one.
    real_get_interfaces = S.get_interfaces
    S.get_interfaces = lambda: real_get_interfaces() or ["lo"]

    # The PIN: PQS/send.py:337 do_client_key_exchange's keychain, whose auth_string gives the code.
    orig_kx = S.do_client_key_exchange

    async def key_exchange(reader: Any, writer: Any) -> Any:
        keychain = await orig_kx(reader, writer)
        if keychain is not None:
            STATE["pin"] = to_pin(keychain.auth_string)
        return keychain

    S.do_client_key_exchange = key_exchange

    # D4: PQS/send.py:389-414 reads the receiver's sharing frames here; RESPONSE ends in _send_file
    # (ACCEPT) or a break (anything else), and nothing is returned. Wrapped to see them.
    orig_iter = S.iter_payload_messages

    async def iter_payload_messages(reader: Any, keychain: Any) -> Any:
        async for header, data in orig_iter(reader, keychain):
            frame = W.Frame()
            try:
                frame.ParseFromString(data)
                name = W.V1Frame.FrameType.Name(frame.v1.type)
            except Exception:  # noqa: BLE001
                name = "unparseable"
            # The peer's PAIRED_KEY_ENCRYPTION data chunk is taken whole by the bare read at
            # PQS/send.py:364-369 (whatever frame comes first); its empty LAST_CHUNK then arrives
            # here alone and parses as an empty frame (UNKNOWN_FRAME_TYPE).
            STATE["frames"].append(name)
            if args.trace:
                sys.stderr.write(json.dumps({"trace": "in", "sharing": name, "payload_id": header.id,
                                             "size": len(data)}) + "\n")
            if frame.v1.type == W.V1Frame.RESPONSE:
                st = frame.v1.connection_response.status
                STATE["status"] = W.ConnectionResponseFrame.Status.Name(st)
                STATE["accepted"] = st == W.ConnectionResponseFrame.ACCEPT
            yield header, data
        STATE["peer_closed"] = True  # iter_payload_messages ends at EOF or a DISCONNECTION frame

    S.iter_payload_messages = iter_payload_messages

    orig_send_file = S._send_file

    async def send_file(**kw: Any) -> None:
        await orig_send_file(**kw)
        STATE["sent"] = True

    S._send_file = send_file


async def send_one(args: argparse.Namespace, path: str) -> dict[str, Any]:
    from pyquickshare import common as C
    from pyquickshare import send as S

    STATE.clear()
    state = STATE
    state.update({"pin": None, "status": None, "accepted": False, "sent": False,
                  "frames": [], "peer_closed": False})

    data = open(path, "rb").read()  # noqa: SIM115 - small by D3
    reader, writer = await asyncio.wait_for(asyncio.open_connection(args.host, args.port), args.timeout)
    error = None
    try:
        # D1: PQS/send.py:252-304 send_to() would need a Device from discover_services(), which starts
        # a BlueZ advertisement (PQS/mdns/send.py:86-114), then _parse_n() (PQS/send.py:230-249) reads
        # visibility from bit 0 where the format has bit 4, so every standard receiver looks hidden and
        # send_to() gives up without a QR code record (:275-279); it also insists on a reverse DNS name
        # for the address (:288-294). _handle_target() is what its tests/test_client_server.py calls.
        await asyncio.wait_for(S._handle_target(path, reader, writer), args.timeout)
    except asyncio.TimeoutError:
        error = (f"no end within {args.timeout} s (pyquickshare waits for the receiver to close the "
                 f"connection or send a DISCONNECTION after the file)")
    except (ConnectionError, asyncio.IncompleteReadError) as e:
        # A receiver that closes with our frames unread makes its kernel send a reset (pyquickshare's
        # own decline does, PQS/receive.py:306-318): that is the peer closing too.
        error = f"{type(e).__name__}: {e}"
        state["peer_closed"] = True
        state["reset"] = error
    finally:
        writer.close()
        for t in list(C.tasks):  # its keep-alive task (PQS/send.py:371), left running on some paths
            t.cancel()
    if state["accepted"]:
        outcome = "accepted"
        if not state["sent"]:
            error = error or "accepted, but the file was not sent whole"
    elif state["status"] is not None:
        outcome = "rejected"
    else:
        outcome = "closed"
    if error and not (state["peer_closed"] and (outcome != "accepted" or state["sent"])):
        raise RuntimeError(f"{error}; outcome so far {outcome}, frames {state['frames']}")
    return {"outcome": outcome, "file": os.path.abspath(path), "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(), "pin": state["pin"], "status": state["status"],
            "frames": state["frames"], "peer_closed": state["peer_closed"], "reset": state.get("reset")}


if __name__ == "__main__":
    main()
