/// The page's script. It reads and changes everything through the control API (`POST /control`,
/// one request, the control socket's response lines) and follows the event stream (`/events`).
/// Everything a peer sent is put in the page as text (`textContent`, never markup), and a link
/// is clickable only for http, https and mailto.
enum PageScript {
    static let text = #"""
        "use strict";

        const $ = (id) => document.getElementById(id);
        const state = { inboxAfter: null };

        // One control request; the answer's lines, parsed. Throws on a daemon that cannot be reached.
        async function control(request) {
          const response = await fetch("/control", {
            method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(request),
          });
          const text = await response.text();
          return text.split("\n").filter((line) => line.length > 0).map((line) => JSON.parse(line));
        }

        // The items of a list answer, and its last line.
        async function list(request, key) {
          const lines = await control(request);
          const items = lines.filter((line) => line.ok && line[key]).map((line) => line[key]);
          const end = lines.find((line) => line.end)?.end ?? { more: false };
          return { items, more: end.more, error: lines.find((line) => !line.ok)?.error };
        }

        // An element; strings among the children become text nodes, never markup.
        function el(tag, attributes = {}, ...children) {
          const element = document.createElement(tag);
          for (const [name, value] of Object.entries(attributes)) {
            if (value === undefined || value === null || value === false) continue;
            if (name === "class") element.className = value;
            else if (name === "onclick") element.addEventListener("click", value);
            else element.setAttribute(name, value === true ? "" : String(value));
          }
          for (const child of children) if (child !== null && child !== undefined) element.append(child);
          return element;
        }

        // The URL to put in href, or null when it must stay text (javascript:, data:, file:, …).
        function safeURL(text) {
          let url;
          try { url = new URL(text); } catch { return null; }
          return ["http:", "https:", "mailto:"].includes(url.protocol) ? url.href : null;
        }

        // A colour to paint with, from what a peer sent: #rgb or #rrggbb only.
        function safeColor(text) {
          const value = String(text ?? "").trim();
          return /^#?([0-9a-f]{3}|[0-9a-f]{6})$/i.test(value) ? (value.startsWith("#") ? value : "#" + value) : null;
        }

        // A UUID's first 8 digits; a device of another kind (kdeconnect:…, localsend:…) keeps its
        // prefix and the first 8 characters after it, as hexctl shows it.
        const shortID = (id) => {
          const text = String(id ?? "");
          const colon = text.indexOf(":");
          return colon < 0 ? text.slice(0, 8).toUpperCase() : text.slice(0, colon + 9);
        };
        const trustText = { paired: "paired", pinned: "pinned", new: "new key", plaintext: "plaintext" };

        function badge(trust) {
          return trust ? el("span", { class: "badge " + trust, title: "how the sender was known" },
            trustText[trust] ?? trust)
            : null;
        }

        function when(iso) {
          const date = new Date(iso);
          return isNaN(date) ? String(iso ?? "") : date.toLocaleString();
        }

        function ago(seconds) {
          if (seconds < 10) return "online";
          if (seconds < 90) return "last seen " + Math.round(seconds) + " s ago";
          if (seconds < 5400) return "last seen " + Math.round(seconds / 60) + " min ago";
          return "last seen " + Math.round(seconds / 3600) + " h ago";
        }

        function swatch(color) {
          const element = el("span", { class: "swatch" });
          const safe = safeColor(color);
          if (safe) element.style.backgroundColor = safe;
          return element;
        }

        // A link of a hex: clickable for http, https and mailto; a file a peer shared (hexd://) gets a
        // Download button that has the daemon fetch it (number: the link's place in the hex, from 1).
        function linkItem(link, number, hexID) {
          const href = safeURL(link.url);
          const label = link.linkDescription ? link.linkDescription + " — " : "";
          if (link.url.startsWith("hexd://")) {
            const progress = el("span", { class: "fetch-state" });
            const button = el("button", { type: "button", "data-action": "download",
              onclick: () => download(hexID, number, button, progress) }, "Download");
            return el("li", { "data-link": number }, label,
              el("span", { class: "inert", title: "a file shared with you" }, "shared file"),
              " ", button, " ", progress);
          }
          const target = href ? el("a", { href, target: "_blank", rel: "noopener noreferrer" }, link.url)
            : el("span", { class: "inert", title: "not opened: only http, https and mailto links are" }, link.url);
          return el("li", {}, label, target);
        }

