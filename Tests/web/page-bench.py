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
import os
import socket
import statistics
import subprocess
import sys
import time
import uuid

from playwright.sync_api import sync_playwright

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from hexd_harness import Harness, free_udp_port, store_envelope  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("bin")
parser.add_argument("--hexes", type=int, default=20_000)
parser.add_argument("--rounds", type=int, default=5)
options = parser.parse_args()
CHROMIUM = os.environ.get("HEXD_CHROMIUM", "/usr/bin/chromium")
# Waited for inside the page: polling from outside would take the page's main thread from it.
SHOWN = """() => new Promise((resolve) => {
    const look = () => {
        const marks = performance.getEntriesByName('inbox-shown');
        if (marks.length) resolve(marks[0].startTime); else setTimeout(look, 10);
    };
    look();
})"""


def fill(run, data, count):
    """Stores `count` hexes from one plaintext sender, pipelined on one connection."""
    sender = str(uuid.uuid4()).upper()
    with socket.create_connection(("127.0.0.1", run.status(data)["tcpPort"]), timeout=120) as connection:
        replies = connection.makefile("rb")
        for first in range(0, count, 500):
            batch = range(first, min(count, first + 500))
            connection.sendall(b"".join(store_envelope("Filler", f"Hex number {index}",
                                                       [{"url": f"https://example.com/{index}"}], sender_uuid=sender)
                                        for index in batch))
            for _ in batch:
                run.check(b'"stored"' in replies.readline(), "a hex was not stored")


def rss_kib(process):
    with open(f"/proc/{process.pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def open_page(run, browser, data):
    """A new browser profile on the page, through `hexctl open`'s URL and its sign-in page."""
    url = run.hexctl(data, "open", "--print").stdout.strip()
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.wait_for_url(url.split("?")[0])
    return context, page


def first_load(run, browser, data):
    """Medians of the first screen: opened in a new profile (timed from the page itself, after
    the sign-in page's refresh), and reloaded with the session cookie set."""
    opened, reloaded = [], []
    for _ in range(options.rounds):
        context, page = open_page(run, browser, data)
        opened.append(page.evaluate(SHOWN))
        page.reload()
        reloaded.append(page.evaluate(SHOWN))
        context.close()
    return statistics.median(opened), statistics.median(reloaded)


def live(run, full, page):
    """A hex acked to visible on the open page, against its event on `hexctl watch`."""
    watch = run.spawn([f"{options.bin}/hexctl", "--data-dir", full, "watch", "--json"], stdout=subprocess.PIPE,
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
    with socket.create_connection(("127.0.0.1", run.status(full)["tcpPort"]), timeout=30) as connection:
        replies = connection.makefile("rb")
        for index in range(options.rounds * 4):
            connection.sendall(store_envelope("Live", f"live {index}", [{"url": "https://example.com/live"}]))
            hex_id = json.loads(replies.readline())["hexID"]
            acked = time.time() * 1000
            while json.loads(watch.stdout.readline()).get("id") != hex_id:
                pass
            on_watch.append(time.time() * 1000 - acked)
            seen = run.wait_for(lambda: page.evaluate(f"window.__seen['{hex_id}'] ?? null"), "a hex never showed")
            on_page.append(seen - acked)
            time.sleep(0.1)
    watch.terminate()
    return statistics.median(on_page), statistics.median(on_watch)


def main(run):
    discovery = free_udp_port()
    arguments = ["--web", "127.0.0.1:0", "--notify", "off", "--log-level", "warning"]
    full = run.start("Full", discovery, arguments, ready="web.address")
    empty = run.start("Empty", discovery, arguments, ready="web.address")
    began = time.time()
    fill(run, full, options.hexes)
    print(f"page-bench: stored {options.hexes} hexes in {time.time() - began:.1f} s")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        baseline = first_load(run, browser, empty)
        loaded = first_load(run, browser, full)
        for index, how in enumerate(["opened in a new profile", "reloaded"]):
            print(f"page-bench: first screen, {how}, {options.hexes} hexes stored: median {loaded[index]:.1f} ms; "
                  f"empty inbox {baseline[index]:.1f} ms (ratio {loaded[index] / baseline[index]:.2f}; "
                  "target: under 100 ms)")

        time.sleep(1)
        before = rss_kib(run.process("Full"))
        _, page = open_page(run, browser, full)
        run.wait_for(lambda: page.evaluate("document.body.dataset.live === 'true'"), "the page never went live")
        page.click("#inbox-more")
        time.sleep(2)
        during = rss_kib(run.process("Full"))
        print(f"page-bench: hexd's RSS {before / 1024:.1f} MiB without the page, {during / 1024:.1f} MiB with it "
              f"open (+{(during - before) / 1024:.1f} MiB; target: within 5 MiB)")
        on_page, on_watch = live(run, full, page)
        print(f"page-bench: a hex acked to visible on the page: median {on_page:.1f} ms; to its event on hexctl "
              f"watch: {on_watch:.1f} ms (target: under 50 ms)")
        browser.close()


with Harness(options.bin, label="page-bench") as harness:
    main(harness)
