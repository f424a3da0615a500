import Foundation
import HexCommandLine
import HexHarness
import HexKit
import HexStore

/// A receiving hexd's state as the tests need it: a real database file in a temporary directory
/// and the HexManager over it.
public final class Receiver {
    /// The display name the receiver's identity has (it appears in the blocked-sender Alert).
    public static let name = "Example Receiver"

    public let directory: TemporaryDirectory
    public let database: HexDatabase
    public var manager: HexManager
    /// How a current hexd answers what it receives.
    public let dialect = Dialect(.current)

    public init(accepting policy: AcceptPolicy = .anyone) throws {
        directory = try TemporaryDirectory()
        database = try HexDatabase(path: directory.file(DataDirectory.databaseName))
        manager = HexManager(
            repository: database, identity: try database.localIdentity(name: Self.name).identity,
            versionID: HexdVersion.current, accepting: policy)
    }

    /// Decodes one line and has the manager act on it, as the daemon does for a line from a peer.
    public func receive(line: String) throws -> ReceiveOutcome {
        try manager.receive(try Envelope.decode(from: Array(line.utf8)))
    }
}

extension Receiver {
    /// Creates hexd's database in `directory` (as a daemon would) and returns its path.
    public static func makeDatabase(in directory: String) throws -> String {
        let path = directory + "/" + DataDirectory.databaseName
        _ = try HexDatabase(path: path)
        return path
    }

    /// Fills a database with enough hexes for many pages, then writes garbage over the start of a
    /// page in its middle (the header on page 1 stays whole, so SQLite still opens the file).
    public static func damageDatabase(at path: String) throws {
        do {
            let database = try HexDatabase(path: path)
            for index in 0..<300 {
                _ = try database.insert(
                    Hex(
                        location: .inbox, senderUUID: "S", senderName: "N", hexDescription: "hex \(index)",
                        hexColor: "#AAAAAA",
                        links: [Link(url: String(repeating: "u", count: 200), linkDescription: "d", service: .unknown)],
                        isChecked: false),
                    messageID: nil)
            }
        }
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let pageSize: UInt64 = 4_096
        try handle.seek(toOffset: pageSize * 10)
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 64))
    }

    /// Sets the schema version of a database file, as a newer hexd would have left it.
    public static func setUserVersion(_ version: Int, path: String) throws {
        try SQLiteConnection(path: path).execute("PRAGMA user_version = \(version)")
    }
}
