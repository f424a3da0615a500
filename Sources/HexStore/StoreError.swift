import HexKit

/// Why the database could not be opened or used.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The file was written by a newer hexd. It was not modified.
    case newerSchema(path: String, found: Int, supported: Int)
    /// `PRAGMA quick_check` found the file damaged (its first findings). It was not modified.
    case damaged(path: String, findings: [String])
    /// SQLite reported an error (for example: the file is not a database, the disk is full).
    case sqlite(SQLiteError)

    public var description: String {
        switch self {
        case .newerSchema(let path, let found, let supported):
            "\(path) has schema version \(found), newer than the \(supported) this hexd knows; "
                + "it was left untouched: run a newer hexd, or use another data directory"
        case .damaged(let path, let findings):
            "\(path) is damaged "
                + "(SQLite's quick_check: \(findings.prefix(3).joined(separator: "; ").clipped(toUTF8: 400))); "
                + "hexd will not serve it. "
                + "It was left untouched. Move it aside and start afresh, or recover what it holds with: "
                + "sqlite3 \(path) .recover | sqlite3 recovered.sqlite, then move recovered.sqlite in its place"
        case .sqlite(let error):
            error.description
        }
    }
}
