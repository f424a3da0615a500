import Foundation
import Testing

/// Programs a test needs that hexd does not (iproute2, systemd-analyze, shells, groff). `.ci/run`
/// installs them; a test that cannot find one fails, unless `HEXD_ALLOW_SKIP` names the tool
/// (comma-separated, or `all`), and then it is reported as skipped, with the reason, instead.
public enum ExternalTool {
    /// Where the tool is looked for.
    static let directories = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]

    /// The tool's path.
    /// - Throws: `Missing` when it is not installed and no skip is allowed; when one is, the test
    ///   is cancelled (reported as skipped).
    public static func require(_ name: String) throws -> String {
        if let path = directories.map({ $0 + "/" + name }).first(where: FileManager.default.isExecutableFile(atPath:)) {
            return path
        }
        guard skipAllowed(name) else { throw Missing(name: name) }
        try Test.cancel("skipped: \(name) is not installed (allowed by HEXD_ALLOW_SKIP)")
    }

    /// Returns when the Python module `name` imports (the caller probes it: `found`); otherwise
    /// fails, unless `HEXD_ALLOW_SKIP` names `python3-<name>`, and then the test is cancelled.
    public static func require(pythonModule name: String, found: Bool) throws {
        guard !found else { return }
        guard skipAllowed("python3-" + name) else { throw Missing(name: "python3-" + name) }
        try Test.cancel("skipped: the Python module \(name) is not installed (allowed by HEXD_ALLOW_SKIP)")
    }

    /// Returns when the tests run as root (as CI does); otherwise fails, unless `HEXD_ALLOW_SKIP`
    /// names `root`, and then the test is cancelled (reported as skipped).
    public static func requireRoot() throws {
        guard geteuid() != 0 else { return }
        guard skipAllowed("root") else { throw Missing(name: "root") }
        try Test.cancel("skipped: not running as root (allowed by HEXD_ALLOW_SKIP)")
    }

    private static func skipAllowed(_ name: String) -> Bool {
        let allowed = (ProcessInfo.processInfo.environment["HEXD_ALLOW_SKIP"] ?? "").split(separator: ",")
        return allowed.contains { $0 == name || $0 == "all" }
    }

    /// A tool (or root) a test needs is not there.
    public struct Missing: Error, CustomStringConvertible {
        public let name: String
        public var description: String {
            name == "root"
                ? "this test needs root (CI runs as root); set HEXD_ALLOW_SKIP=root to skip it"
                : "\(name) is not installed: .ci/run installs it; "
                    + "set HEXD_ALLOW_SKIP=\(name) to skip the tests that need it"
        }
    }
}
