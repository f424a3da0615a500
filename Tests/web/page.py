#!/usr/bin/env python3
"""The inbox page, as a person uses it: two real hexd on loopback, the page opened in a real
headless Chromium through `hexctl open --print`, driven by Playwright.

Checks that a hex sent by the other daemon appears without a reload; that check, save and delete
work from the page and `hexctl inbox` agrees; that a send from the page is acked; that a pairing
request shows its code and Accept pairs both sides; that hostile text stays inert text; and that
requests without the cookie, with a foreign Host or Origin, with an oversized head, and slowloris
connections are refused while the page keeps serving. Writes a screenshot of each theme.

Usage: Tests/web/page.py BIN_DIR SCREENSHOT_DIR
"""
import json
import shutil
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import uuid

from playwright.sync_api import sync_playwright, expect

BIN, SHOTS = sys.argv[1], sys.argv[2]
CHROMIUM = os.environ.get("HEXD_CHROMIUM", "/usr/bin/chromium")
work = tempfile.mkdtemp(prefix="hexd-page-")
daemons = []


def fail(message):
    print("page: FAILED:", message)
    for name, _, _ in daemons:
        print(f"--- {name}'s log (last lines)")
        with open(f"{work}/{name}.log") as log:
            print("".join(log.readlines()[-30:]))
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(name, discovery, extra=(), web="127.0.0.1:0"):
    data = f"{work}/{name}"
    log = open(f"{work}/{name}.log", "a")
    process = subprocess.Popen(
        [f"{BIN}/hexd", "--data-dir", data, "--port", "0", "--discovery-port", str(discovery),
         "--broadcast", "127.255.255.255", "--announce-interval", "0.3", "--name", name,
         "--web", web, "--notify", "off", *extra], stdout=log, stderr=subprocess.STDOUT)
    daemons.append((name, process, data))
    deadline = time.time() + 20
    while not os.path.exists(f"{data}/web.address"):
        check(time.time() < deadline and process.poll() is None, f"{name} serves no page")
        time.sleep(0.05)
    return data


def hexctl(data, *arguments, expect_code=0):
    result = subprocess.run([f"{BIN}/hexctl", "--data-dir", data, *arguments], capture_output=True, text=True,
                            timeout=60)
    if expect_code is not None and result.returncode != expect_code:
        fail(f"hexctl {' '.join(arguments)} exited {result.returncode}: {result.stderr.strip()}")
    return result


def json_lines(data, *arguments):
    return [json.loads(line) for line in hexctl(data, *arguments, "--json").stdout.splitlines() if line.strip()]


def wait_for(condition, message, seconds=15):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    fail(message)


def raw_http(address, request_bytes, read=True):
    host, port = address.split(":")
    with socket.create_connection((host, int(port)), timeout=15) as connection:
        connection.sendall(request_bytes)
        if not read:
            return b""
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
        return answer


def status_of(answer):
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else None


def store_envelope(sender_uuid, sender_name, description, color, links):
    return json.dumps({
        "versionID": "2.0.0", "operationType": "Store", "messageID": str(uuid.uuid4()).upper(),
        "jmObjectType": "Hex",
        "jmObject": {"senderUUID": sender_uuid, "senderName": sender_name, "hexDescription": description,
                     "hexColor": color, "links": links},
    }).encode() + b"\n"


