#!/usr/bin/env python3
"""A LocalSend 1.18 sender, as the app's Rust core sends files (localsend/localsend at the 1.18.2
head, af0416be), written for the tests from that source, each behaviour cited:

- It speaks HTTPS with a client certificate of its own, an RSA key with a self-signed
  certificate, and pins the receiver's (`packages/core/src/http/client/mod.rs`,
  `create_reqwest_client`: `with_client_auth_cert`, `PinnedServerCertVerifier`), over HTTP/1.1
  alone (the same function: `alpn_protocols = [http/1.1]`).
- It describes itself in `prepare-upload` as `RegisterDtoV2` says, protocol version 2.2
  (`packages/core/src/http/dto_v2.rs`, `PrepareUploadRequestDtoV2`; `discovery/store.rs`), its
  fingerprint the SHA-256 of its certificate in upper case, each file as `FileDto`
  (`packages/core/src/model/transfer.rs`: id, fileName, size, fileType, and no preview: the app
  sets one only on a message it wrote itself, `app/lib/provider/network/send_provider.dart`).
- It uploads each file as a stream of no length (`packages/core/src/http/client/mod.rs`,
  `upload_body`: `reqwest::Body::wrap_stream`; `client/v2.rs`, `upload`: `post(url).body(body)`),
  which HTTP/1.1 carries as `Transfer-Encoding: chunked`, each chunk one read of the file of at
  most 512 KiB (`model/transfer.rs`: `READ_BUFFER_SIZE`, `read_file_into_sender`), the size in
  upper-case hex as hyper writes it, then `0` and an empty trailer section.
- It offers each file with its SHA-256, computed before the offer
  (`app/lib/provider/network/send_provider.dart`: `createChecksums`, on by default,
  `calculateFileHash`), so that the receiver checks what lands.
- It takes `200` to an upload as done; `422` (the receiver's checksum mismatch) makes it upload
  the file again with the same token, three uploads in all
  (`packages/localsend_isolates/lib/src/isolate/child/upload_isolate.dart`: `_maxUploadAttempts`,
  "if (e.status != 422 || attempt >= _maxUploadAttempts)"); anything else is a failure.
- With `--corrupt N`, the first N uploads of the first file change its first byte on the way (a
  file that changed while it was read), so that the receiver's check fails.
- With `--give-up SECONDS`, its person cancels while the receiver's person has not answered the
  offer: the app then has no session id to name, so it only cancels its running requests
  (`app/lib/provider/network/send_provider.dart`, `cancelSession`: `_cancelRunningRequests`,
  then `closeSession` when `remoteSessionId` is null), which drops the `prepare-upload`
  connection. With `--cancel SECONDS` it posts `/api/localsend/v2/cancel` without a session
  instead, from the address that waits, which 1.18's own server takes as the waiting sender giving
  up (`packages/core/src/http/server/v2.rs`, `cancel`: "a cancel from the pending sender's address
  is accepted without one"), then reads the offer's answer.

Usage: localsend_sender.py [--give-up SECONDS | --cancel SECONDS | --corrupt N] HOST PORT FINGERPRINT ALIAS FILE...
prints one JSON object: the statuses. FINGERPRINT is the receiver's, as it announced it: the
connection is refused unless it shows it.
"""
import hashlib
import http.client
import json
import mimetypes
import os
import ssl
import sys
import tempfile
import time

from localsend_identity import make_identity

READ_BUFFER_SIZE = 512 * 1024


def connection(host, port, key_path, cert_path, pinned):
    """A connection whose server showed the certificate the receiver announced (`pinned`, its
    SHA-256 in upper case), as the core's `PinnedServerCertVerifier` checks it in the handshake."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # no CA: the fingerprint below is the check
    context.load_cert_chain(cert_path, key_path)
    context.set_alpn_protocols(["http/1.1"])
    made = http.client.HTTPSConnection(host, port, context=context, timeout=60)
    made.connect()
    shown = hashlib.sha256(made.sock.getpeercert(binary_form=True)).hexdigest().upper()
    if shown != pinned.upper():
        raise SystemExit(f"the receiver showed certificate {shown}, not the pinned {pinned}")
    return made


def file_chunks(path, corrupt=False):
    with open(path, "rb") as source:
        while True:
            chunk = source.read(READ_BUFFER_SIZE)
            if not chunk:
                return
            if corrupt:
                chunk, corrupt = bytes([chunk[0] ^ 0xFF]) + chunk[1:], False
            yield chunk


def sha256(path):
    digest = hashlib.sha256()
    for chunk in file_chunks(path):
        digest.update(chunk)
    return digest.hexdigest()


def main():
    arguments = sys.argv[1:]
    give_up = cancel = None
    corrupt = 0
    if arguments[0] in ("--give-up", "--cancel", "--corrupt"):
        flag, value, *arguments = arguments
        if flag == "--corrupt":
            corrupt = int(value)
        else:
            give_up, cancel = (float(value), None) if flag == "--give-up" else (None, float(value))
    host, port, pinned, alias, *paths = arguments
    port = int(port)
    with tempfile.TemporaryDirectory() as directory:
        key_path, cert_path, fingerprint = make_identity(directory)
        info = {"alias": alias, "version": "2.2", "deviceModel": "Pixel 8", "deviceType": "mobile",
                "fingerprint": fingerprint, "port": 53317, "protocol": "https", "download": False}
        # The file's MIME type, as the app names it (`FileDto.file_type`).
        files = {str(index): {"id": str(index), "fileName": os.path.basename(path), "size": os.path.getsize(path),
                              "fileType": mimetypes.guess_type(path)[0] or "application/octet-stream",
                              "sha256": sha256(path)}
                 for index, path in enumerate(paths)}
        prepare = connection(host, port, key_path, cert_path, pinned)
        prepare.request("POST", "/api/localsend/v2/prepare-upload", body=json.dumps({"info": info, "files": files}),
                        headers={"Content-Type": "application/json"})
        if give_up is not None:
            time.sleep(give_up)
            prepare.close()
            print(json.dumps({"prepare": "given up"}))
            return
        if cancel is not None:
            time.sleep(cancel)
            cancelling = connection(host, port, key_path, cert_path, pinned)
            cancelling.request("POST", "/api/localsend/v2/cancel")
            cancelled = cancelling.getresponse()
            cancelled.read()
            prepare.sock.settimeout(10)
            answer = prepare.getresponse()
            print(json.dumps({"cancel": cancelled.status, "prepare": answer.status}))
            return
        answer = prepare.getresponse()
        body = answer.read()
        result = {"prepare": answer.status, "uploads": []}
        if answer.status == 200:
            session = json.loads(body)
            for index, path in enumerate(paths):
                target = (f"/api/localsend/v2/upload?sessionId={session['sessionId']}&fileId={index}"
                          f"&token={session['files'][str(index)]}")
                statuses = []
                for attempt in range(1, 4):
                    upload = connection(host, port, key_path, cert_path, pinned)
                    altered = index == 0 and attempt <= corrupt
                    # http.client writes each chunk as hyper does: its size in upper-case hex, the
                    # bytes, CRLF; then `0` and an empty trailer section.
                    upload.request("POST", target, body=file_chunks(path, altered), encode_chunked=True,
                                   headers={"Transfer-Encoding": "chunked"})
                    uploaded = upload.getresponse()
                    text = uploaded.read().decode(errors="replace")
                    statuses.append(uploaded.status)
                    if uploaded.status != 422:
                        break
                result["uploads"].append({"status": uploaded.status, "text": text, "attempts": statuses})
        print(json.dumps(result))


main()