        // Has the daemon fetch one shared file, showing its progress as the answer's lines stream in.
        async function download(hexID, number, button, state) {
          button.disabled = true;
          state.textContent = "starting…";
          state.dataset.state = "fetching";
          const shown = (report) => {
            state.dataset.state = report.state;
            if (report.state === "fetched") state.textContent = "saved to " + report.path;
            else if (report.state === "failed") state.textContent = report.message ?? "failed";
            else if (report.size) state.textContent = Math.floor(report.received * 100 / report.size) + " %";
          };
          try {
            const response = await fetch("/control", {
              method: "POST", headers: { "Content-Type": "application/json" },
              body: JSON.stringify({ command: "fetch", id: hexID, numbers: [number] }),
            });
            const reader = response.body.getReader();
            const decoder = new TextDecoder();
            let pending = "";
            for (;;) {
              const { value, done } = await reader.read();
              if (done) break;
              pending += decoder.decode(value, { stream: true });
              const lines = pending.split("\n");
              pending = lines.pop();
              for (const line of lines.filter((line) => line.length > 0)) {
                const answer = JSON.parse(line);
                if (answer.fetch) shown(answer.fetch);
                // The last line: an error says why nothing was fetched (its file's own line said it first).
                else if (answer.error && state.dataset.state !== "failed") {
                  state.dataset.state = "failed";
                  state.textContent = answer.error.message;
                }
              }
            }
          } catch {
            state.dataset.state = "failed";
            state.textContent = "no answer from the daemon";
          }
          button.disabled = false;
        }

        // One hex of the inbox or My Hexlist; its links appear when it is opened.
        function hexItem(summary, location) {
          const item = el("li", {
            "data-hex-id": summary.id, class: summary.isChecked || location !== "inbox" ? "" : "unchecked",
          });
          const links = el("ul", { class: "links" });
          const sender = summary.senderName || summary.senderUUID
            ? ["from ", summary.senderName || "(no name)", " (" + shortID(summary.senderUUID) + ") "] : [];
          const open = async () => {
            const [answer] = await control({ command: "inbox.show", id: summary.id });
            if (!answer?.ok) return problem(answer);
            links.replaceChildren(...answer.hex.links.map((link, index) => linkItem(link, index + 1, summary.id)));
            item.classList.remove("unchecked");
            refreshStatus();
          };
          const actions = location === "inbox" ? [
            el("button", { type: "button", "data-action": "check", onclick: () => act("inbox.check", summary.id) },
              "Checked"),
            el("button", { type: "button", "data-action": "save", onclick: () => act("inbox.save", summary.id) },
              "Save"),
            el("button", { type: "button", "data-action": "delete", onclick: () => act("inbox.delete", summary.id) },
              "Delete"),
          ] : [
            el("button", { type: "button", "data-action": "remove", onclick: () => act("hexlist.remove", summary.id) },
              "Remove"),
          ];
          item.append(
            swatch(summary.hexColor),
            el("div", { class: "grow" },
              el("button", { type: "button", class: "title", "data-action": "open", onclick: open },
                summary.hexDescription || "(no description)"),
              el("div", { class: "meta" }, ...sender, badge(summary.senderTrust), " · " + when(summary.timestamp),
                " · " + summary.linkCount + (summary.linkCount === 1 ? " link" : " links")),
              links),
            el("div", { class: "actions" }, ...actions));
          return item;
        }

        async function act(command, id) {
          const [answer] = await control({ command, id });
          if (!answer?.ok) return problem(answer);
          await Promise.all([loadInbox(), loadHexlist(), refreshStatus()]);
        }

        function problem(answer) {
          const message = answer?.error?.message ?? "no answer from the daemon";
          $("lost").textContent = message;
          $("lost").hidden = false;
          setTimeout(() => { if ($("lost").textContent === message) $("lost").hidden = true; }, 5000);
        }

        async function loadInbox(more = false) {
          const request = { command: "inbox.list", limit: 50 };
          if (more && state.inboxAfter) request.after = state.inboxAfter;
          const { items, more: hasMore } = await list(request, "summary");
          showInbox(items, hasMore, more);
        }

