/// Why the database could not be opened or used.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The file was written by a newer hexd. It was not modified.
    case newerSchema(path: String, found: Int, supported: Int)
    /// SQLite reported an error (for example: the file is not a database, the disk is full).
    case sqlite(SQLiteError)

    public var description: String {
        switch self {
        case .newerSchema(let path, let found, let supported):
            "\(path) has schema version \(found), newer than the \(supported) this hexd knows; "
                + "it was left untouched: run a newer hexd, or use another data directory"
        case .sqlite(let error):
            error.description
        }
    }
}
