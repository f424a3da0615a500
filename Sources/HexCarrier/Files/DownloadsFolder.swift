import HexCommandLine
import HexKit
import HexNet

/// The folder fetched files land in: a partial file per grant while a fetch runs, then the file
/// under its safe name, or the first ` (n)` form of it that is free (never over another file).
/// Partial files are kept for a resume, and removed once a day old.
package struct DownloadsFolder: Sendable {
    package let path: String

    package init(path: String) { self.path = path }

    /// How long a partial file waits for its fetch to resume.
    static let partialLifetime: Double = 86_400
    package static let partialSuffix = ".part"

    /// The folder fetched files go to by default: the user's XDG download folder when the data
    /// directory is in the user's home (a daemon of the user's own), else `<data-dir>/downloads`
    /// (a system service, which has no user's folder).
    package static func defaultPath(environment: [String: String], dataDirectory: DataDirectory) -> String {
        guard let home = environment["HOME"], home.hasPrefix("/"), dataDirectory.path.hasPrefix(home + "/") else {
            return dataDirectory.path + "/downloads"
        }
        if let folder = environment["XDG_DOWNLOAD_DIR"], folder.hasPrefix("/") { return folder }
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
        if let text = FileManager.default.contents(atPath: configHome + "/user-dirs.dirs"),
            let folder = userDownloadFolder(in: String(decoding: text.prefix(65_536), as: UTF8.self), home: home)
        {
            return folder
        }
        return home + "/Downloads"
    }

    /// The `XDG_DOWNLOAD_DIR="$HOME/…"` line of a `user-dirs.dirs` file, as xdg-user-dirs writes it.
    package static func userDownloadFolder(in text: String, home: String) -> String? {
        for line in text.split(separator: "\n") where line.hasPrefix("XDG_DOWNLOAD_DIR=") {
            var value = line.dropFirst("XDG_DOWNLOAD_DIR=".count).trimmed
            guard value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") else { return nil }
            value = String(value.dropFirst().dropLast())
            if value.hasPrefix("$HOME") { value = home + value.dropFirst("$HOME".count) }
            // "$HOME/" alone means no download folder of its own: not the home folder itself.
            return value.hasPrefix("/") && value != home && value != home + "/" ? value : nil
        }
        return nil
    }

    /// Makes the folder (and its parents) when it is not there, and removes partial files of
    /// fetches that did not resume within `partialLifetime`.
    package func prepare() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let oldest = Date() - Self.partialLifetime
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] where Self.isPartial(name) {
            let file = path + "/" + name
            guard let modified = (try? FileManager.default.attributesOfItem(atPath: file))?[.modificationDate] as? Date,
                modified < oldest
            else { continue }
            DiskFile.remove(file)
        }
    }

    /// Where the partial file of a link's fetch is: one per grant, so a fetch finds what an
    /// earlier one of the same file left.
    package func partialPath(for link: PeerFileLink) -> String {
        path + "/" + SafeFileName.make(from: link.name) + "." + link.grant.prefix(12) + Self.partialSuffix
    }

    /// Gives a whole, verified file its name in the folder: `name`, or the first free `name (n)`.
    /// - Returns: the path it has now.
    /// - Throws: `DiskFileError`.
    package func place(_ file: DiskFile, named name: String) throws(DiskFileError) -> String {
        for number in 0..<Self.maximumNumbered {
            let candidate = path + "/" + (number == 0 ? name : SafeFileName.numbered(name, number))
            do {
                try file.name(as: candidate)
                return candidate
            } catch  where error.isTaken {
                continue
            }
        }
        throw DiskFileError(
            "name \(file.path)",
            reason: "\(name) and \(Self.maximumNumbered - 1) numbered names are taken")
    }

    static let maximumNumbered = 1_000

    /// Whether a name is a partial file's: `<name>.<12 hex digits>.part`.
    package static func isPartial(_ name: String) -> Bool {
        guard name.hasSuffix(partialSuffix) else { return false }
        let stem = name.dropLast(partialSuffix.count)
        guard let dot = stem.lastIndex(of: ".") else { return false }
        let tag = stem[stem.index(after: dot)...]
        return tag.count == 12 && tag.allSatisfy(\.isHexDigit)
    }
}