        // A page of the inbox, shown in place of the list or after it.
        function showInbox(items, hasMore, more) {
          const nodes = items.map((summary) => hexItem(summary, "inbox"));
          if (more) $("inbox-list").append(...nodes); else $("inbox-list").replaceChildren(...nodes);
          state.inboxAfter = items.length ? items[items.length - 1].id : state.inboxAfter;
          $("inbox-more").hidden = !hasMore;
          $("inbox-empty").hidden = $("inbox-list").children.length > 0;
          // The first screen is there: a mark for benchmarks (Tests/web/page-bench.py).
          if (!more && performance.getEntriesByName("inbox-shown").length === 0) performance.mark("inbox-shown");
        }

        // New hexes at the top, without touching what is already shown.
        async function loadNewHexes() {
          const { items } = await list({ command: "inbox.list", limit: 20 }, "summary");
          const shown = new Set([...$("inbox-list").children].map((node) => node.dataset.hexId));
          const fresh = items.filter((summary) => !shown.has(summary.id)).map((summary) => hexItem(summary, "inbox"));
          $("inbox-list").prepend(...fresh);
          $("inbox-empty").hidden = $("inbox-list").children.length > 0;
        }

        async function loadHexlist() {
          const { items } = await list({ command: "hexlist.list", limit: 200 }, "summary");
          $("hexlist-list").replaceChildren(...items.map((summary) => hexItem(summary, "hexlist")));
          $("hexlist-empty").hidden = items.length > 0;
        }

        function avatar(peer) {
          const words = String(peer.name || "?").trim().split(/\s+/);
          const initials = (words[0]?.[0] ?? "?") + (words.length > 1 ? words[words.length - 1][0] : "");
          let hash = 0;
          for (const character of String(peer.uuid)) hash = (hash * 31 + character.charCodeAt(0)) >>> 0;
          const element = el("span", { class: "avatar", "aria-hidden": "true" }, initials.toUpperCase());
          element.style.backgroundColor = "hsl(" + (hash % 360) + ", 55%, 42%)";
          return element;
        }

        async function loadPeers() {
          const { items } = await list({ command: "peers" }, "peer");
          $("peer-list").replaceChildren(...items.map((peer) => el("li", { "data-peer-id": peer.uuid },
            avatar(peer),
            el("div", { class: "grow" },
              el("strong", {}, peer.name || "(no name)"), " (" + shortID(peer.uuid) + ") ", badge(peer.trust),
              el("div", { class: "meta" },
                el("span", { class: peer.lastSeen < 10 ? "online" : "" }, ago(peer.lastSeen ?? Infinity)),
                " · " + (peer.endpoint ?? "") + (peer.legacy ? " · legacy" : "")),
              peer.keyMismatch ? el("div", { class: "meta" },
                "another key claims this ID from " + peer.keyMismatch.endpoint)
                : null),
            el("div", { class: "actions" },
              peer.trust === "pinned" || peer.pairable
              ? el("button", { type: "button", "data-action": "pair", onclick: () => pair(peer, false) }, "Pair")
              : null))));
          $("peers-empty").hidden = items.length > 0;
          const requests = items.filter((peer) => peer.pairing?.awaitingUs);
          $("pairing").replaceChildren(...requests.map((peer) => el("div",
            { class: "request", "data-pairing-id": peer.uuid },
            avatar(peer),
            el("div", { class: "grow" },
              el("strong", {}, peer.name || "(no name)"), " (" + shortID(peer.uuid) + ")",
              peer.pairing.offer
                ? el("span", {}, " wants to send " + peer.pairing.offer
                  + (peer.pairing.offerBy ? " by " + peer.pairing.offerBy : "")
                  + (peer.pairing.offerCheck ? ": check that " + peer.pairing.offerCheck + "." : ".")
                  + (peer.pairing.offerPairs ? " Accepting lets it in." : " Accepting takes it."))
                : el("span", {}, " asks to pair.",
                  el("div", {}, "Check that their screen shows ", el("span", { class: "code" }, peer.pairing.code)))),
            el("div", { class: "actions" },
              el("button", { type: "button", class: "primary", "data-action": "accept",
                onclick: () => pair(peer, true) }, "Accept"),
              el("button", { type: "button", "data-action": "decline", onclick: async () => {
                const [answer] = await control({ command: "pair.decline", peer: peer.uuid });
                if (!answer?.ok) problem(answer);
                await loadPeers();
              } }, "Decline")))));
          $("requests").textContent = requests.length ? String(requests.length) : "";
          const chosen = $("send-to").value;
          $("send-to").replaceChildren(...items.map((peer) =>
            el("option", { value: peer.uuid }, (peer.name || "(no name)") + " (" + shortID(peer.uuid) + ")")));
          if (items.some((peer) => peer.uuid === chosen)) $("send-to").value = chosen;
        }

