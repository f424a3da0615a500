import HexCommandLine
import HexKit
import HexStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let help = """
    USAGE: hexd [--data-dir <path>] [--name <name>]

    hexd keeps a database of hexes (bundles of links) and exchanges them with peers.

    This build prepares the data directory: it creates it, opens or creates the database,
    migrates its schema, creates the stable peer UUID on first run, prints the identity and
    inbox counts, and exits. Discovery and transfer between peers are not in this build yet.

    OPTIONS:
      --data-dir <path>   Where hexd keeps its state. Default: $HEXD_DATA_DIR, else
                          $XDG_DATA_HOME/hexd, else ~/.local/share/hexd.
      --name <name>       Display name sent with every hex (stored; kept until changed).
      --version           Show the version.
      -h, --help          Show this help.

    EXIT CODES: 0 ok, 64 usage error, 1 the data directory or database cannot be used.
    """

/// Prints `message` on stderr and exits with `code`.
func fail(_ message: String, code: ExitCode) -> Never {
    exit(code, program: "hexd", message: message)
}

var dataDirFlag: String?
var nameFlag: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "-h", "--help":
        print(help)
        exit(0)
    case "--version":
        print(HexdVersion.current)
        exit(0)
    case "--data-dir", "--name":
        guard let value = arguments.popFirst() else { fail("\(argument) needs a value\n\(help)", code: .usage) }
        if argument == "--data-dir" { dataDirFlag = value } else { nameFlag = value }
    default:
        fail("unknown argument '\(argument)'; see hexd --help", code: .usage)
    }
}

let environment = ProcessInfo.processInfo.environment
let dataDirectory = DataDirectory(explicit: dataDirFlag, environment: environment)
do {
    try dataDirectory.create()
    let database = try HexDatabase(path: dataDirectory.databasePath)
    let identity = try database.localIdentity(name: nameFlag)
    let manager = HexManager(repository: database, identity: identity, versionID: HexdVersion.current)
    print("hexd \(HexdVersion.current): data directory \(dataDirectory.path), schema \(try database.schemaVersion())")
    print("identity: \(identity.name) (\(identity.uuid))")
    print("inbox: \(try manager.inbox().count) hexes, \(try manager.uncheckedCount()) unchecked; My Hexlist: \(try manager.myHexlist().count) hexes")
} catch {
    fail("\(error)", code: .failure)
}
