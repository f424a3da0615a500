#!/usr/bin/env python3
"""The inbox page's figures (issue 20), as ratios against baselines measured in the same run:

- first load: from navigation to the inbox's first screen shown (the page's `inbox-shown` mark),
  with N hexes stored against an empty inbox;
- memory: hexd's resident set with the page open against the same daemon before it was opened;
- live: a hex acked to visible on the open page, against the same hex's event reaching a
  `hexctl watch` client.

Figures are printed, not enforced. Usage: Tests/web/page-bench.py BIN_DIR [--hexes N] [--rounds R]
"""
import argparse
import json
import shutil
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

from playwright.sync_api import sync_playwright

parser = argparse.ArgumentParser()
parser.add_argument("bin")
parser.add_argument("--hexes", type=int, default=20_000)
parser.add_argument("--rounds", type=int, default=5)
options = parser.parse_args()
BIN = options.bin
CHROMIUM = os.environ.get("HEXD_CHROMIUM", "/usr/bin/chromium")
work = tempfile.mkdtemp(prefix="hexd-page-bench-")
processes = []


def start(name, discovery):
    data = f"{work}/{name}"
    log = open(f"{work}/{name}.log", "w")
    process = subprocess.Popen(
        [f"{BIN}/hexd", "--data-dir", data, "--port", "0", "--discovery-port", str(discovery),
         "--broadcast", "127.255.255.255", "--announce-interval", "0.3", "--name", name,
         "--web", "127.0.0.1:0", "--log-level", "warning"], stdout=log, stderr=subprocess.STDOUT)
    processes.append(process)
    deadline = time.time() + 20
    while not os.path.exists(f"{data}/web.address"):
        if time.time() > deadline or process.poll() is not None:
            sys.exit(f"page-bench: {name} serves no page")
        time.sleep(0.05)
    return data, process


def hexctl(data, *arguments):
    return subprocess.run([f"{BIN}/hexctl", "--data-dir", data, *arguments], capture_output=True, text=True,
                          check=True, timeout=120).stdout


def fill(data, count):
    """Stores `count` hexes from one plaintext sender, pipelined on one connection."""
    port = json.loads(hexctl(data, "status", "--json"))["tcpPort"]
    sender = str(uuid.uuid4()).upper()
    with socket.create_connection(("127.0.0.1", port), timeout=120) as connection:
        replies = connection.makefile("rb")
        for start_index in range(0, count, 500):
            batch = b"".join(json.dumps({
                "versionID": "2.0.0", "operationType": "Store", "messageID": str(uuid.uuid4()).upper(),
                "jmObjectType": "Hex",
                "jmObject": {"senderUUID": sender, "senderName": "Filler", "hexDescription": f"Hex number {index}",
                             "hexColor": "#3498db", "links": [{"url": f"https://example.com/{index}"}]},
            }).encode() + b"\n" for index in range(start_index, min(count, start_index + 500)))
            connection.sendall(batch)
            for _ in range(min(500, count - start_index)):
                if b'"stored"' not in replies.readline():
                    sys.exit("page-bench: a hex was not stored")


def wait_js(page, expression, seconds=30):
    """Polls `expression` from outside the page (its CSP forbids the eval a page-side wait needs)."""
    deadline = time.time() + seconds
    while not page.evaluate(expression):
        if time.time() > deadline:
            sys.exit(f"page-bench: timed out waiting for {expression}")
        time.sleep(0.005)


