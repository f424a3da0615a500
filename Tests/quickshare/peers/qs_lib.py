"""What the Quick Share test peers in this folder share: JSON output, failure, the mDNS record layouts,
and the import of PyPI's pyquickshare 0.1.0.post1 with a clear message when it is missing.

pyquickshare needs Python ~=3.10 (its Requires-Python); on these machines that is pyenv's 3.10.13:
  /root/.pyenv/versions/3.10.13/bin/python3 -m pip install pyquickshare==0.1.0.post1
Its source is cited below as PQS/<file>:<line> (paths under site-packages/pyquickshare/), NearDrop's
(grishka/NearDrop at 01e4231) as ND/<file>:<line> (paths under NearbyShare/).
"""
from __future__ import annotations

import base64
import json
import sys
from typing import Any, NoReturn

SERVICE_TYPE = "_FC9F5ED42C8A._tcp.local."


def emit(obj: dict[str, Any]) -> None:
    """One machine-readable JSON line on standard output, flushed at once."""
    sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")
    sys.stdout.flush()


def note(msg: str) -> None:
    """A human-readable line on standard error."""
    sys.stderr.write(msg.rstrip("\n") + "\n")
    sys.stderr.flush()


def fail(prog: str, msg: str, code: int = 1, **extra: Any) -> NoReturn:
    """Ends the program non-zero: the reason on standard error, and a JSON line saying so."""
    note(f"{prog}: error: {msg}")
    emit({"event": "error", "error": msg, **extra})
    sys.exit(code)


def import_pyquickshare(prog: str) -> Any:
    try:
        import pyquickshare  # noqa: F401
        from pyquickshare import common, receive, send, ukey2  # noqa: F401
        from pyquickshare.protos import offline_wire_formats_pb2  # noqa: F401
    except Exception as e:  # ImportError, or one of its own imports failing (magic, bless, dbus_next)
        fail(prog, f"cannot import pyquickshare ({e!r}); run this with the Python 3.10 that has "
                   f"pyquickshare 0.1.0.post1 installed, e.g. /root/.pyenv/versions/3.10.13/bin/python3", 2)
    import pyquickshare
    return pyquickshare


def url64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def from_url64(text: str | bytes) -> bytes:
    if isinstance(text, bytes):
        text = text.decode("ascii")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def decode_instance_name(instance: str) -> dict[str, Any]:
    """The mDNS instance name: base64url of 0x23 (PCP), the 4-byte endpoint ID, FC 9F 5E (service ID
    hash), 00 00 (ND/NearbyConnectionManager.swift:242-249 makes it; :326-336 reads it)."""
    label = instance.split(".")[0]
    out: dict[str, Any] = {"instance": label}
    try:
        raw = from_url64(label)
    except Exception as e:
        out.update(valid=False, error=f"not base64url: {e}")
        return out
    out["raw_hex"] = raw.hex()
    out["endpoint_id"] = raw[1:5].decode("ascii", "replace") if len(raw) >= 5 else None
    out["valid"] = len(raw) == 10 and raw[0] == 0x23 and raw[5:8] == b"\xfc\x9f\x5e"
    return out


def decode_endpoint_info(info: bytes) -> dict[str, Any]:
    """The endpoint info (TXT `n` base64url-decoded, or ConnectionRequest.endpoint_info): byte 0 =
    version (3 bits) | visibility (1 bit, 0 = visible, name present) | device type (3 bits) | reserved
    (1 bit); 16 bytes; then, when visible, a length byte and the UTF-8 name; then TLVs (type 1 = QR code
    data). As ND/NearbyConnectionManager.swift:113-147 reads it (visibility = bit 0x10), not as
    PQS/send.py:230-249 (_parse_n) does: that one takes bit 0 (reserved) for "visible" and ignores the
    length byte, which is pyquickshare's visibility defect."""
    out: dict[str, Any] = {"raw_hex": info.hex(), "length": len(info)}
    if len(info) < 17:
        out["error"] = "shorter than 17 bytes"
        return out
    b0 = info[0]
    hidden = bool(b0 & 0x10)
    out.update(version=b0 >> 5, visibility=int(hidden), visible=not hidden,
               device_type=(b0 >> 1) & 7, reserved_bit=b0 & 1)
    out["device_type_name"] = {0: "unknown", 1: "phone", 2: "tablet", 3: "laptop"}.get(out["device_type"], "?")
    offset = 17
    name = None
    if not hidden:
        if len(info) < 18:
            out["error"] = "visible but no name length byte"
            return out
        n = info[17]
        if len(info) < 18 + n:
            out["error"] = f"name length {n} runs past the end"
            return out
        try:
            name = info[18:18 + n].decode("utf-8")
        except UnicodeDecodeError:
            out["error"] = "name is not UTF-8"
        offset = 18 + n
    out["name"] = name
    tlvs = []
    while len(info) - offset >= 2:
        t, ln = info[offset], info[offset + 1]
        offset += 2
        tlvs.append({"type": t, "value_hex": info[offset:offset + ln].hex()})
        offset += ln
    out["tlvs"] = tlvs
    if offset != len(info):
        out["trailing_bytes"] = len(info) - offset
    return out


def encode_endpoint_info(name: str, device_type: int = 1, random16: bytes | None = None) -> bytes:
    """Version 0, visible, DEVICE_TYPE, 16 random bytes, length-prefixed UTF-8 name (as
    ND/NearbyConnectionManager.swift:149-166 serialize() writes it)."""
    import os
    raw = name.encode("utf-8")[:255]
    return bytes([(device_type & 7) << 1]) + (random16 or os.urandom(16)) + bytes([len(raw)]) + raw
