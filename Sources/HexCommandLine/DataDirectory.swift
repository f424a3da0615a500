import Glibc

/// The folder where hexd keeps its state, and the one place that names what is in it: the
/// database, the control socket, the lock file and the config file. hexd and hexctl both find
/// their way through it (hexctl without linking SQLite).
public struct DataDirectory: Sendable {
    public let path: String

    public static let databaseName = "hexd.sqlite"
    public static let socketName = "hexd.sock"
    public static let lockName = "hexd.lock"
    public static let configName = "hexd.conf"
    /// The device's private key (Ed25519, PEM), made on first start.
    public static let keyName = "identity.key"
    /// The device's self-signed certificate (PEM), whose hash is its fingerprint.
    public static let certificateName = "identity.crt"
    /// Space held back for the day the disk fills up (`hexd --disk-reserve`).
    public static let reserveName = "space.reserve"
    public static let spoolName = "on-receive"
    /// The page's address (`127.0.0.1:18522`), written while hexd serves it.
    public static let webAddressName = "web.address"
    /// The page's access token, kept across starts so that an open page survives a restart.
    public static let webTokenName = "web.token"
    /// A page that sends the browser on to the page with its token: opening it keeps the token out
    /// of the browser's command line, which every user of the machine can read.
    public static let webOpenName = "web-open.html"

    /// The directory chosen by, in order: `explicit` (a flag), `HEXD_DATA_DIR`,
    /// `$XDG_DATA_HOME/hexd`, `~/.local/share/hexd`.
    public init(explicit: String?, environment: [String: String]) {
        if let explicit, !explicit.isEmpty {
            path = explicit
        } else if let fromEnvironment = environment["HEXD_DATA_DIR"], !fromEnvironment.isEmpty {
            path = fromEnvironment
        } else if let dataHome = environment["XDG_DATA_HOME"], !dataHome.isEmpty {
            path = dataHome + "/hexd"
        } else {
            path = (environment["HOME"] ?? ".") + "/.local/share/hexd"
        }
    }

    /// The SQLite database.
    public var databasePath: String { path + "/" + Self.databaseName }
    /// The control socket hexctl talks to.
    public var socketPath: String { path + "/" + Self.socketName }
    /// The lock a running daemon holds.
    public var lockPath: String { path + "/" + Self.lockName }
    /// The config file read when no other is named.
    public var configPath: String { path + "/" + Self.configName }
    public var keyPath: String { path + "/" + Self.keyName }
    public var certificatePath: String { path + "/" + Self.certificateName }
    public var reservePath: String { path + "/" + Self.reserveName }
    /// The key (`localsend.key`) and self-signed certificate (`localsend.crt`), both PEM, that hexd shows
    /// the devices of the protocol called `persona` (a kind of peer's name), made on its first start.
    public func persona(_ persona: String) -> (key: String, certificate: String) {
        (path + "/" + persona + ".key", path + "/" + persona + ".crt")
    }
    /// Where the on-receive command's standard input is written, one file per hex.
    public var spoolPath: String { path + "/" + Self.spoolName }
    public var webAddressPath: String { path + "/" + Self.webAddressName }
    public var webTokenPath: String { path + "/" + Self.webTokenName }
    public var webOpenPath: String { path + "/" + Self.webOpenName }

    /// `web-open.html` as a `file://` URL, the path percent-encoded.
    public var webOpenURL: String {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/".utf8)
        let absolute = webOpenPath.hasPrefix("/") ? webOpenPath : (currentDirectory() + "/" + webOpenPath)
        return "file://"
            + absolute.utf8.map { unreserved.contains($0) ? String(UnicodeScalar($0)) : "%" + hex($0) }
            .joined()
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
    }

    private func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Makes the spool directory (0700) if it is not there, empties it of what a daemon that was
    /// killed left, and returns its path.
    /// - Throws: `DataDirectoryError` when it cannot be made.
    public func makeSpool() throws -> String {
        guard mkdir(spoolPath, 0o700) == 0 || errno == EEXIST else {
            throw DataDirectoryError(path: spoolPath, reason: String(cString: strerror(errno)))
        }
        if let directory = opendir(spoolPath) {
            defer { closedir(directory) }
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name != "." && name != ".." { unlink(spoolPath + "/" + name) }
            }
        }
        return spoolPath
    }

    /// Creates the directory (and its parents) if it does not exist, and makes it private: it
    /// must belong to the user running hexd, and is made readable by that user only (0700), as
    /// are the files hexd keeps in it (0600), the keys of its `personas` too (`persona(_:)`), wherever an
    /// earlier version or a person left them.
    /// - Returns: what was tightened, for the log (empty when nothing was).
    /// - Throws: `DataDirectoryError` when it cannot be created, is not a directory, or belongs to
    ///   another user.
    @discardableResult
    public func create(personas: [String] = []) throws -> [String] {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw DataDirectoryError(path: prefix, reason: String(cString: strerror(errno)))
            }
        }
        var status = stat()
        guard lstat(path, &status) == 0 else {
            throw DataDirectoryError(path: path, reason: String(cString: strerror(errno)))
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw DataDirectoryError(path: path, reason: "it is not a directory")
        }
        guard status.st_uid == geteuid() else {
            throw DataDirectoryError(
                path: path,
                reason: "it belongs to user \(status.st_uid), not to user \(geteuid()) running hexd; "
                    + "use a data directory of your own (--data-dir), or give this one to the user running hexd (chown)"
            )
        }
        var tightened: [String] = []
        let personaFiles = personas.flatMap { [persona($0).key, persona($0).certificate] }
        let files = Self.privateFiles.map { path + "/" + $0 } + personaFiles
        for (file, mode) in [(path, mode_t(0o700))] + files.map({ ($0, mode_t(0o600)) }) {
            var fileStatus = stat()
            guard lstat(file, &fileStatus) == 0, fileStatus.st_mode & S_IFMT != S_IFLNK,
                fileStatus.st_mode & 0o777 != mode
            else { continue }
            guard chmod(file, mode) == 0 else {
                throw DataDirectoryError(
                    path: file, reason: "cannot make it private: \(String(cString: strerror(errno)))")
            }
            tightened.append(
                "\(file) (was \(String(fileStatus.st_mode & 0o777, radix: 8)), now \(String(mode, radix: 8)))")
        }
        return tightened
    }

    /// The files hexd keeps in the directory, which only their owner may read.
    static let privateFiles = [
        databaseName, databaseName + "-wal", databaseName + "-shm", lockName, keyName, certificateName, reserveName,
        webTokenName, webAddressName, webOpenName,
    ]
}

/// The data directory could not be created.
public struct DataDirectoryError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot use the data directory \(path): \(reason)" }
}