        async function pair(peer, accept) {
          const [answer] = await control({ command: "pair", peer: peer.uuid, accept, timeout: 10 });
          if (!answer?.ok) return problem(answer);
          await loadPeers();
        }

        async function loadOutbox() {
          const { items } = await list({ command: "outbox.list", limit: 200 }, "outbox");
          $("outbox-list").replaceChildren(...items.map((entry) => el("li", { "data-message-id": entry.messageID },
            el("div", { class: "grow" },
              el("strong", {}, entry.kind + " to " + (entry.peer ?? entry.address ?? "?")),
              el("div", { class: "meta" }, entry.attempts + " attempts · next " + when(entry.nextAttempt)
                + " · expires " + when(entry.expires)),
              entry.lastError ? el("div", { class: "meta" }, "last error: " + entry.lastError) : null),
            el("div", { class: "actions" },
              el("button", { type: "button", onclick: () => outbox("outbox.retry", entry.messageID) }, "Retry"),
              el("button", { type: "button", onclick: () => outbox("outbox.cancel", entry.messageID) }, "Cancel")))));
          $("outbox-empty").hidden = items.length > 0;
          $("waiting").textContent = items.length ? String(items.length) : "";
        }

        async function outbox(command, id) {
          const answers = await control({ command, id });
          const failed = answers.find((answer) => !answer.ok);
          if (failed && failed.error.code !== "queued") problem(failed);
          await loadOutbox();
        }

        async function loadAlerts() {
          const { items } = await list({ command: "alerts.list", limit: 100 }, "alert");
          $("alert-list").replaceChildren(...items.map((alert) => el("li", { "data-alert-id": alert.id },
            el("div", { class: "grow" }, el("div", {}, alert.message),
              el("div", { class: "meta" }, "from " + (alert.senderID ? shortID(alert.senderID) : alert.address)
                + " · " + when(alert.timestamp))),
            el("div", { class: "actions" },
              el("button", { type: "button", onclick: async () => {
                await control({ command: "alerts.delete", id: alert.id });
                loadAlerts();
              } }, "Delete")))));
          $("alerts-empty").hidden = items.length > 0;
        }

        async function refreshStatus() {
          const [answer] = await control({ command: "status" });
          if (answer?.ok) showStatus(answer.status);
        }

        function showStatus(status) {
          $("me").replaceChildren("You are known as ", el("strong", {}, status.name),
            " (" + shortID(status.peerUUID) + ")",
            status.fingerprint ? el("span", { class: "meta" }, " · fingerprint " + status.fingerprint) : null);
          $("unchecked").textContent = status.unchecked ? String(status.unchecked) : "";
          showVisibility(status.visibility ?? { visibility: "visible" });
        }

        // Hidden: no beacons, no answers to queries; "for" is visible for a while, then hidden by itself.
        function showVisibility(report) {
          const until = report.visibleUntil ? new Date(report.visibleUntil) : null;
          $("visibility").value = until ? "for" : report.visibility;
          $("visible-until").textContent = until ? "until " + until.toLocaleTimeString() + ", then hidden" : "";
        }

        async function changeVisibility() {
          const choice = $("visibility").value;
          const request = choice === "for" ? { command: "visibility", visibility: "visible", seconds: 600 }
            : { command: "visibility", visibility: choice };
          const [answer] = await control(request);
          if (answer?.ok) showVisibility(answer.visibility);
          else refreshStatus();
        }

        async function send(event) {
          event.preventDefault();
          const result = $("send-result");
          const links = $("send-links").value.split("\n").map((line) => line.trim()).filter((line) => line)
            .map((url) => ({ url, service: "Unknown" }));
          result.className = "";
          result.textContent = "Sending…";
          let answers;
          try {
            answers = await control({ command: "send", to: $("send-to").value, links,
              description: $("send-description").value, color: $("send-color").value, timeout: 10 });
          } catch {
            result.textContent = "The daemon cannot be reached.";
            return;
          }
          const outcome = answers.find((answer) => answer.send) ?? answers.find((answer) => !answer.ok);
          if (outcome?.send) {
            result.className = outcome.send.status;
            result.textContent = outcome.send.status + ": " + (outcome.send.message ?? "") + " ("
              + outcome.send.milliseconds + " ms)";
            $("send-links").value = "";
          } else if (outcome?.error?.code === "queued") {
            result.className = "queued";
            result.textContent = "queued: " + outcome.error.message;
          } else {
            result.className = "refused";
            result.textContent = "refused: " + (outcome?.error?.message ?? "no answer");
          }
          loadOutbox();
        }

