import HexCarrier
import HexCommandLine
import HexDaemon
import HexKit

let description = """
    hexd exchanges hexes (named bundles of links) with peers on the local network. It announces
    itself by UDP broadcast, keeps a table of the peers it hears, stores the hexes peers send it
    over TCP in its inbox and acknowledges them, and takes commands from hexctl over a Unix socket
    in its data directory. It runs until SIGTERM or SIGINT, then says goodbye to its peers and
    exits 0. Logs go to standard error, one line per event (--log-format). 'hexctl visibility
    hidden' stops its beacons (a peer that knows its address still reaches it), and outlives a restart;
    after a minute with no peer heard, hexd logs which ports a firewall must let in (UDP
    --discovery-port, TCP --port).

    Every option can also be set as HEXD_<NAME> in the environment (HEXD_DATA_DIR, HEXD_PORT, ...;
    repeatable ones comma-separated) or as a "<name> = <value>" line in the config file. A flag
    wins over the environment, which wins over the file, which wins over the default.

    Every peer, and anything else on the network, is held to budgets (the options from --idle-timeout
    to --beacon-rate; Protocol.md, section 11): past one, the offender is cut off and logged at a
    bounded rate, and everyone else is served on. The data directory must belong to the user
    running hexd; it is made private (0700, its files 0600).

    A hex is acknowledged only once it is synced to disk: an acked hex survives a power cut. What
    senders may keep in the inbox is bounded (--inbox-budget, --sender-budget, --strangers-budget;
    paired peers are held to the first alone), and so is what hexd stores as the disk fills
    (--min-free, --min-free-hard; Protocol.md, section 11.1): past a budget a hex is refused
    (rejected), below a floor it is refused until space returns (failed: the sender retries), and
    nothing stored is evicted. On a full disk hexd still starts and answers hexctl, helped by its
    reserve file (--disk-reserve).
    """

let exitCodes = """
    EXIT CODES: 0 stopped by a signal, 64 usage error, 1 cannot start (a port in use, another hexd
    on the same data directory, a data directory of another user, a damaged database or one from
    a newer hexd, ...).
    """

let help = """
    USAGE: hexd [<options>]

    \(description)

    OPTIONS:
    \(optionsHelp(DaemonConfiguration.options))

    \(exitCodes)
    """

/// hexd(8), from the same option table as --help.
let manual = ManualPage(
    name: "hexd", section: 8, summary: "exchange bundles of links with machines on the local network",
    synopsis: ["hexd [options]"],
    description: description,
    sections: [
        (title: "Options", entries: DaemonConfiguration.options.map { ($0.synopsis, $0.help) }, text: ""),
        (title: "Exit status", entries: [], text: exitCodes.split(separator: "\n").joined(separator: " ")),
        (
            title: "Files",
            entries: [
                ("<data-dir>/hexd.sqlite", "The database: inbox, My Hexlist, block list, peers seen."),
                ("<data-dir>/hexd.sock", "The control socket hexctl talks to."),
                ("<data-dir>/hexd.lock", "Held while a daemon runs on the data directory."),
                ("<data-dir>/hexd.conf", "The config file read when --config is not given."),
                ("<data-dir>/space.reserve", "Space held back for a full disk (--disk-reserve)."),
                ("<data-dir>/identity.key, identity.crt", "This device's Ed25519 key and certificate (hexd peers)."),
                ("<data-dir>/localsend.key, localsend.crt", "The RSA key and certificate shown to LocalSend devices."),
                (
                    "<data-dir>/kdeconnect.key, kdeconnect.crt",
                    "The EC P-256 key and certificate shown to KDE Connect devices (common name: the device ID)."
                ),
                ("<data-dir>/on-receive/", "The on-receive command's standard input, a file per hex while it runs."),
            ], text: ""
        ),
        (title: "See also", entries: [], text: "hexctl(1); Protocol.md and README.md in hexd's sources."),
    ]
).troff

do {
    switch try DaemonConfiguration.resolve(
        arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
    {
    case .help:
        print(help)
    case .version:
        print(HexdVersion.current)
    case .manual:
        print(manual, terminator: "")
    case .run(let configuration):
        let logger = Logger(level: configuration.logLevel, format: configuration.logFormat)
        do {
            try await Daemon.run(configuration, logger: logger)
        } catch {
            exit(.failure, program: "hexd", message: "\(error)")
        }
    }
} catch {
    exit(.usage, program: "hexd", message: "\(error); see hexd --help")
}
