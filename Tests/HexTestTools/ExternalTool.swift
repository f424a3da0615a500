import Foundation
import Synchronization
import Testing

/// Programs a test needs that hexd does not (iproute2, systemd-analyze, shells, groff), and root.
///
/// On a developer's machine a test whose tool is missing is skipped (cancelled, with its reason
/// and the command that installs the tool), and the run ends with a line per missing tool.
/// `HEXD_REQUIRE_TOOLS=all` (set by `.ci/run`), or a comma-separated list of tools, turns those
/// skips into failures: CI refuses every skip.
public enum ExternalTool {
    /// Where the tool is looked for.
    static let directories = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]

    /// The Debian package of each tool whose package is not named like it.
    static let packages = [
        "ip": "iproute2", "systemd-analyze": "systemd", "groff": "groff-base", "losetup": "mount",
        "mkfs.ext4": "e2fsprogs", "mkfs.exfat": "exfatprogs", "mount.exfat-fuse": "exfat-fuse",
        "sha256sum": "coreutils",
    ]

    /// The tool's path.
    /// - Throws: `Missing` when it is not installed and the tool is required; otherwise the test
    ///   is cancelled (reported as skipped).
    public static func require(_ name: String) throws -> String {
        let candidates = directories.map { $0 + "/" + name }
        if let path = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) { return path }
        let package = packages[name] ?? name
        try skipOrFail(Missing(name: name, reason: "\(name) is not installed", remedy: "apt-get install \(package)"))
    }

    /// Returns when the Python module `name` imports (the caller probes it: `found`); otherwise
    /// skips or fails as a missing tool named `python3-<name>` does.
    public static func require(pythonModule name: String, found: Bool) throws {
        guard !found else { return }
        try skipOrFail(
            Missing(
                name: "python3-" + name, reason: "the Python module \(name) is not installed",
                remedy: "apt-get install python3-\(name)"))
    }

    /// Returns when the tests run as root (as CI does); otherwise skips or fails as a missing tool
    /// named `root` does.
    public static func requireRoot() throws {
        guard geteuid() != 0 else { return }
        try skipOrFail(
            Missing(
                name: "root", reason: "this test needs root",
                remedy: "run the tests as root, as CI does"))
    }

    private static func skipOrFail(_ missing: Missing) throws -> Never {
        let required = (ProcessInfo.processInfo.environment["HEXD_REQUIRE_TOOLS"] ?? "").split(separator: ",")
        if required.contains(where: { $0 == missing.name || $0 == "all" }) { throw missing }
        Skips.record(missing, test: Test.current?.name ?? "a test")
        try Test.cancel("skipped: \(missing.reason) (\(missing.remedy))")
    }

    /// A tool (or root) a test needs is not there.
    public struct Missing: Error, CustomStringConvertible, Sendable {
        /// The tool, `python3-<module>`, or `root`: what `HEXD_REQUIRE_TOOLS` names.
        public let name: String
        public let reason: String
        /// What to do about it: the command that installs the tool.
        public let remedy: String
        public var description: String {
            "\(reason) (\(remedy)); HEXD_REQUIRE_TOOLS makes this a failure instead of a skip"
        }
    }
}

/// The tests skipped in this run, by missing tool, listed on standard error as the process exits.
private enum Skips {
    private static let byTool = Mutex<[String: (remedy: String, tests: Set<String>)]>([:])
    /// Registers the list's printer once, on the first skip.
    private static let printer: Void = { atexit { Skips.printList() } }()

    static func record(_ missing: ExternalTool.Missing, test: String) {
        _ = printer
        byTool.withLock { tools in
            _ = tools[missing.name, default: (missing.remedy, [])].tests.insert(test)
        }
    }

    private static func printList() {
        let lines = byTool.withLock { tools in
            tools.keys.sorted().compactMap { name -> String? in
                guard let entry = tools[name] else { return nil }
                let tests = entry.tests.sorted()
                return "  \(name): \(tests.count) skipped (\(entry.remedy)): " + tests.joined(separator: ", ")
            }
        }
        guard !lines.isEmpty else { return }
        let text =
            "Tests skipped for want of a tool (HEXD_REQUIRE_TOOLS=all makes them fail):\n"
            + lines.joined(separator: "\n") + "\n"
        FileHandle.standardError.write(Data(text.utf8))
    }
}