def rss_kib(process):
    with open(f"/proc/{process.pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def first_load(browser, data):
    """Medians of the first screen: opened from `hexctl open`'s URL in a new browser profile (the
    token's redirect included), and reloaded with the session cookie set."""
    url = hexctl(data, "open", "--print").strip()
    # Waited for inside the page: polling from outside would take the page's main thread from it.
    shown = """() => new Promise((resolve) => {
        const look = () => {
            const marks = performance.getEntriesByName('inbox-shown');
            if (marks.length) resolve(marks[0].startTime); else setTimeout(look, 10);
        };
        look();
    })"""
    opened, reloaded = [], []
    page_address = url.split("?")[0]
    for _ in range(options.rounds):
        context = browser.new_context()
        page = context.new_page()
        # The token's URL answers with the cookie and a refresh to the page: timed from there.
        page.goto(url)
        page.wait_for_url(page_address)
        opened.append(page.evaluate(shown))
        page.reload()
        reloaded.append(page.evaluate(shown))
        context.close()
    return statistics.median(opened), statistics.median(reloaded)


def main():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        discovery = probe.getsockname()[1]
    full, full_process = start("Full", discovery)
    empty, _ = start("Empty", discovery)
    began = time.time()
    fill(full, options.hexes)
    print(f"page-bench: stored {options.hexes} hexes in {time.time() - began:.1f} s")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        baseline = first_load(browser, empty)
        loaded = first_load(browser, full)
        for index, how in enumerate(["opened from hexctl open's URL in a new profile (after its sign-in page)",
                                     "reloaded"]):
            print(f"page-bench: first screen, {how}, {options.hexes} hexes stored: median {loaded[index]:.1f} ms; "
                  f"empty inbox {baseline[index]:.1f} ms (ratio {loaded[index] / baseline[index]:.2f}; "
                  "target: under 100 ms)")

        time.sleep(1)
        before = rss_kib(full_process)
        context = browser.new_context()
        page = context.new_page()
        url = hexctl(full, "open", "--print").strip()
        page.goto(url)
        page.wait_for_url(url.split("?")[0])
        wait_js(page, "document.body.dataset.live === 'true'")
        page.click("#inbox-more")
        time.sleep(2)
        during = rss_kib(full_process)
        print(f"page-bench: hexd's RSS {before / 1024:.1f} MiB without the page, {during / 1024:.1f} MiB with it "
              f"open (+{(during - before) / 1024:.1f} MiB; target: within 5 MiB)")

        # Live: a hex acked to visible on the page, against its event reaching `hexctl watch`.
        port = json.loads(hexctl(full, "status", "--json"))["tcpPort"]
        watch = subprocess.Popen([f"{BIN}/hexctl", "--data-dir", full, "watch", "--json"], stdout=subprocess.PIPE,
                                 text=True)
        page.evaluate("""() => {
            window.__seen = {};
            new MutationObserver(() => {
                for (const node of document.querySelectorAll('#inbox-list [data-hex-id]')) {
                    window.__seen[node.dataset.hexId] ??= performance.timeOrigin + performance.now();
                }
            }).observe(document.getElementById('inbox-list'), { childList: true });
        }""")
        on_page, on_watch = [], []
        with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
            replies = connection.makefile("rb")
            for index in range(options.rounds * 4):
                connection.sendall(json.dumps({
                    "versionID": "2.0.0", "operationType": "Store", "messageID": str(uuid.uuid4()).upper(),
                    "jmObjectType": "Hex", "jmObject": {"senderUUID": str(uuid.uuid4()).upper(), "senderName": "Live",
                                                        "hexDescription": f"live {index}",
                                                        "links": [{"url": "https://example.com/live"}]},
                }).encode() + b"\n")
                reply = json.loads(replies.readline())
                acked = time.time() * 1000
                hex_id = reply["hexID"]
                while True:
                    event = json.loads(watch.stdout.readline())
                    if event.get("kind") == "hexReceived" and event.get("id") == hex_id:
                        on_watch.append(time.time() * 1000 - acked)
                        break
                wait_js(page, f"window.__seen['{hex_id}'] !== undefined", seconds=10)
                on_page.append(page.evaluate(f"window.__seen['{hex_id}']") - acked)
                time.sleep(0.1)
        watch.terminate()
        print(f"page-bench: a hex acked to visible on the page: median {statistics.median(on_page):.1f} ms; to its "
              f"event on hexctl watch: {statistics.median(on_watch):.1f} ms (target: under 50 ms)")
        browser.close()


try:
    main()
finally:
    for process in processes:
        process.terminate()
        process.wait(timeout=10)
    shutil.rmtree(work, ignore_errors=True)