def main():
    discovery = free_udp_port()
    ada = start("Ada", discovery, ["--max-string", "200000"])
    grace = start("Grace", discovery)
    ada_address = open(f"{ada}/web.address").read().strip()
    token = open(f"{ada}/web.token").read().strip()
    ada_uuid = json.loads(hexctl(ada, "status", "--json").stdout)["peerUUID"]
    grace_uuid = json.loads(hexctl(grace, "status", "--json").stdout)["peerUUID"]
    wait_for(lambda: any(p["uuid"] == grace_uuid for p in json_lines(ada, "peers")), "Ada never saw Grace")
    wait_for(lambda: any(p["uuid"] == ada_uuid for p in json_lines(grace, "peers")), "Grace never saw Ada")

    url = hexctl(ada, "open", "--print").stdout.strip()
    check(url == f"http://{ada_address}/?token={token}", f"hexctl open --print printed {url!r}")
    # hexctl open starts $BROWSER, and waits for nothing, with a file that leads on to the URL (the
    # browser's command line, which any user can read, never holds the token).
    stub_output = f"{work}/browser-args"
    stub = f"{work}/browser"
    with open(stub, "w") as script:
        script.write(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {stub_output}\n")
    os.chmod(stub, 0o755)
    subprocess.run([f"{BIN}/hexctl", "--data-dir", ada, "open"], env={**os.environ, "BROWSER": stub}, check=True,
                   timeout=30)
    opener = "file://" + os.path.realpath(ada) + "/web-open.html"
    wait_for(lambda: os.path.exists(stub_output) and open(stub_output).read().strip() == opener,
             "hexctl open did not start $BROWSER with the page's opener", seconds=5)
    check(token not in open(stub_output).read(), "the token was on the browser's command line")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1100, "height": 800})
        page = context.new_page()
        page_errors = []
        page.on("pageerror", lambda error: page_errors.append(str(error)))
        page.goto(opener)
        page.wait_for_url(f"http://{ada_address}/")
        check(page.url == f"http://{ada_address}/", f"the token stayed in the address bar: {page.url}")
        cookies = context.cookies()
        check(any(c["httpOnly"] and c["sameSite"] == "Strict" and c["value"] == token for c in cookies),
              f"no HttpOnly, SameSite=Strict session cookie: {cookies}")
        expect(page.locator("body[data-live=true]")).to_be_attached(timeout=10000)
        expect(page.locator("#me")).to_contain_text(f"You are known as Ada ({ada_uuid[:8]})")

        # A hex Grace sends appears without a reload.
        for index in range(5):
            sent = json.loads(hexctl(grace, "send", "--to", "Ada", f"https://example.com/{index}",
                                     "--description", f"From Grace {index}", "--json").stdout.splitlines()[-1])
            hex_id = sent["hexID"]
            item = page.locator(f'#inbox-list [data-hex-id="{hex_id}"]')
            expect(item).to_be_visible(timeout=5000)
            expect(item).to_have_class("unchecked")

        # Opening a hex shows its links and checks it; save and delete agree with hexctl.
        first = page.locator(f'#inbox-list [data-hex-id="{hex_id}"]')
        first.locator('[data-action="open"]').click()
        expect(first.locator('a[href="https://example.com/4"]')).to_be_visible()
        check(first.locator("a").first.get_attribute("rel") == "noopener noreferrer", "a link without rel")
        expect(first).not_to_have_class("unchecked")
        inbox = {h["id"]: h for h in json_lines(ada, "inbox")}
        check(inbox[hex_id]["isChecked"], "opening on the page did not check the hex for hexctl")
        first.locator('[data-action="save"]').click()
        expect(page.locator("#hexlist-list [data-hex-id]")).to_have_count(1)
        check(len(json_lines(ada, "hexlist")) == 1, "save on the page left My Hexlist empty for hexctl")
        second_id = list(inbox)[1]
        page.locator(f'#inbox-list [data-hex-id="{second_id}"] [data-action="check"]').click()
        wait_for(lambda: {h["id"]: h for h in json_lines(ada, "inbox")}[second_id]["isChecked"],
                 "check on the page did not check the hex for hexctl", seconds=5)
        page.locator(f'#inbox-list [data-hex-id="{hex_id}"] [data-action="delete"]').click()
        expect(page.locator(f'#inbox-list [data-hex-id="{hex_id}"]')).to_have_count(0)
        check(hex_id not in {h["id"] for h in json_lines(ada, "inbox")}, "delete on the page left the hex for hexctl")

        # Sending from the page is acked, and Grace has it.
        page.click('nav a[data-view="send"]')
        page.select_option("#send-to", grace_uuid)
        page.fill("#send-links", "https://example.org/from-the-page\nhttps://example.org/second")
        page.fill("#send-description", "Sent from Ada's page")
        page.click("#send-form button[type=submit]")
        expect(page.locator("#send-result")).to_have_class("stored", timeout=15000)
        check(any(h["hexDescription"] == "Sent from Ada's page" for h in json_lines(grace, "inbox")),
              "Grace has no hex sent from the page")

        # Peers: avatars and badges; a pairing request with its code, accepted on the page.
        page.click('nav a[data-view="peers"]')
        peer = page.locator(f'#peer-list [data-peer-id="{grace_uuid}"]')
        expect(peer).to_contain_text("Grace")
        expect(peer).to_contain_text(grace_uuid[:8])
        # Declined first: the request goes, nothing is pinned as paired.
        hexctl(grace, "pair", "Ada", "--json")
        request = page.locator(f'#pairing [data-pairing-id="{grace_uuid}"]')
        expect(request).to_be_visible(timeout=10000)
        request.locator('[data-action="decline"]').click()
        expect(request).to_have_count(0, timeout=5000)
        check(not any(p["uuid"] == grace_uuid and (p.get("pairing") or p.get("trust") == "paired")
                      for p in json_lines(ada, "peers")), "Decline on the page left a request, or paired")
        asked = json.loads(hexctl(grace, "pair", "Ada", "--json").stdout)
        code = asked["code"]
        expect(request).to_contain_text(code, timeout=10000)
        request.locator('[data-action="accept"]').click()
        wait_for(lambda: any(p["uuid"] == grace_uuid and p.get("trust") == "paired" for p in json_lines(ada, "peers")),
                 "Accept on the page did not pair Ada with Grace")
        wait_for(lambda: any(p["uuid"] == ada_uuid and p.get("trust") == "paired" for p in json_lines(grace, "peers")),
                 "Accept on the page did not pair Grace with Ada")
        expect(peer.locator(".badge.paired")).to_be_visible(timeout=10000)

        # Hostile text stays text: nothing runs, no link with a forbidden scheme exists.
        page.click('nav a[data-view="inbox"]')
        tcp_port = json.loads(hexctl(ada, "status", "--json").stdout)["tcpPort"]
        hostile = [
            store_envelope(str(uuid.uuid4()).upper(), '<img src=x onerror="window.__pwned=1">' + "N" * 100_000,
                           '<script>window.__pwned=2</script>', 'red;background:url(javascript:window.__pwned=3)', [
                               {"url": "javascript:window.__pwned=4", "linkDescription": "<b onclick=x>click</b>"},
                               {"url": "data:text/html,<script>window.__pwned=5</script>"},
                               {"url": " JaVaScRiPt:window.__pwned=6"},
                               {"url": "https://example.com/\u202egnp.exe", "linkDescription": "\u202eevil"},
                           ]),
            store_envelope(str(uuid.uuid4()).upper(), "\u202eecarG", '"><svg onload=window.__pwned=7>',
                           "#zzzzzz", [{"url": "vbscript:msgbox(1)"}, {"url": "file:///etc/passwd"}]),
        ]
        for envelope in hostile:
            with socket.create_connection(("127.0.0.1", tcp_port), timeout=10) as connection:
                connection.sendall(envelope)
                reply = connection.makefile().readline()
                check('"stored"' in reply, f"Ada did not store a hostile hex: {reply[:200]}")
        expect(page.locator("#inbox-list [data-hex-id]")).to_have_count(6, timeout=5000)
        # Again from a reload: the first screen then comes inside the document itself.
        page.reload()
        expect(page.locator("#inbox-list [data-hex-id]")).to_have_count(6, timeout=5000)
        for title in page.locator('#inbox-list [data-action="open"]').all()[:2]:
            title.click()
        expect(page.get_by_text("<script>window.__pwned=2</script>")).to_be_visible()
        expect(page.locator("#inbox-list .inert").first).to_be_visible()
        page.wait_for_timeout(300)
        check(page.evaluate("window.__pwned") is None, "a hostile payload ran a script")
        hrefs = page.evaluate("[...document.querySelectorAll('a[href]')].map(a => a.href)")
        bad = [h for h in hrefs if not h.split(":")[0].lower() in ("http", "https", "mailto")]
        check(not bad, f"links with a forbidden scheme: {bad}")
        check(page.locator('#inbox-list img, #inbox-list svg, #inbox-list script').count() == 0,
              "markup from a peer became elements")

        # Screenshots of each theme, for a person to look at (README).
        os.makedirs(SHOTS, exist_ok=True)
        for index in range(2):
            hexctl(grace, "send", "--to", "Ada", "https://example.com/report.pdf", "https://example.com/slides",
                   "--description", ["Slides for Thursday", "Trip photos"][index],
                   "--color", ["#e67e22", "#27ae60"][index])
        for hex_item in json_lines(ada, "inbox"):
            if "pwned" in hex_item["hexDescription"]:
                hexctl(ada, "inbox", "delete", hex_item["id"])
        page.reload()
        expect(page.locator("body[data-live=true]")).to_be_attached(timeout=10000)
        page.locator('#inbox-list [data-action="open"]').first.click()
        for theme in ("light", "dark"):
            page.select_option("#theme", theme)
            page.wait_for_timeout(200)
            page.screenshot(path=f"{SHOTS}/page-{theme}.png")
        page.select_option("#theme", "auto")

        # The daemon stops: the page says so; it starts again: the page comes back by itself, live.
        ada_process = next(process for name, process, _ in daemons if name == "Ada")
        ada_process.terminate()
        ada_process.wait(timeout=10)
        expect(page.locator("#lost")).to_be_visible(timeout=5000)
        start("Ada", discovery, ["--max-string", "200000"], web=ada_address)
        expect(page.locator("#lost")).to_be_hidden(timeout=15000)
        expect(page.locator("body[data-live=true]")).to_be_attached(timeout=5000)
        new_port = json.loads(hexctl(ada, "status", "--json").stdout)["tcpPort"]
        wait_for(lambda: any(p["uuid"] == ada_uuid and p["endpoint"].endswith(f":{new_port}")
                             for p in json_lines(grace, "peers")), "Grace did not see Ada come back")
        sent = json.loads(hexctl(grace, "send", "--to", ada_uuid, "https://example.com/after-restart",
                                 "--description", "After the restart", "--json").stdout.splitlines()[-1])
        expect(page.locator(f'#inbox-list [data-hex-id="{sent["hexID"]}"]')).to_be_visible(timeout=5000)

        # The access rules, from outside the browser.
        host = f"Host: {ada_address}\r\n".encode()
        cookie = f"Cookie: hexd_session_{ada_address.split(':')[1]}={token}\r\n".encode()
        body = b'{"command":"status"}'
        post = b"POST /control HTTP/1.1\r\n" + host + b"Content-Length: %d\r\n" % len(body)
        cases = [
            ("no cookie", b"GET / HTTP/1.1\r\n" + host + b"\r\n", 401),
            ("no cookie, events", b"GET /events HTTP/1.1\r\n" + host + b"\r\n", 401),
            ("a wrong token", b"GET /?token=" + b"0" * 64 + b" HTTP/1.1\r\n" + host + b"\r\n", 401),
            ("a foreign Host", b"GET / HTTP/1.1\r\nHost: evil.example:80\r\n" + cookie + b"\r\n", 421),
            ("a foreign Origin", post + cookie + b"Origin: http://evil.example\r\n\r\n" + body, 403),
            ("a cookie POST without Origin", post + cookie + b"\r\n" + body, 403),
            ("an oversized head", b"GET / HTTP/1.1\r\n" + host + b"X-Big: " + b"a" * 20000 + b"\r\n\r\n", 431),
            ("a bearer token", post + f"Authorization: Bearer {token}\r\n\r\n".encode() + body, 200),
        ]
        for name, request_bytes, expected in cases:
            got = status_of(raw_http(ada_address, request_bytes))
            check(got == expected, f"{name}: expected {expected}, got {got}")

        # Slowloris: more trickling connections than the page takes at once; the browser is still served.
        host_name, port = ada_address.split(":")
        trickles = []
        for _ in range(80):
            connection = socket.create_connection((host_name, int(port)), timeout=15)
            connection.sendall(b"GET / HTTP/1.1\r\n" + host)
            trickles.append(connection)
        page.click('nav a[data-view="outbox"]')
        page.click('nav a[data-view="inbox"]')
        answer = page.evaluate("fetch('/control', {method: 'POST', body: JSON.stringify({command: 'status'})})"
                               ".then(r => r.text())")
        check('"ok":true' in answer, f"the page was not served beside slow connections: {answer[:200]}")
        started = time.time()
        closed = 0
        for connection in trickles:
            try:
                connection.settimeout(max(0.1, 15 - (time.time() - started)))
                data = connection.recv(4096)
                closed += 1 if data == b"" or data.startswith(b"HTTP/1.1 408") else 0
            except (ConnectionResetError, socket.timeout):
                closed += 1
            connection.close()
        check(closed == len(trickles), f"only {closed} of {len(trickles)} slow connections were closed")
        print(f"page: {len(trickles)} slow connections closed within {time.time() - started:.1f} s")
        check(not page_errors, f"the page's script failed: {page_errors}")
        browser.close()
    print("page: ok")


try:
    main()
finally:
    for _, process, _ in daemons:
        process.terminate()
    for _, process, _ in daemons:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
    shutil.rmtree(work, ignore_errors=True)
