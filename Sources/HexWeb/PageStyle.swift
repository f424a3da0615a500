/// The page's style sheet: light and dark colours, chosen by the user or by the system.
enum PageStyle {
    static let text = #"""
        :root {
          --bg: #f6f7f9; --fg: #1d2330; --muted: #5f6b7a; --card: #ffffff; --line: #dde2e8;
          --accent: #2471c8; --new: #fff5d6; --bad: #b3261e; --good: #1e7b34;
          color-scheme: light;
        }
        html[data-theme="dark"] {
          --bg: #14171c; --fg: #e4e8ee; --muted: #98a3b3; --card: #1e232b; --line: #323a46;
          --accent: #6aa9ff; --new: #3a3320; --bad: #ff8a80; --good: #7bd88f;
          color-scheme: dark;
        }
        @media (prefers-color-scheme: dark) {
          html[data-theme="auto"] {
            --bg: #14171c; --fg: #e4e8ee; --muted: #98a3b3; --card: #1e232b; --line: #323a46;
            --accent: #6aa9ff; --new: #3a3320; --bad: #ff8a80; --good: #7bd88f;
            color-scheme: dark;
          }
        }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.45 system-ui, sans-serif; background: var(--bg); color: var(--fg); }
        header { display: flex; flex-wrap: wrap; align-items: center; gap: 0 1.5em; padding: 0.6em 1.2em;
          border-bottom: 1px solid var(--line); background: var(--card); }
        header h1 { margin: 0; font-size: 1.3em; display: flex; align-items: center; gap: 0.3em; }
        #me { margin: 0; color: var(--muted); flex: 1; overflow-wrap: anywhere; }
        .theme, .visibility { color: var(--muted); }
        .banner { padding: 0.5em 1.2em; background: var(--bad); color: #fff; }
        nav { display: flex; flex-wrap: wrap; gap: 0.3em; padding: 0.5em 1.2em; }
        nav a { padding: 0.3em 0.8em; border-radius: 1em; color: var(--fg); text-decoration: none; }
        nav a.current { background: var(--accent); color: #fff; }
        .count:empty { display: none; }
        .count { display: inline-block; min-width: 1.4em; padding: 0 0.4em; border-radius: 0.7em;
          background: var(--bad); color: #fff; font-size: 0.8em; text-align: center; }
        main { max-width: 60em; padding: 0 1.2em 2em; }
        h2 { font-size: 1.1em; }
        ul { list-style: none; padding: 0; margin: 0; }
        .hexes li, .peers li, .entries li, .request { display: flex; gap: 0.8em; align-items: flex-start;
          padding: 0.7em; margin-bottom: 0.5em; background: var(--card); border: 1px solid var(--line);
          border-radius: 8px; }
        .hexes li.unchecked { background: var(--new); border-color: var(--accent); }
        .swatch { flex: none; width: 1.2em; height: 2.4em; border-radius: 4px; background: var(--line); }
        .grow { flex: 1; min-width: 0; overflow-wrap: anywhere; }
        .title { background: none; border: none; padding: 0; font: inherit; font-weight: 600; color: var(--fg);
          cursor: pointer; text-align: left; overflow-wrap: anywhere; }
        .meta { color: var(--muted); font-size: 0.9em; }
        .badge { display: inline-block; padding: 0 0.5em; border-radius: 0.6em; border: 1px solid currentColor;
          font-size: 0.8em; }
        .badge.paired { color: var(--good); }
        .badge.new, .badge.plaintext { color: var(--bad); }
        .links { margin-top: 0.4em; }
        .links li { display: block; padding: 0.15em 0; margin: 0; border: none; background: none; }
        .links a { color: var(--accent); }
        .inert { font-family: ui-monospace, monospace; color: var(--muted); }
        .actions { display: flex; flex-wrap: wrap; justify-content: flex-end; gap: 0.3em; }
        button { font: inherit; padding: 0.25em 0.8em; border-radius: 6px; border: 1px solid var(--line);
          background: var(--card); color: var(--fg); cursor: pointer; }
        button.primary, form button { background: var(--accent); border-color: var(--accent); color: #fff; }
        .avatar { flex: none; width: 2.6em; height: 2.6em; border-radius: 50%; display: grid; place-items: center;
          color: #fff; font-weight: 700; }
        .online { color: var(--good); }
        .code { font-family: ui-monospace, monospace; font-size: 1.3em; letter-spacing: 0.1em; }
        form { display: grid; gap: 0.7em; max-width: 32em; }
        label { display: grid; gap: 0.2em; }
        input, select, textarea { font: inherit; padding: 0.35em; border-radius: 6px; border: 1px solid var(--line);
          background: var(--card); color: var(--fg); }
        input[type="color"] { padding: 0; height: 2.2em; width: 4em; }
        #send-result.stored, #send-result.duplicate { color: var(--good); }
        #send-result.refused { color: var(--bad); }
        .empty { color: var(--muted); }
        """#
}
