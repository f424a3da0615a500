import HexKit
import HexNet
import HexTLS
import HexWeb

/// Where the files other devices push land (LocalSend's uploads, KDE Connect's payloads): the
/// downloads folder, under the rules of a fetch (a partial file while the bytes come, the SHA-256
/// checked when the sender gave one, the safe name only when whole, never over another file, and
/// never below the free-space floor).
package struct IncomingFiles: Sendable {
    package let folder: DownloadsFolder
    /// The free space kept on the folder's disk (`--min-free`).
    package let floor: FreeSpaceFloor

    package init(folder: DownloadsFolder, floor: FreeSpaceFloor) { (self.folder, self.floor) = (folder, floor) }

    /// Bytes read from the connection at a time.
    static let chunk = 1 << 20
    /// How often the free space is read again while bytes arrive.
    static let roomCheckBytes: Int64 = 16 << 20
    /// The longest an upload may go without a byte.
    static let idleLimit: Duration = .seconds(30)

    /// Why a file did not land (nothing of it is left).
    package enum Failure: Error, Sendable, CustomStringConvertible {
        /// The bytes, the disk or the session refused it: `status` is what an HTTP upload is
        /// answered with (LocalSend's API).
        case refused(status: Int, String)
        /// The bytes came whole but their digest is not the one announced: a sender may send them again
        /// (each protocol answers it its own way).
        case digestMismatch(String)
        /// The connection failed.
        case unreachable(String)

        package var description: String {
            switch self {
            case .refused(_, let reason), .digestMismatch(let reason), .unreachable(let reason): reason
            }
        }
    }

    /// A file that landed whole.
    package struct Saved: Sendable, Equatable {
        /// Its name in the folder (the safe form of the sender's, numbered when that was taken).
        package var name: String
        package var path: String
        package var size: Int64
    }

    /// Why `bytes` more would not fit above the floor; nil when they fit (or the disk cannot be
    /// read: the writes then say).
    package func roomProblem(for bytes: Int64) -> String? {
        guard let space = DiskSpace.of(folder.path) else { return nil }
        let floor = self.floor.bytes(ofDiskSize: space.size)
        let room = Int64(space.free) - Int64(floor)
        guard room < bytes else { return nil }
        return "\(folder.path) has \(ByteCount.text(max(space.free, 0))) free, and keeps \(ByteCount.text(floor)) "
            + "(--min-free): \(ByteCount.text(Int(clamping: bytes))) do not fit"
    }

    /// Receives the `size` bytes of the file the sender calls `sendersName` from `connection`
    /// (`first` came with the request's head; none for an empty file) into a partial file, then
    /// names it (a safe form of `sendersName`). Stops, the partial file removed, when a byte is missing
    /// at `deadline` or for `idleLimit`, when `stillWanted` says the session ended, when the
    /// digest is not the one announced, or at the free-space floor. `progressed` is told after each
    /// piece written.
    /// - Parameters:
    ///   - sha256: the digest the sender announced (hex), checked when given.
    ///   - chunked: the bytes come as an HTTP chunked body (`first` too): read through a
    ///     `ChunkedDecoder`, to its end, its chunks adding up to `size` at most.
    /// - Throws: `Failure`.
    package func receive(
        named sendersName: String, size: Int64, sha256: String?, over connection: TLSConnection?, first: [UInt8],
        chunked: Bool = false, deadline: ContinuousClock.Instant, progressed: @Sendable () -> Void,
        stillWanted: @Sendable () async -> Bool
    ) async throws(Failure) -> Saved {
        var landing = try land(named: sendersName, size: size, checking: sha256)
        // Named, the file keeps its new name alone; else nothing of it stays.
        defer { landing.abandon() }
        var failure: DiskFileError?
        func take(_ bytes: UnsafeRawBufferPointer) {
            guard failure == nil else { return }
            do { try landing.write(bytes) } catch { failure = error }
        }
        var chunks = chunked ? ChunkedDecoder(limits: .init(bodyBytes: size)) : nil
        var framing: ChunkedDecoder.Failure?
        func arrived(_ bytes: UnsafeRawBufferPointer) {
            guard var decoder = chunks else { return take(bytes) }
            guard framing == nil else { return }
            do throws(ChunkedDecoder.Failure) {
                _ = try decoder.feed(bytes, body: take)
            } catch {
                framing = error
            }
            chunks = decoder
        }
        first.withUnsafeBytes { arrived($0) }
        // Sized, the bytes end at `size`; chunked, at the last chunk (after `size` bytes at most).
        while chunks.map({ !$0.isFinished }) ?? (landing.position < size), failure == nil, framing == nil {
            let position = landing.position
            let wanted = chunks == nil ? Int(min(Int64(Self.chunk), size - position)) : Self.chunk
            let timeout = min(deadline - .now, Self.idleLimit)
            guard timeout > .zero else {
                throw .refused(status: 408, "\(position) of \(size) bytes came before the deadline")
            }
            guard let connection else { throw .unreachable("\(size) bytes announced, and no connection to read them") }
            let count: Int
            do {
                count = try await connection.read(maximumCount: wanted, timeout: timeout) {
                    arrived(UnsafeRawBufferPointer($0))
                }
            } catch {
                throw .unreachable("the upload stopped at byte \(position) of \(size): \(error)")
            }
            guard count > 0 else { throw .unreachable("the sender closed at byte \(position) of \(size)") }
            progressed()
            try await landing.wrote(stillWanted: stillWanted)
        }
        if let failure { throw .refused(status: 507, "cannot write \(landing.partialPath): \(failure)") }
        if let framing { throw .refused(status: 400, "\(framing), not the \(size) bytes announced") }
        guard await stillWanted() else { throw .refused(status: 409, "the session was cancelled") }
        return try await landing.finish()
    }

    /// Starts the file the sender calls `sendersName`, of `size` bytes, as a partial file in the
    /// folder, whose bytes are then handed to it (`Landing.write`).
    /// - Parameter sha256: the digest the sender announced (hex), checked by `finish` when given.
    /// - Throws: `Failure.refused` when the partial file cannot be made.
    package func land(named sendersName: String, size: Int64, checking sha256: String?) throws(Failure) -> Landing {
        try Landing(named: sendersName, size: size, checking: sha256, into: self)
    }

    /// A file landing in the folder as its bytes are handed over: a partial file until `finish`
    /// names it, removed by `abandon` otherwise.
    package struct Landing {
        /// The safe form of the sender's name, which the file gets once whole.
        package let name: String
        package let partialPath: String
        package let size: Int64
        private(set) var position: Int64 = 0
        private let partial: DiskFile
        /// Hashed only when the sender announced a digest to check (a third of the time it takes).
        private let digest: SHA256Digest?
        private let expected: String?
        private var writeback: Writeback
        private var checkedAt: Int64 = 0
        private let files: IncomingFiles

        fileprivate init(named sendersName: String, size: Int64, checking sha256: String?, into files: IncomingFiles)
            throws(Failure)
        {
            name = SafeFileName.make(from: sendersName)
            partialPath =
                files.folder.path + "/" + name + "."
                + String(UUID().uuidString.filter(\.isHexDigit).prefix(12)).lowercased() + DownloadsFolder.partialSuffix
            do {
                // The folder is made (and cleared of stale partial files) once for each session,
                // when it is admitted.
                partial = try DiskFile.writing(partialPath)
                digest = sha256 == nil ? nil : try SHA256Digest()
            } catch {
                DiskFile.remove(partialPath)
                throw .refused(status: 500, "cannot write into \(files.folder.path): \(error)")
            }
            (self.size, expected, self.files) = (size, sha256, files)
            writeback = Writeback(of: partial)
        }

        /// Writes the next bytes of the file.
        package mutating func write(_ bytes: UnsafeRawBufferPointer) throws(DiskFileError) {
            try partial.write(bytes, at: position)
            digest?.update(bytes)
            position += Int64(bytes.count)
        }

        /// Writes the next bytes of the file.
        package mutating func write(_ bytes: some ContiguousBytes) throws(DiskFileError) {
            var failure: DiskFileError?
            bytes.withUnsafeBytes { buffer in
                do throws(DiskFileError) { try write(buffer) } catch { failure = error }
            }
            if let failure { throw failure }
        }

        /// After bytes were written: hands them to the disk as they add up, and checks the free space
        /// (and that `stillWanted`) every `roomCheckBytes`.
        /// - Throws: `Failure.refused` at the floor or when the transfer is no longer wanted.
        package mutating func wrote(stillWanted: @Sendable () async -> Bool = { true }) async throws(Failure) {
            await writeback.wrote(upTo: position)
            guard position - checkedAt >= IncomingFiles.roomCheckBytes else { return }
            checkedAt = position
            if let problem = files.roomProblem(for: min(size - position, IncomingFiles.roomCheckBytes)) {
                throw .refused(status: 507, problem)
            }
            guard await stillWanted() else { throw .refused(status: 409, "the session was cancelled") }
        }

        /// Syncs the whole file and gives it its name (numbered when that is taken).
        /// - Throws: `Failure.refused` when bytes are missing, the digest is not the one announced, or
        ///   it cannot be named.
        package mutating func finish() async throws(Failure) -> Saved {
            guard position == size else {
                throw .refused(status: 400, "\(position) bytes came, not the \(size) announced")
            }
            if let expected {
                guard (try? digest?.finish()) == expected else {
                    throw .digestMismatch("Checksum mismatch: the bytes' SHA-256 is not the one announced")
                }
            }
            await writeback.finish()
            do {
                // Syncing waits for the disk: on a thread of the blocking pool, not the daemon's own.
                let path = try await BlockingPool.shared.run { [files, partial, name] in
                    try partial.sync()
                    let path = try files.folder.place(partial, named: name)
                    DiskFile.syncDirectory(files.folder.path)
                    return path
                }
                DiskFile.remove(partialPath)
                return Saved(
                    name: String(path.split(separator: "/").last ?? Substring(name)), path: path, size: position)
            } catch {
                throw .refused(status: 507, "cannot name \(partialPath) \(name): \(error)")
            }
        }

        /// Removes the partial file; a file `finish` named keeps its name.
        package func abandon() {
            DiskFile.remove(partialPath)
        }
    }
}
