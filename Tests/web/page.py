#!/usr/bin/env python3
"""The inbox page, as a person uses it: two real hexd on loopback, the page opened in a real
headless Chromium through `hexctl open`, driven by Playwright.

Checks that a hex sent by the other daemon appears without a reload; that check, save and delete
work from the page and `hexctl inbox` agrees; that a send from the page is acked; that a file
shared with the page's daemon is fetched by its Download button; that a pairing
request shows its code, Decline drops it and Accept pairs both sides; that hostile text stays
inert text; that the page says when it lost the daemon and comes back by itself; and that
requests without the cookie, with a foreign Host or Origin, with an oversized head, and slowloris
connections are refused while the page keeps serving. Writes a screenshot of each theme.

Usage: Tests/web/page.py BIN_DIR SCREENSHOT_DIR
"""
import json
import os
import socket
import subprocess
import sys
import time

from playwright.sync_api import sync_playwright, expect

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from hexd_harness import Harness, free_udp_port, store_envelope  # noqa: E402

BIN, SHOTS = sys.argv[1], sys.argv[2]
CHROMIUM = os.environ.get("HEXD_CHROMIUM", "/usr/bin/chromium")


def raw_http(address, request_bytes):
    """One request on a new connection; the whole answer."""
    host, port = address.split(":")
    with socket.create_connection((host, int(port)), timeout=15) as connection:
        connection.sendall(request_bytes)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
        return answer


def status_of(answer):
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else None


