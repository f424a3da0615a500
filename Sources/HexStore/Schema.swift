/// The schema of hexd's database, as a list of migrations applied in order on open.
///
/// The database's `PRAGMA user_version` is the last migration applied. Append new migrations;
/// never edit one that has shipped.
public enum Schema {
    public static let migrations: [Migration] = [
        Migration(
            version: 1,
            sql: """
                -- Times are REAL seconds since 2001-01-01 UTC (Foundation's reference date), which
                -- reads back as exactly the Date that was written.
                CREATE TABLE hex (
                    id TEXT PRIMARY KEY,
                    location TEXT NOT NULL CHECK (location IN ('inbox', 'myHexlist')),
                    position INTEGER NOT NULL,   -- order within the location, ascending = top first
                    sender_uuid TEXT NOT NULL,
                    sender_name TEXT NOT NULL,
                    description TEXT NOT NULL,
                    color TEXT NOT NULL,
                    created_at REAL NOT NULL,    -- when received or created
                    checked INTEGER NOT NULL
                );
                CREATE INDEX hex_by_location ON hex (location, position);
                CREATE TABLE link (
                    hex_id TEXT NOT NULL REFERENCES hex (id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    id TEXT NOT NULL,
                    url TEXT NOT NULL,
                    description TEXT NOT NULL,
                    service TEXT NOT NULL,
                    PRIMARY KEY (hex_id, position)
                );
                CREATE TABLE blocked_sender (
                    sender_uuid TEXT PRIMARY KEY,  -- uppercase
                    blocked_at REAL NOT NULL
                );
                -- Every messageID whose hex was stored, so a re-sent envelope is answered "duplicate".
                CREATE TABLE received_message (
                    message_id TEXT PRIMARY KEY,
                    hex_id TEXT NOT NULL,
                    received_at REAL NOT NULL
                );
                CREATE TABLE peer_seen (
                    peer_uuid TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    version_id TEXT NOT NULL,
                    address TEXT NOT NULL,
                    first_seen REAL NOT NULL,
                    last_seen REAL NOT NULL
                );
                -- Envelopes waiting to be delivered to a peer (filled by the daemon's sender).
                CREATE TABLE outbox (
                    message_id TEXT PRIMARY KEY,
                    destination TEXT NOT NULL,
                    envelope TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    last_error TEXT
                );
                CREATE TABLE setting (
                    key TEXT PRIMARY KEY,
                    value TEXT NOT NULL
                );
                """),
        Migration(
            version: 2,
            sql: """
                -- Sightings are pruned oldest first (HexDatabase.pruneSightings).
                CREATE INDEX peer_seen_by_last_seen ON peer_seen (last_seen);
                """),
        Migration(
            version: 3,
            sql: """
                -- Each peer UUID bound to the key its device proves over TLS (Protocol.md, section 12);
                -- a key belongs to one UUID at most.
                CREATE TABLE peer_key (
                    peer_uuid TEXT PRIMARY KEY,    -- uppercase
                    fingerprint TEXT NOT NULL UNIQUE,  -- SHA-256 of the certificate, lowercase hex
                    trust TEXT NOT NULL CHECK (trust IN ('pinned', 'paired')),
                    pinned_at REAL NOT NULL
                );
                -- How a received hex's sender was known: 'paired', 'pinned' or 'plaintext';
                -- NULL for the user's own hexes and those received before this column.
                ALTER TABLE hex ADD COLUMN sender_trust TEXT;
                """),
        Migration(
            version: 4,
            sql: """
                -- The outbox of version 1 was never written to; this one is (HexDatabase+Outbox.swift).
                DROP TABLE outbox;
                -- Sends not yet acknowledged, each kept until its peer acks it, it fails for good or it expires.
                CREATE TABLE outbox (
                    message_id TEXT PRIMARY KEY,   -- uppercase UUID, the envelope's messageID on every attempt
                    peer_uuid TEXT,                -- the peer, followed wherever it announces itself; or NULL
                    address TEXT,                  -- HOST:PORT the user typed, which the send stays at; or NULL
                    label TEXT NOT NULL,           -- the destination as the user reads it
                    kind TEXT NOT NULL CHECK (kind IN ('hex', 'alert')),
                    envelope TEXT NOT NULL,        -- the envelope line, as a current peer gets it
                    size INTEGER NOT NULL,         -- bytes of envelope
                    legacy INTEGER NOT NULL,       -- sent as to a 1.x peer whatever the peer announces
                    created_at REAL NOT NULL,
                    expires_at REAL NOT NULL,
                    attempts INTEGER NOT NULL,
                    next_attempt_at REAL NOT NULL,
                    last_error TEXT,
                    CHECK (peer_uuid IS NOT NULL OR address IS NOT NULL)
                );
                CREATE INDEX outbox_by_next_attempt ON outbox (next_attempt_at);
                -- Every new or restarted peer makes its sends due (Outbox.followBeacons): a lookup,
                -- not a scan, even while a flood of invented peers is heard.
                CREATE INDEX outbox_by_peer ON outbox (peer_uuid);
                """),
        Migration(
            version: 5,
            sql: """
                -- status counts every location's hexes, checked and not, from this index alone
                -- (HexDatabase.counts), however many hexes are stored.
                CREATE INDEX hex_by_location_checked ON hex (location, checked);
                """),
        Migration(
            version: 6,
            sql: """
                -- What each hex counts against the inbox's budgets (Hex.storedBytes: 256 per hex and
                -- 128 per link beside the UTF-8 bytes of their strings), and whose share it is:
                -- 'key:<device ID>' over TLS, 'address:<IP>' over plaintext; NULL for the user's own.
                ALTER TABLE hex ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE hex ADD COLUMN account TEXT;
                UPDATE hex SET size = 256 + length(CAST(sender_uuid AS BLOB)) + length(CAST(sender_name AS BLOB))
                        + length(CAST(description AS BLOB)) + length(CAST(color AS BLOB))
                        + COALESCE((SELECT SUM(128 + length(CAST(url AS BLOB)) + length(CAST(link.description AS BLOB))
                                               + length(CAST(service AS BLOB)))
                                    FROM link WHERE hex_id = hex.id), 0),
                    account = CASE
                        WHEN location = 'myHexlist' THEN NULL
                        -- The address of a plaintext hex was not recorded: its share is its UUID's.
                        WHEN sender_trust IN ('new', 'pinned', 'paired') THEN 'key:' || sender_uuid
                        ELSE 'sender:' || sender_uuid
                    END;
                """),
        Migration(
            version: 7,
            sql: """
                -- Alerts received, kept until the user deletes them; they count against the inbox's
                -- budgets like hexes (ReceivedAlert.storedBytes), in the same accounts.
                CREATE TABLE alert (
                    id TEXT PRIMARY KEY,           -- uppercase UUID
                    message TEXT NOT NULL,
                    sender_id TEXT,                -- the device ID its TLS connection proved; NULL over plaintext
                    address TEXT NOT NULL,         -- the IP address it came from
                    received_at REAL NOT NULL,
                    size INTEGER NOT NULL,
                    account TEXT NOT NULL
                );
                CREATE INDEX alert_by_time ON alert (received_at, id);
                """),
        Migration(
            version: 8,
            sql: """
                -- Files shared with one peer each (the peer link provider, FileGrant): the link names
                -- the id; only the recipient's key redeems it, while the file still hashes the same.
                CREATE TABLE file_grant (
                    id TEXT PRIMARY KEY,           -- 32 lowercase hex digits
                    path TEXT NOT NULL,
                    name TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    sha256 TEXT NOT NULL,
                    recipient_id TEXT NOT NULL,    -- the device ID that may fetch it, uppercase
                    recipient_name TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    expires_at REAL NOT NULL,
                    revoked_at REAL,
                    fetches INTEGER NOT NULL DEFAULT 0,
                    last_fetched_at REAL,
                    file_device INTEGER NOT NULL,  -- FileIdentity, each UInt64 as its Int64 bit pattern
                    file_inode INTEGER NOT NULL,
                    file_modified INTEGER NOT NULL
                );
                CREATE INDEX grant_by_time ON file_grant (created_at, id);
                """),
        Migration(
            version: 9,
            sql: """
                -- Links keyed by their hex's row number, which only grows, not by its random UUID: a
                -- new hex's links go at the end of the link table and its index, where before they
                -- went into the middle of both (a 100,000-link hex took 300 ms to store beside
                -- 100,000 others, 60 ms into an empty store). The row is a declared INTEGER PRIMARY
                -- KEY, which VACUUM keeps (it may renumber an implicit rowid).
                CREATE TABLE hex_by_row (
                    row INTEGER PRIMARY KEY,
                    id TEXT NOT NULL UNIQUE,
                    location TEXT NOT NULL CHECK (location IN ('inbox', 'myHexlist')),
                    position INTEGER NOT NULL,
                    sender_uuid TEXT NOT NULL,
                    sender_name TEXT NOT NULL,
                    description TEXT NOT NULL,
                    color TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    checked INTEGER NOT NULL,
                    sender_trust TEXT,
                    size INTEGER NOT NULL DEFAULT 0,
                    account TEXT
                );
                INSERT INTO hex_by_row (row, id, location, position, sender_uuid, sender_name, description, color,
                                        created_at, checked, sender_trust, size, account)
                    SELECT rowid, id, location, position, sender_uuid, sender_name, description, color, created_at,
                           checked, sender_trust, size, account
                    FROM hex ORDER BY rowid;
                CREATE TABLE link_by_row (
                    hex_row INTEGER NOT NULL REFERENCES hex_by_row (row) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    id TEXT NOT NULL,
                    url TEXT NOT NULL,
                    description TEXT NOT NULL,
                    service TEXT NOT NULL,
                    PRIMARY KEY (hex_row, position)
                );
                INSERT INTO link_by_row (hex_row, position, id, url, description, service)
                    SELECT hex_by_row.row, link.position, link.id, link.url, link.description, link.service
                    FROM link JOIN hex_by_row ON hex_by_row.id = link.hex_id ORDER BY hex_by_row.row, link.position;
                DROP TABLE link;
                DROP TABLE hex;
                ALTER TABLE hex_by_row RENAME TO hex;
                ALTER TABLE link_by_row RENAME TO link;
                CREATE INDEX hex_by_location ON hex (location, position);
                CREATE INDEX hex_by_location_checked ON hex (location, checked);
                """),
    ]
}
