import HexKit
import HexNet
import HexTLS
import HexWeb

/// Where the files other devices push land (LocalSend's uploads, KDE Connect's payloads): the
/// downloads folder, under the rules of a fetch (a partial file while the bytes come, the SHA-256
/// checked when the sender gave one, the safe name only when whole, never over another file, and
/// never below the free-space floor).
struct IncomingFiles: Sendable {
    let folder: DownloadsFolder
    /// The free space kept on the folder's disk (`--min-free`).
    let floor: FreeSpaceFloor

    /// Bytes read from the connection at a time.
    static let chunk = 1 << 20
    /// How often the free space is read again while bytes arrive.
    static let roomCheckBytes: Int64 = 16 << 20
    /// The longest an upload may go without a byte.
    static let idleLimit: Duration = .seconds(30)

    /// Why a file did not land (nothing of it is left).
    enum Failure: Error, Sendable, CustomStringConvertible {
        /// The bytes, the disk or the session refused it: `status` is what an HTTP upload is
        /// answered with (LocalSend's API).
        case refused(status: Int, String)
        /// The connection failed.
        case unreachable(String)

        var description: String {
            switch self {
            case .refused(_, let reason), .unreachable(let reason): reason
            }
        }
    }

    /// A file that landed whole.
    struct Saved: Sendable, Equatable {
        /// Its name in the folder (the safe form of the sender's, numbered when that was taken).
        var name: String
        var path: String
        var size: Int64
    }

    /// Why `bytes` more would not fit above the floor; nil when they fit (or the disk cannot be
    /// read: the writes then say).
    func roomProblem(for bytes: Int64) -> String? {
        guard let space = DiskWatch.space(of: folder.path) else { return nil }
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
    func receive(
        named sendersName: String, size: Int64, sha256: String?, over connection: TLSConnection?, first: [UInt8],
        chunked: Bool = false, deadline: ContinuousClock.Instant, progressed: @Sendable () -> Void,
        stillWanted: @Sendable () async -> Bool
    ) async throws(Failure) -> Saved {
        let name = SafeFileName.make(from: sendersName)
        let partialPath =
            folder.path + "/" + name + "." + String(UUID().uuidString.filter(\.isHexDigit).prefix(12)).lowercased()
            + DownloadsFolder.partialSuffix
        let partial: DiskFile
        // Hashed only when the sender announced a digest to check (a third of the time it takes).
        let digest: SHA256Digest?
        do {
            // The folder is made (and cleared of stale partial files) once for each session, when
            // it is admitted.
            partial = try DiskFile.writing(partialPath)
            digest = sha256 == nil ? nil : try SHA256Digest()
        } catch {
            throw .refused(status: 500, "cannot write into \(folder.path): \(error)")
        }
        // Named, the file keeps its new name alone (`place` links it); else nothing of it stays.
        defer { DiskFile.remove(partialPath) }
        var position: Int64 = 0
        var failure: DiskFileError?
        func take(_ bytes: UnsafeRawBufferPointer) {
            guard failure == nil else { return }
            do {
                try partial.write(bytes, at: position)
                digest?.update(bytes)
                position += Int64(bytes.count)
            } catch {
                failure = error
            }
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
        var checkedAt: Int64 = 0
        var writeback = Writeback(of: partial)
        // Sized, the bytes end at `size`; chunked, at the last chunk (after `size` bytes at most).
        while chunks.map({ !$0.isFinished }) ?? (position < size), failure == nil, framing == nil {
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
            await writeback.wrote(upTo: position)
            if position - checkedAt >= Self.roomCheckBytes {
                checkedAt = position
                if let problem = roomProblem(for: min(size - position, Self.roomCheckBytes)) {
                    throw .refused(status: 507, problem)
                }
                guard await stillWanted() else { throw .refused(status: 409, "the session was cancelled") }
            }
        }
        if let failure { throw .refused(status: 507, "cannot write \(partialPath): \(failure)") }
        if let framing { throw .refused(status: 400, "\(framing), not the \(size) bytes announced") }
        guard position == size else {
            throw .refused(status: 400, "\(position) bytes came, not the \(size) announced")
        }
        if let expected = sha256 {
            guard (try? digest?.finish()) == expected else {
                throw .refused(
                    status: LocalSendAnswer.checksumMismatch,
                    "Checksum mismatch: the bytes' SHA-256 is not the one announced")
            }
        }
        guard await stillWanted() else { throw .refused(status: 409, "the session was cancelled") }
        await writeback.finish()
        do {
            // Syncing waits for the disk: on a thread of the blocking pool, not the daemon's own.
            let path = try await BlockingPool.shared.run { [folder] in
                try partial.sync()
                let path = try folder.place(partial, named: name)
                DiskFile.syncDirectory(folder.path)
                return path
            }
            return Saved(name: String(path.split(separator: "/").last ?? Substring(name)), path: path, size: position)
        } catch {
            throw .refused(status: 507, "cannot name \(partialPath) \(name): \(error)")
        }
    }
}
