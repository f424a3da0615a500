#!/usr/bin/env python3
"""Browses Quick Share's mDNS service `_FC9F5ED42C8A._tcp.local.` with python-zeroconf and prints each
instance it resolves, decoded.

  qs_browse.py --timeout S [--expect-name NAME] [--interface-ip IP ...]

Standard output, one JSON object a line (keys sorted), one per instance (again when its TXT or address
changes): {"event": "found", "instance", "endpoint_id", "valid_instance", "info": {version, visibility,
visible, device_type, device_type_name, name, tlvs, raw_hex}, "addresses", "port", "server", "txt"}.
Then {"event": "expected_found", ...} when NAME is seen, or {"event": "timeout", ...}.
Exit status: 0 once an instance named NAME was found (without --expect-name: at the timeout, when any
instance was found); 1 at the timeout otherwise; 2 on bad arguments.

Not pyquickshare's browse: its discover_services() (PQS/mdns/send.py:117-126) also starts a BlueZ
advertisement, yields undecoded ServiceInfo, and its decoder _parse_n (PQS/send.py:230-249) reads the
visibility from bit 0 (the format's reserved bit) instead of bit 4 and the name as everything from
byte 18 on (ignoring its length byte). The decoding here follows NearDrop (qs_lib.decode_endpoint_info).
python-zeroconf is the one pyquickshare depends on (0.152 here); its browser and resolver are as
pyquickshare's AsyncRunner uses them (PQS/mdns/send.py:38-83), with 3 s to resolve each instance.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
from typing import Any

sys.dont_write_bytecode = True  # no __pycache__ beside the peers
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qs_lib import SERVICE_TYPE, decode_endpoint_info, decode_instance_name, emit, from_url64, note  # noqa: E402

PROG = "qs_browse.py"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--timeout", type=float, required=True, help="seconds to browse")
    p.add_argument("--expect-name", help="exit 0 as soon as an instance with this device name is found")
    p.add_argument("--interface-ip", action="append", default=[],
                   help="browse on the interface with this IPv4 address only (repeatable; default all)")
    a = p.parse_args()
    if a.timeout <= 0:
        p.error("--timeout must be > 0")
    return a


async def browse(args: argparse.Namespace) -> int:
    from zeroconf import InterfaceChoice, IPVersion, ServiceStateChange
    from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.timeout
    found_expected = asyncio.Event()
    seen: dict[str, Any] = {}
    ever_found: set[str] = set()
    pending: set[asyncio.Task[None]] = set()
    aiozc = AsyncZeroconf(ip_version=IPVersion.V4Only,
                          interfaces=args.interface_ip or InterfaceChoice.All)

    async def resolve(name: str) -> None:
        info = AsyncServiceInfo(SERVICE_TYPE, name)
        if not await info.async_request(aiozc.zeroconf, 3000):
            note(f"{PROG}: {name} did not resolve within 3 s")
            return
        n_raw = info.properties.get(b"n")
        inst = decode_instance_name(name)
        ev: dict[str, Any] = {
            "event": "found", "instance": inst["instance"], "endpoint_id": inst.get("endpoint_id"),
            "valid_instance": inst.get("valid", False), "port": info.port, "server": info.server,
            "addresses": [socket.inet_ntoa(a) for a in info.addresses if len(a) == 4],
            "txt": {k.decode("utf-8", "replace"): (v.decode("utf-8", "replace") if v is not None else None)
                    for k, v in info.properties.items()},
        }
        if n_raw is None:
            ev["info"] = {"error": "no TXT record n"}
        else:
            try:
                ev["info"] = decode_endpoint_info(from_url64(n_raw))
            except Exception as e:  # noqa: BLE001
                ev["info"] = {"error": f"TXT n is not base64url: {e}"}
        key = repr((ev["instance"], ev["txt"], ev["addresses"], ev["port"]))
        if seen.get(name) == key:
            return
        seen[name] = key
        ever_found.add(name)
        emit(ev)
        if args.expect_name is not None and ev["info"].get("name") == args.expect_name:
            emit({"event": "expected_found", "name": args.expect_name, "instance": ev["instance"],
                  "endpoint_id": ev["endpoint_id"]})
            found_expected.set()

    def on_change(zeroconf: Any, service_type: str, name: str, state_change: Any) -> None:
        if state_change is ServiceStateChange.Removed:
            emit({"event": "removed", "instance": name.split(".")[0]})
            seen.pop(name, None)
            return
        t = asyncio.ensure_future(resolve(name))
        pending.add(t)
        t.add_done_callback(pending.discard)

    browser = AsyncServiceBrowser(aiozc.zeroconf, [SERVICE_TYPE], handlers=[on_change])
    try:
        try:
            await asyncio.wait_for(found_expected.wait(), max(0.0, deadline - loop.time()))
        except asyncio.TimeoutError:
            pass
    finally:
        await browser.async_cancel()
        for t in list(pending):
            t.cancel()
        await aiozc.async_close()
    if found_expected.is_set():
        return 0
    emit({"event": "timeout", "found": len(ever_found), "expected_name": args.expect_name})
    if args.expect_name is None:
        return 0 if ever_found else 1
    note(f"{PROG}: error: no instance named {args.expect_name!r} within {args.timeout} s "
         f"({len(ever_found)} other instance(s) found)")
    return 1


def main() -> None:
    args = parse_args()
    try:
        import zeroconf  # noqa: F401
    except ImportError as e:
        sys.stderr.write(f"{PROG}: error: python-zeroconf is missing ({e})\n")
        sys.exit(2)
    sys.exit(asyncio.run(browse(args)))


if __name__ == "__main__":
    main()