        function show(view) {
          const name = ["inbox", "hexlist", "peers", "send", "outbox", "alerts"].includes(view) ? view : "inbox";
          for (const section of document.querySelectorAll("main > section"))
            section.hidden = section.id !== "view-" + name;
          for (const link of document.querySelectorAll("nav a"))
            link.classList.toggle("current", link.dataset.view === name);
        }

        function applyTheme(theme) {
          document.documentElement.dataset.theme = theme;
          $("theme").value = theme;
        }

        // Runs a reload at once; those asked for while it runs (a burst of events) make one more run.
        function coalesced(load) {
          let running = false;
          let again = false;
          return async () => {
            if (running) { again = true; return; }
            running = true;
            do {
              again = false;
              try { await load(); } catch { /* the event stream reports a lost daemon */ }
            } while (again);
            running = false;
          };
        }

        const reload = {
          inbox: coalesced(async () => { await loadNewHexes(); await refreshStatus(); }),
          peers: coalesced(loadPeers),
          outbox: coalesced(loadOutbox),
          alerts: coalesced(loadAlerts),
        };

        // The first screen (who you are, the inbox) first; the other views while it is looked at.
        async function loadAll() {
          await Promise.all([refreshStatus(), loadInbox()]);
          await loadOtherViews();
        }

        function loadOtherViews() {
          return Promise.all([loadHexlist(), loadPeers(), loadOutbox(), loadAlerts()]);
        }

        // The first screen as the document brought it (the control API's lines for status and the
        // inbox's first page, in a data block): shown without a round trip. False when it is not there.
        function showFirstScreen() {
          const block = $("first-screen");
          if (!block) return false;
          let first;
          try { first = JSON.parse(block.textContent); } catch { return false; }
          const status = first.status?.status;
          const items = (first.inbox ?? []).filter((line) => line.ok && line.summary).map((line) => line.summary);
          const end = (first.inbox ?? []).find((line) => line.end)?.end;
          if (!status || !end) return false;
          showStatus(status);
          showInbox(items, end.more, false);
          return true;
        }

        // Events as they happen. Once the stream is open, what changed while it opened (or while the
        // daemon was lost) is read again.
        function follow() {
          const events = new EventSource("/events");
          events.onopen = () => {
            $("lost").hidden = true;
            document.body.dataset.live = "true";
            Object.values(reload).forEach((load) => load());
          };
          events.onerror = () => {
            $("lost").textContent = "Lost the daemon: trying again…";
            $("lost").hidden = false;
            document.body.dataset.live = "false";
            // A refused stream (a new token) is not retried by the browser itself.
            if (events.readyState === EventSource.CLOSED) setTimeout(follow, 2000);
          };
          events.onmessage = (message) => {
            let event;
            try { event = JSON.parse(message.data).event; } catch { return; }
            if (!event) return;
            const kind = event.kind;
            if (kind === "hexReceived") reload.inbox();
            else if (["peerFound", "peerLost", "pairRequested", "paired", "peerKeyMismatch"].includes(kind))
              reload.peers();
            else if (kind.startsWith("send")) reload.outbox();
            else if (kind === "alertReceived") reload.alerts();
            else if (kind === "visibilityChanged") refreshStatus();
          };
        }

        document.addEventListener("DOMContentLoaded", () => {
          applyTheme(localStorage.getItem("hexd-theme") ?? "auto");
          $("theme").addEventListener("change", () => {
            localStorage.setItem("hexd-theme", $("theme").value);
            applyTheme($("theme").value);
          });
          $("send-form").addEventListener("submit", send);
          $("visibility").addEventListener("change", () => changeVisibility().catch(refreshStatus));
          $("inbox-more").addEventListener("click", () => loadInbox(true));
          window.addEventListener("hashchange", () => show(location.hash.slice(1)));
          show(location.hash.slice(1));
          (showFirstScreen() ? loadOtherViews() : loadAll()).catch(() => {});
          follow();
        });
        """#
}
