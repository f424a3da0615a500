// swift-tools-version:6.3
import PackageDescription

/// hexd: a peer-to-peer daemon that exchanges bundles of links ("hexes") on a LAN.
///
/// Dependencies point one way: executables -> HexDaemon -> each protocol's carrier (KDEConnectCarrier,
/// LocalSendCarrier, QuickShareCarrier) -> HexCarrier (the seam) and the protocol's core (KDEConnectCore,
/// LocalSendCore, QuickShareCore: wire types and machines, no I/O) -> HexEngine, HexStore, HexTLS, HexDBus,
/// HexDNS, HexNet, HexControl, HexWeb -> HexKit -> HexJSON (HexTLS, HexDBus -> HexNet); CSQLite, COpenSSL and
/// CLinux are system libraries. HexCommandLine holds what the executables share (option parsing, exit codes,
/// output, the data directory's layout); hexctl does not link SQLite.
/// The package takes no package dependencies: toolchain and system libraries only. It is for Linux
/// only: sockets wait on epoll, and the system calls are Glibc's (README, "Platforms").
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "hexd",
    products: [
        .executable(name: "hexd", targets: ["hexd"]),
        .executable(name: "hexctl", targets: ["hexctl"]),
        .executable(name: "hexbench", targets: ["hexbench"]),
        .library(name: "HexKit", targets: ["HexKit"]),
        .library(name: "HexStore", targets: ["HexStore"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // Linux calls Swift's Glibc module leaves out (epoll, eventfd, accept4, pipe2, pidfd_open, mallopt).
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .target(name: "HexJSON", swiftSettings: strictSettings),
        .target(name: "HexKit", dependencies: ["HexJSON"], swiftSettings: strictSettings),
        // The daemon's decisions as pure state machines (event in, actions out, the clock passed in):
        // it depends on HexKit alone, so nothing in it can open a socket or a database.
        .target(name: "HexEngine", dependencies: ["HexKit"], swiftSettings: strictSettings),
        .target(name: "HexStore", dependencies: ["HexKit", "CSQLite"], swiftSettings: strictSettings),
        .target(name: "HexNet", dependencies: ["CLinux"], swiftSettings: strictSettings),
        .target(name: "HexTLS", dependencies: ["COpenSSL", "HexNet"], swiftSettings: strictSettings),
        .target(name: "HexControl", dependencies: ["HexJSON", "HexKit", "HexNet"], swiftSettings: strictSettings),
        .target(name: "HexCommandLine", swiftSettings: strictSettings),
        // HTTP/1.1: pure request and response readers, a request writer, the page's access rules and files.
        .target(name: "HexWeb", swiftSettings: strictSettings),
        // A D-Bus client: the wire format as pure code, and a connection on HexNet's sockets.
        .target(name: "HexDBus", dependencies: ["HexNet"], swiftSettings: strictSettings),
        // DNS messages as mDNS and DNS-SD use them: pure code, read from any bytes without trapping.
        .target(name: "HexDNS", swiftSettings: strictSettings),
        // Quick Share's wire and handshake as pure code: a protocol buffers reader and writer, its frames,
        // UKEY2 and the secure channel (libcrypto's primitives, no sockets), read from any bytes without trapping.
        .target(
            name: "QuickShareCore", dependencies: ["COpenSSL"], path: "Sources/QuickShare/Core",
            swiftSettings: strictSettings),
        // LocalSend's wire (announcements, upload offers and sessions, answers) and its machines (presence,
        // reception, the PIN gate) as pure code over HexKit and HexEngine: read from any bytes without trapping.
        .target(
            name: "LocalSendCore", dependencies: ["HexJSON", "HexKit", "HexEngine"], path: "Sources/LocalSend/Core",
            swiftSettings: strictSettings),
        // KDE Connect's packets (identity, pair, share, ping) and its machines (links, pairing) as pure code.
        .target(
            name: "KDEConnectCore", dependencies: ["HexJSON", "HexKit", "HexEngine"], path: "Sources/KDEConnect/Core",
            swiftSettings: strictSettings),
        // What a carrier of another protocol is to hexd (sending, trust, DNS-SD), and what hexd lends
        // every carrier: its log and events, the handshake gate, the downloads folder, persona claims.
        .target(
            name: "HexCarrier",
            dependencies: [
                "CLinux", "HexJSON", "HexKit", "HexEngine", "HexNet", "HexTLS", "HexCommandLine", "HexWeb", "HexDNS",
            ],
            swiftSettings: strictSettings),
        // hexd as a Quick Share device: the driver of QuickShareCore's machines, known to the daemon
        // by one factory.
        .target(
            name: "QuickShareCarrier",
            dependencies: [
                "HexCarrier", "HexCommandLine", "HexEngine", "HexKit", "HexNet", "HexDBus", "QuickShareCore",
            ],
            path: "Sources/QuickShare/Carrier", swiftSettings: strictSettings),
        // hexd as a LocalSend device: its announcements, its HTTPS API and its requests to LocalSend
        // devices, known to the daemon by one factory.
        .target(
            name: "LocalSendCarrier",
            dependencies: [
                "HexCarrier", "HexCommandLine", "HexEngine", "HexKit", "HexNet", "HexTLS", "HexWeb", "LocalSendCore",
            ],
            path: "Sources/LocalSend/Carrier", swiftSettings: strictSettings),
        // hexd as a KDE Connect device: its identities, links, pairing and payloads, known to the daemon
        // by one factory.
        .target(
            name: "KDEConnectCarrier",
            dependencies: [
                "HexCarrier", "HexCommandLine", "HexEngine", "HexKit", "HexNet", "HexTLS", "KDEConnectCore",
            ],
            path: "Sources/KDEConnect/Carrier", swiftSettings: strictSettings),
        .target(
            name: "HexDaemon",
            dependencies: [
                "CLinux", "HexJSON", "HexKit", "HexEngine", "HexStore", "HexNet", "HexTLS", "HexControl",
                "HexCommandLine", "HexWeb", "HexDBus", "HexDNS", "HexCarrier", "KDEConnectCarrier",
                "LocalSendCarrier", "QuickShareCarrier",
            ],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "hexd", dependencies: ["HexDaemon", "HexKit", "HexCommandLine"], swiftSettings: strictSettings),
        .executableTarget(
            name: "hexctl", dependencies: ["HexKit", "HexNet", "HexControl", "HexCommandLine"],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "hexbench",
            dependencies: [
                "HexDaemon", "HexKit", "HexStore", "HexNet", "HexTLS",
                "COpenSSL", "HexControl", "HexCommandLine", "HexHarness", "QuickShareCore",
            ], swiftSettings: strictSettings),
        // Real processes and sockets for hexbench and the tests: spawning and watching processes,
        // temporary directories, and the attackers of the hostile-network tests and benchmarks.
        .target(
            name: "HexHarness", dependencies: ["CLinux", "HexKit", "HexNet", "HexTLS", "QuickShareCore"],
            swiftSettings: strictSettings),
        // What only the tests use: daemons started for a test, a private D-Bus, a receiving store.
        .target(
            name: "HexTestSupport",
            dependencies: ["HexHarness", "HexKit", "HexStore", "HexNet", "HexControl", "HexCommandLine"],
            path: "Tests/HexTestSupport", swiftSettings: strictSettings),
        // Finds the programs tests need (iproute2, systemd-analyze, shells): a missing one fails its test.
        .target(name: "HexTestTools", path: "Tests/HexTestTools", swiftSettings: strictSettings),
        .testTarget(name: "HexEngineTests", dependencies: ["HexEngine", "HexKit"], swiftSettings: strictSettings),
        .testTarget(name: "HexJSONTests", dependencies: ["HexJSON"], swiftSettings: strictSettings),
        .testTarget(
            name: "HexKitTests", dependencies: ["HexKit", "HexStore", "HexHarness", "HexTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "HexCommandLineTests",
            dependencies: ["HexCommandLine", "HexStore", "HexHarness", "HexTestSupport", "HexTestTools"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "HexTLSTests", dependencies: ["HexTLS", "HexNet", "HexHarness", "HexTestSupport", "HexTestTools"],
            swiftSettings: strictSettings),
        .testTarget(name: "HexWebTests", dependencies: ["HexWeb"], swiftSettings: strictSettings),
        .testTarget(name: "HexDNSTests", dependencies: ["HexDNS"], swiftSettings: strictSettings),
        .testTarget(
            name: "LocalSendTests", dependencies: ["LocalSendCore", "HexEngine", "HexKit"],
            path: "Tests/LocalSendTests", swiftSettings: strictSettings),
        .testTarget(
            name: "KDEConnectTests", dependencies: ["KDEConnectCore", "HexEngine", "HexKit", "HexJSON"],
            path: "Tests/KDEConnectTests", swiftSettings: strictSettings),
        .testTarget(
            name: "QuickShareTests", dependencies: ["QuickShareCore"], path: "Tests/QuickShareTests",
            swiftSettings: strictSettings),
        .testTarget(
            name: "HexDBusTests", dependencies: ["HexDBus", "HexNet", "HexHarness", "HexTestSupport", "HexTestTools"],
            swiftSettings: strictSettings),
        .testTarget(name: "HexControlTests", dependencies: ["HexControl", "HexKit"], swiftSettings: strictSettings),
        .testTarget(
            name: "HexNetTests", dependencies: ["HexNet", "HexKit", "HexHarness", "HexTestSupport", "HexTestTools"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "HexStoreTests", dependencies: ["HexStore", "HexKit", "HexHarness", "HexTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HexDaemonTests",
            dependencies: [
                "HexDaemon", "HexCarrier", "KDEConnectCarrier", "KDEConnectCore", "LocalSendCarrier", "LocalSendCore",
                "QuickShareCarrier", "HexEngine", "HexControl", "HexNet", "HexKit", "HexTLS", "HexCommandLine",
                "HexHarness", "HexTestSupport",
            ],
            swiftSettings: strictSettings),
        // Runs the real executables; depending on them makes `swift test` build them first.
        .testTarget(
            name: "CommandLineTests",
            dependencies: [
                "hexd", "hexctl", "HexDaemon", "HexEngine", "HexKit", "HexNet", "HexTLS", "HexControl", "HexDBus",
                "HexHarness", "HexTestSupport", "HexTestTools", "QuickShareCore", "KDEConnectCarrier",
                "LocalSendCarrier",
                "QuickShareCarrier",
            ],
            swiftSettings: strictSettings),
    ]
)

// Coverage-guided fuzz targets (libFuzzer), only when HEXD_FUZZ is set: they are built with
// `-sanitize=fuzzer`, which brings its own `main`, so a normal build leaves them out.
// `Tests/fuzz.sh` builds and runs them.
if Context.environment["HEXD_FUZZ"] != nil {
    package.targets += [
        .target(name: "CFuzzDriver", path: "Tests/Fuzz/CFuzzDriver"),
        .executableTarget(
            name: "FuzzEnvelope", dependencies: ["HexKit", "LocalSendCore", "KDEConnectCore", "CFuzzDriver"],
            path: "Tests/Fuzz/FuzzEnvelope",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "FuzzBeacon", dependencies: ["HexKit", "CFuzzDriver"], path: "Tests/Fuzz/FuzzBeacon",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "FuzzLocalSend", dependencies: ["LocalSendCore", "HexKit", "CFuzzDriver"],
            path: "Tests/Fuzz/FuzzLocalSend",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "FuzzKDEConnect", dependencies: ["KDEConnectCore", "HexKit", "CFuzzDriver"],
            path: "Tests/Fuzz/FuzzKDEConnect",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "FuzzDBusMessage", dependencies: ["HexDBus", "CFuzzDriver"],
            path: "Tests/Fuzz/FuzzDBusMessage", swiftSettings: strictSettings),
        .executableTarget(
            name: "FuzzDNSMessage", dependencies: ["HexDNS", "CFuzzDriver"],
            path: "Tests/Fuzz/FuzzDNSMessage", swiftSettings: strictSettings),
        .executableTarget(
            name: "FuzzQuickShare", dependencies: ["QuickShareCore", "CFuzzDriver"],
            path: "Tests/Fuzz/FuzzQuickShare", swiftSettings: strictSettings),
        .executableTarget(
            name: "FuzzHTTPRequest", dependencies: ["HexWeb", "CFuzzDriver"],
            path: "Tests/Fuzz/FuzzHTTPRequest", swiftSettings: strictSettings),
        .executableTarget(
            name: "FuzzControlRequest", dependencies: ["HexControl", "CFuzzDriver"],
            path: "Tests/Fuzz/FuzzControlRequest", swiftSettings: strictSettings),
    ]
}