def main(run):
    discovery = free_udp_port()
    ada_options = ["--max-string", "200000", "--notify", "off", "--downloads", f"{run.work}/ada-downloads"]
    ada = run.start("Ada", discovery, ada_options + ["--web", "127.0.0.1:0"], ready="web.address")
    grace = run.start("Grace", discovery, ["--notify", "off", "--web", "127.0.0.1:0"], ready="web.address")
    ada_address = open(f"{ada}/web.address").read().strip()
    token = open(f"{ada}/web.token").read().strip()
    ada_uuid, grace_uuid = run.see_each_other(ada, grace)

    url = run.hexctl(ada, "open", "--print").stdout.strip()
    run.check(url == f"http://{ada_address}/?token={token}", f"hexctl open --print printed {url!r}")
    # hexctl open starts $BROWSER, and waits for nothing, with a file that leads on to the URL (the
    # browser's command line, which any user can read, never holds the token).
    stub_output = f"{run.work}/browser-args"
    stub = f"{run.work}/browser"
    with open(stub, "w") as script:
        script.write(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {stub_output}\n")
    os.chmod(stub, 0o755)
    run.hexctl(ada, "open", environment={"BROWSER": stub})
    opener = "file://" + os.path.realpath(ada) + "/web-open.html"
    run.wait_for(lambda: os.path.exists(stub_output) and open(stub_output).read().strip() == opener,
                 "hexctl open did not start $BROWSER with the page's opener", seconds=5)
    run.check(token not in open(stub_output).read(), "the token was on the browser's command line")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1100, "height": 800})
        page = context.new_page()
        page_errors = []
        page.on("pageerror", lambda error: page_errors.append(str(error)))
        page.goto(opener)
        page.wait_for_url(f"http://{ada_address}/")
        run.check(page.url == f"http://{ada_address}/", f"the token stayed in the address bar: {page.url}")
        cookies = context.cookies()
        run.check(any(c["httpOnly"] and c["sameSite"] == "Strict" and c["value"] == token for c in cookies),
                  f"no HttpOnly, SameSite=Strict session cookie: {cookies}")
        expect(page.locator("body[data-live=true]")).to_be_attached(timeout=10000)
        expect(page.locator("#me")).to_contain_text(f"You are known as Ada ({ada_uuid[:8]})")

        # A hex Grace sends appears without a reload.
        for index in range(5):
            hex_id = run.send(grace, "--to", "Ada", f"https://example.com/{index}",
                              "--description", f"From Grace {index}")["hexID"]
            item = page.locator(f'#inbox-list [data-hex-id="{hex_id}"]')
            expect(item).to_be_visible(timeout=5000)
            expect(item).to_have_class("unchecked")

        # Opening a hex shows its links and checks it; save and delete agree with hexctl.
        first = page.locator(f'#inbox-list [data-hex-id="{hex_id}"]')
        first.locator('[data-action="open"]').click()
        expect(first.locator('a[href="https://example.com/4"]')).to_be_visible()
        run.check(first.locator("a").first.get_attribute("rel") == "noopener noreferrer", "a link without rel")
        expect(first).not_to_have_class("unchecked")
        inbox = {h["id"]: h for h in run.json_lines(ada, "inbox")}
        run.check(inbox[hex_id]["isChecked"], "opening on the page did not check the hex for hexctl")
        first.locator('[data-action="save"]').click()
        expect(page.locator("#hexlist-list [data-hex-id]")).to_have_count(1)
        run.check(len(run.json_lines(ada, "hexlist")) == 1, "save on the page left My Hexlist empty for hexctl")
        second_id = list(inbox)[1]
        page.locator(f'#inbox-list [data-hex-id="{second_id}"] [data-action="check"]').click()
        run.wait_for(lambda: {h["id"]: h for h in run.json_lines(ada, "inbox")}[second_id]["isChecked"],
                     "check on the page did not check the hex for hexctl", seconds=5)
        page.locator(f'#inbox-list [data-hex-id="{hex_id}"] [data-action="delete"]').click()
        expect(page.locator(f'#inbox-list [data-hex-id="{hex_id}"]')).to_have_count(0)
        run.check(hex_id not in {h["id"] for h in run.json_lines(ada, "inbox")},
                  "delete on the page left the hex for hexctl")

        # Sending from the page is acked, and Grace has it.
        page.click('nav a[data-view="send"]')
        page.select_option("#send-to", grace_uuid)
        page.fill("#send-links", "https://example.org/from-the-page\nhttps://example.org/second")
        page.fill("#send-description", "Sent from Ada's page")
        page.click("#send-form button[type=submit]")
        expect(page.locator("#send-result")).to_have_class("stored", timeout=15000)
        run.check(any(h["hexDescription"] == "Sent from Ada's page" for h in run.json_lines(grace, "inbox")),
                  "Grace has no hex sent from the page")

        # Peers: avatars and badges; a pairing request with its code, accepted on the page.
        page.click('nav a[data-view="peers"]')
        peer = page.locator(f'#peer-list [data-peer-id="{grace_uuid}"]')
        expect(peer).to_contain_text("Grace")
        expect(peer).to_contain_text(grace_uuid[:8])
        # Declined first: the request goes, nothing is pinned as paired.
        run.hexctl(grace, "pair", "Ada", "--json")
        request = page.locator(f'#pairing [data-pairing-id="{grace_uuid}"]')
        expect(request).to_be_visible(timeout=10000)
        request.locator('[data-action="decline"]').click()
        expect(request).to_have_count(0, timeout=5000)
        run.check(not any(p["uuid"] == grace_uuid and (p.get("pairing") or p.get("trust") == "paired")
                          for p in run.json_lines(ada, "peers")), "Decline on the page left a request, or paired")
        asked = json.loads(run.hexctl(grace, "pair", "Ada", "--json").stdout)
        code = asked["code"]
        expect(request).to_contain_text(code, timeout=10000)
        request.locator('[data-action="accept"]').click()
        def paired(data, uuid):
            return any(p["uuid"] == uuid and p.get("trust") == "paired" for p in run.json_lines(data, "peers"))
        run.wait_for(lambda: paired(ada, grace_uuid), "Accept on the page did not pair Ada with Grace")
        run.wait_for(lambda: paired(grace, ada_uuid), "Accept on the page did not pair Grace with Ada")
        expect(peer.locator(".badge.paired")).to_be_visible(timeout=10000)

        # Hostile text stays text: nothing runs, no link with a forbidden scheme exists.
        page.click('nav a[data-view="inbox"]')
        tcp_port = run.status(ada)["tcpPort"]
        hostile = [
            store_envelope('<img src=x onerror="window.__pwned=1">' + "N" * 100_000,
                           '<script>window.__pwned=2</script>', [
                {"url": "javascript:window.__pwned=4", "linkDescription": "<b onclick=x>click</b>"},
                {"url": "data:text/html,<script>window.__pwned=5</script>"},
                {"url": " JaVaScRiPt:window.__pwned=6"},
                {"url": "https://example.com/\u202egnp.exe", "linkDescription": "\u202eevil"},
            ], color='red;background:url(javascript:window.__pwned=3)'),
            store_envelope("\u202eecarG", '"><svg onload=window.__pwned=7>',
                           [{"url": "vbscript:msgbox(1)"}, {"url": "file:///etc/passwd"}], color="#zzzzzz"),
        ]
        for envelope in hostile:
            with socket.create_connection(("127.0.0.1", tcp_port), timeout=10) as connection:
                connection.sendall(envelope)
                reply = connection.makefile().readline()
                run.check('"stored"' in reply, f"Ada did not store a hostile hex: {reply[:200]}")
        expect(page.locator("#inbox-list [data-hex-id]")).to_have_count(6, timeout=5000)
        # Again from a reload: the first screen then comes inside the document itself.
        page.reload()
        expect(page.locator("#inbox-list [data-hex-id]")).to_have_count(6, timeout=5000)
        for title in page.locator('#inbox-list [data-action="open"]').all()[:2]:
            title.click()
        expect(page.get_by_text("<script>window.__pwned=2</script>")).to_be_visible()
        expect(page.locator("#inbox-list .inert").first).to_be_visible()
        page.wait_for_timeout(300)
        run.check(page.evaluate("window.__pwned") is None, "a hostile payload ran a script")
        hrefs = page.evaluate("[...document.querySelectorAll('a[href]')].map(a => a.href)")
        bad = [h for h in hrefs if not h.split(":")[0].lower() in ("http", "https", "mailto")]
        run.check(not bad, f"links with a forbidden scheme: {bad}")
        run.check(page.locator('#inbox-list img, #inbox-list svg, #inbox-list script').count() == 0,
                  "markup from a peer became elements")

        # A file Grace shares arrives as a link only Ada's key can fetch; Download fetches it.
        shared = f"{run.work}/shared notes.txt"
        with open(shared, "w") as notes:
            notes.write("notes from Grace\n")
        shared_answer = run.hexctl(grace, "share", "--to", "Ada", "-d", "Shared notes", shared, "--json")
        shared_id = json.loads(shared_answer.stdout.strip().splitlines()[-1])["hexID"]
        shared_item = page.locator(f'#inbox-list [data-hex-id="{shared_id}"]')
        expect(shared_item).to_be_visible(timeout=5000)
        shared_item.locator('[data-action="open"]').click()
        shared_item.locator('[data-action="download"]').click()
        landed = f"{run.work}/ada-downloads/shared notes.txt"
        expect(shared_item.locator('.fetch-state[data-state="fetched"]')).to_contain_text(landed, timeout=15000)
        run.check(open(landed).read() == "notes from Grace\n", "Download on the page did not fetch the file")

        # Visibility from the page: hexctl agrees, and a change made elsewhere shows live.
        page.select_option("#visibility", "hidden")
        run.wait_for(lambda: run.json_lines(ada, "visibility")[0]["visibility"] == "hidden",
                     "Hidden on the page did not hide Ada")
        page.select_option("#visibility", "for")
        run.wait_for(lambda: "visibleUntil" in run.json_lines(ada, "visibility")[0],
                     "Visible for 10 minutes on the page did not show Ada for a while")
        expect(page.locator("#visible-until")).to_contain_text("then hidden", timeout=5000)
        run.hexctl(ada, "visibility", "visible")
        expect(page.locator("#visibility")).to_have_value("visible", timeout=5000)

        # Screenshots of each theme, for a person to look at (README).
        os.makedirs(SHOTS, exist_ok=True)
        for index in range(2):
            run.hexctl(grace, "send", "--to", "Ada", "https://example.com/report.pdf", "https://example.com/slides",
                   "--description", ["Slides for Thursday", "Trip photos"][index],
                   "--color", ["#e67e22", "#27ae60"][index])
        for hex_item in run.json_lines(ada, "inbox"):
            if "pwned" in hex_item["hexDescription"]:
                run.hexctl(ada, "inbox", "delete", hex_item["id"])
        page.reload()
        expect(page.locator("body[data-live=true]")).to_be_attached(timeout=10000)
        page.locator('#inbox-list [data-action="open"]').first.click()
        for theme in ("light", "dark"):
            page.select_option("#theme", theme)
            page.wait_for_timeout(200)
            page.screenshot(path=f"{SHOTS}/page-{theme}.png")
        page.select_option("#theme", "auto")

        # The daemon stops: the page says so; it starts again: the page comes back by itself, live.
        ada_process = run.process("Ada")
        ada_process.terminate()
        try:
            ada_process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            run.fail("Ada did not stop within 10 s of SIGTERM")
        expect(page.locator("#lost")).to_be_visible(timeout=5000)
        run.start("Ada", discovery, ada_options + ["--web", ada_address], ready="web.address")
        expect(page.locator("#lost")).to_be_hidden(timeout=15000)
        expect(page.locator("body[data-live=true]")).to_be_attached(timeout=5000)
        new_port = run.status(ada)["tcpPort"]
        run.wait_for(lambda: any(p["uuid"] == ada_uuid and p["endpoint"].endswith(f":{new_port}")
                                 for p in run.json_lines(grace, "peers")), "Grace did not see Ada come back")
        sent = run.send(grace, "--to", ada_uuid, "https://example.com/after-restart",
                        "--description", "After the restart")
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
            run.check(got == expected, f"{name}: expected {expected}, got {got}")

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
        run.check('"ok":true' in answer, f"the page was not served beside slow connections: {answer[:200]}")
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
        run.check(closed == len(trickles), f"only {closed} of {len(trickles)} slow connections were closed")
        print(f"page: {len(trickles)} slow connections closed within {time.time() - started:.1f} s")
        run.check(not page_errors, f"the page's script failed: {page_errors}")
        browser.close()
    print("page: ok")



with Harness(BIN, label="page") as harness:
    main(harness)
