/// The page's document: its frame only; the script fills it from the control API.
enum PageHTML {
    static let text = #"""
        <!doctype html>
        <html lang="en" data-theme="auto">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>hexd</title>
        <link rel="icon" href="/icon.svg">
        <link rel="stylesheet" href="/app.css">
        <script src="/app.js" defer></script>
        </head>
        <body>
        <header>
          <h1><img src="/icon.svg" alt="" width="28" height="28"> hexd</h1>
          <p id="me">Connecting to the daemon…</p>
          <label class="visibility">Visibility
            <select id="visibility">
              <option value="visible">Visible</option>
              <option value="hidden">Hidden</option>
              <option value="for">Visible for 10 minutes</option>
            </select>
            <span id="visible-until" class="meta"></span>
          </label>
          <label class="theme">Theme
            <select id="theme">
              <option value="auto">Automatic</option>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
            </select>
          </label>
        </header>
        <div id="lost" class="banner" role="alert" hidden>Lost the daemon: trying again…</div>
        <nav>
          <a href="#inbox" data-view="inbox">Inbox <span id="unchecked" class="count"></span></a>
          <a href="#hexlist" data-view="hexlist">My Hexlist</a>
          <a href="#peers" data-view="peers">Peers <span id="requests" class="count"></span></a>
          <a href="#send" data-view="send">Send</a>
          <a href="#outbox" data-view="outbox">Outbox <span id="waiting" class="count"></span></a>
          <a href="#alerts" data-view="alerts">Alerts</a>
        </nav>
        <main>
        <!--first-screen-->
          <section id="view-inbox">
            <h2>Inbox</h2>
            <p class="empty" id="inbox-empty" hidden>Nothing has arrived yet.</p>
            <ul id="inbox-list" class="hexes"></ul>
            <button id="inbox-more" type="button" hidden>Show more</button>
          </section>
          <section id="view-hexlist" hidden>
            <h2>My Hexlist</h2>
            <p class="empty" id="hexlist-empty" hidden>Save a hex from the inbox to keep it here.</p>
            <ul id="hexlist-list" class="hexes"></ul>
          </section>
          <section id="view-peers" hidden>
            <h2>Peers</h2>
            <div id="pairing"></div>
            <p class="empty" id="peers-empty" hidden>No peer seen yet.</p>
            <ul id="peer-list" class="peers"></ul>
          </section>
          <section id="view-send" hidden>
            <h2>Send a hex</h2>
            <form id="send-form">
              <label>To <select id="send-to" required></select></label>
              <label>Links, one per line <textarea id="send-links" rows="4" required></textarea></label>
              <label>Description <input id="send-description" maxlength="1000"></label>
              <label>Colour <input id="send-color" type="color" value="#3498db"></label>
              <button type="submit">Send</button>
            </form>
            <p id="send-result" role="status"></p>
          </section>
          <section id="view-outbox" hidden>
            <h2>Outbox</h2>
            <p class="empty" id="outbox-empty" hidden>Every send was delivered.</p>
            <ul id="outbox-list" class="entries"></ul>
          </section>
          <section id="view-alerts" hidden>
            <h2>Alerts</h2>
            <p class="empty" id="alerts-empty" hidden>No alert kept.</p>
            <ul id="alert-list" class="entries"></ul>
          </section>
        </main>
        </body>
        </html>
        """#

    static let icon = #"""
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">\#
        <path fill="#3498db" d="M16 2l12 7v14l-12 7-12-7V9z"/>
        <path fill="#fff" d="M11 10h3v5h4v-5h3v12h-3v-4h-4v4h-3z"/></svg>
        """#
}
