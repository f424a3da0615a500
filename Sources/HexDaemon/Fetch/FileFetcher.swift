import HexCarrier
import HexEngine
import HexKit
import HexNet
import HexTLS
import Synchronization

/// Fetches files peers granted to this device (`hexd://` links) into a downloads folder, over
/// TLS to the key the link names: into a partial file first, resumed from what it verifiably
/// holds, and named only once the whole file's SHA-256 is the one granted (Protocol.md, section 15).
struct FileFetcher: Sendable {
    let sender: SendService
    let wire: WireSettings
    /// The disk's floors, which a fetch keeps free.
    let store: StoreSettings
    /// Where files go when a fetch names no folder.
    let defaultFolder: DownloadsFolder
    let events: EventLog
    let logger: Logger
    /// The grants being fetched now: a second fetch of one would write the same partial file.
    private let underWay = UnderWay()

    init(
        sender: SendService, wire: WireSettings, store: StoreSettings, defaultFolder: DownloadsFolder, events: EventLog,
        logger: Logger
    ) {
        self.sender = sender
        self.wire = wire
        self.store = store
        self.defaultFolder = defaultFolder
        self.events = events
        self.logger = logger
    }

    private final class UnderWay: Sendable {
        private let grants = Mutex<Set<String>>([])
        /// Marks `grant` fetched now; false when it is already.
        func begin(_ grant: String) -> Bool { grants.withLock { $0.insert(grant).inserted } }
        func end(_ grant: String) { grants.withLock { _ = $0.remove(grant) } }
    }

    /// Bytes read from the connection at a time.
    static let chunk = 1 << 20
    /// How often the free space is read again while bytes arrive.
    static let roomCheckBytes: Int64 = 16 << 20

    /// A file that landed.
    struct Fetched: Sendable {
        var path: String
        var size: Int64
        var sha256: String
        var resumedFrom: Int64
    }

    /// How far a fetch came: bytes held in the partial file, of the file's size.
    typealias Progress = (_ received: Int64, _ size: Int64, _ resumedFrom: Int64) async -> Void

    /// How one file of a fetch goes: while it comes, then how it ended.
    struct FileProgress: Sendable {
        enum Phase: Sendable {
            case fetching
            case fetched(path: String, sha256: String)
            /// `partial` is the partial file kept for a later resume, when it holds bytes.
            case failed(FetchError, partial: String?)
        }

        /// The link's number in the hex (1 is the first).
        let link: Int
        /// The name the file gets (made safe), or the link's text when it is no `hexd://` link.
        let name: String
        var phase = Phase.fetching
        /// Bytes held so far, all of them once fetched.
        var received: Int64 = 0
        /// The file's size, once its owner said.
        var size: Int64?
        /// The verified bytes a partial file held when the fetch went on from it.
        var resumedFrom: Int64 = 0
        /// How long the fetch took, once it ended.
        var elapsed: Duration?

        /// Why it failed; nil while it comes and once it landed.
        var error: FetchError? {
            if case .failed(let error, _) = phase { error } else { nil }
        }
    }

    /// Fetches link `number` of `hex`, telling `progress` how it goes, and says how it ended, in
    /// the log and as an event.
    func fetch(
        _ link: Link, number: Int, of hex: Hex, into folder: DownloadsFolder, progress: (FileProgress) async -> Void
    ) async -> FileProgress {
        let start = ContinuousClock.now
        guard let peerLink = PeerFileLink(link.url) else {
            let error = FetchError(
                .refused,
                "not a hexd:// link; it opens in a browser: \(link.url.clipped(toUTF8: 200))")
            return FileProgress(link: number, name: link.url.clipped(toUTF8: 200), phase: .failed(error, partial: nil))
        }
        let name = SafeFileName.make(from: peerLink.name)
        var report = FileProgress(link: number, name: name)
        do throws(FetchError) {
            let fetched = try await fetch(peerLink, into: folder) { received, size, resumedFrom in
                report.received = received
                report.size = size
                report.resumedFrom = resumedFrom
                await progress(report)
            }
            report.phase = .fetched(path: fetched.path, sha256: fetched.sha256)
            report.received = fetched.size
            report.size = fetched.size
            report.elapsed = ContinuousClock.now - start
            let resumed = fetched.resumedFrom > 0 ? ", resumed from byte \(fetched.resumedFrom)" : ""
            logger.info(
                "fetched \(name) (\(fetched.size) bytes\(resumed)) from \(hex.senderName.clipped(toUTF8: 200)) "
                    + "into \(fetched.path)", [("hex", hex.id.uppercaseText), ("bytes", String(fetched.size))])
            await events.publish(
                .fileFetched, peerUUID: hex.senderUUID, peer: hex.senderName, id: hex.id.uppercaseText,
                message: fetched.path)
            return report
        } catch {
            let partial = folder.partialPath(for: peerLink)
            let held = (try? DiskFile.reading(partial).status().size).map { $0 > 0 } ?? false
            report.phase = .failed(error, partial: held ? partial : nil)
            report.elapsed = ContinuousClock.now - start
            logger.warning("cannot fetch \(name) of hex \(hex.id.shortText): \(error)")
            await events.publish(
                .fetchFailed, peerUUID: hex.senderUUID, peer: hex.senderName, id: hex.id.uppercaseText,
                message: "\(name): \(error)")
            return report
        }
    }

    /// Fetches `link` into `folder`.
    /// - Parameter progress: told once the owner said the size, then as bytes land (at most five times a
    ///   second).
    /// - Throws: `FetchError`; the partial file is kept unless its bytes proved wrong.
    func fetch(
        _ link: PeerFileLink, into folder: DownloadsFolder, progress: Progress
    ) async throws(FetchError) -> Fetched {
        let name = SafeFileName.make(from: link.name)
        guard underWay.begin(link.grant) else {
            throw FetchError(.unreachable, "\(name) is being fetched already; this fetch did not start")
        }
        defer { underWay.end(link.grant) }
        let partialPath = folder.partialPath(for: link)
        let partial: DiskFile
        do {
            try folder.prepare()
            partial = try DiskFile.writing(partialPath)
        } catch {
            throw FetchError(.local, "cannot write in \(folder.path): \(error)")
        }
        // A partial file that holds nothing is no help to a resume: it goes (a refusal leaves none).
        defer { if (try? partial.status().size) == 0 { DiskFile.remove(partialPath) } }
        let channel = try await open(link)
        defer { channel.finish() }
        do {
            let (range, digest) = try await request(link, holding: partial, on: channel)
            await progress(range.offset, range.size, range.offset)
            try checkRoom(in: folder, for: range.length, holding: range.offset)
            try await receive(range, into: partial, digest: digest, from: channel, folder: folder, progress: progress)
            let sha256 = try digest.finish()
            guard sha256 == range.sha256 else {
                DiskFile.remove(partialPath)
                throw FetchError(
                    .corrupt,
                    "\(name) arrived as other bytes than its owner granted (SHA-256 \(sha256), "
                        + "not \(range.sha256)); the partial file was removed: fetch it again")
            }
            try partial.sync()
            let landed = try folder.place(partial, named: name)
            DiskFile.remove(partialPath)
            DiskFile.syncDirectory(folder.path)
            return Fetched(path: landed, size: range.size, sha256: sha256, resumedFrom: range.offset)
        } catch let error as FetchError {
            throw error
        } catch let error as DiskFileError where error.isDiskFull {
            throw FetchError(
                .noRoom,
                "\(folder.path) is full (\(error)); the partial file \(partialPath) is kept: "
                    + "free some space and fetch again to resume")
        } catch let error as SocketError where error.isTimeout {
            throw FetchError(
                .unreachable,
                "the owner of \(name) stopped sending before the deadline; fetch again to resume")
        } catch {
            throw FetchError(.local, "\(name): \(error)")
        }
    }

    /// A TLS connection to the device the link names, proving the key its ID derives from.
    private func open(_ link: PeerFileLink) async throws(FetchError) -> EnvelopeSender.Channel {
        do {
            let target = try await sender.target(link.ownerID)
            let route = try await sender.envelopes.route(target, forceLegacy: false)
            guard case .tls(let context, let expected, _) = route.security,
                let ownerID = UUID(strict: link.ownerID)
            else {
                throw FetchError(.refused, "\(route.label) speaks no TLS: it cannot serve files")
            }
            return try await EnvelopeSender.Channel.open(
                to: route.endpoints, security: .tls(context, expected: expected, deviceID: ownerID),
                deadline: .now + .seconds(10), maximumLineLength: wire.maximumLineLength)
        } catch let error as FetchError {
            throw error
        } catch let error as LookupError {
            throw FetchError(
                .unreachable,
                "the file's owner (\(link.ownerID)) is not a peer this daemon knows: \(error)")
        } catch let error as SendError {
            switch error {
            case .undelivered(let reason): throw FetchError(.unreachable, reason)
            case .refused(let reason): throw FetchError(.refused, reason)
            }
        } catch {
            throw FetchError(.unreachable, "cannot reach the owner of \(link.name): \(error)")
        }
    }

    /// Asks for the file from what the partial file holds (its bytes hashed, so the owner can
    /// check them), or from the start when the owner finds they are not its file's.
    /// - Returns: the range that follows on the connection, and a digest of the bytes before it.
    private func request(
        _ link: PeerFileLink, holding partial: DiskFile, on channel: EnvelopeSender.Channel
    ) async throws -> (FileRangeJM, SHA256Digest) {
        var held = try partial.status().size
        while true {
            let digest = try await FileDigest.digest(of: partial, count: held)
            let fetch = FetchJM(grant: link.grant, offset: held, prefixSHA256: held > 0 ? try digest.current() : nil)
            let messageID = UUID.random().uuidString
            let deadline = ContinuousClock.now + FileFetcher.answerAllowance(forBytes: held)
            try await channel.write(
                .fetch(fetch, versionID: wire.appVersion, messageID: messageID),
                deadline: deadline)
            let reply = try await channel.reply(to: messageID, deadline: deadline)
            if let range = reply.fileRange, range.offset == held { return (range, digest) }
            let status = reply.status ?? "unknown"
            if status == .mismatch && held > 0 {
                try partial.truncate(to: 0)
                held = 0
                continue
            }
            let said = (reply.message ?? status.rawValue).clipped(toUTF8: 500)
            throw FetchError(
                status == .busy || status == .failed ? .unreachable : .refused,
                "\(channel.endpoint) answered \(status.rawValue.clipped(toUTF8: 40)): \(said)")
        }
    }

    /// Writes the bytes of `range` into `partial` as they arrive, feeding `digest`, within the
    /// deadline the range's size earns, stopping (the partial file kept) at the free-space floor.
    private func receive(
        _ range: FileRangeJM, into partial: DiskFile, digest: SHA256Digest, from channel: EnvelopeSender.Channel,
        folder: DownloadsFolder, progress: Progress
    ) async throws {
        let deadline = ContinuousClock.now + TransferAllowance.forBytes(range.length)
        var position = range.offset
        var checkedAt = position
        var reportedAt = ContinuousClock.now
        var writeback = Writeback(of: partial, from: position)
        defer { try? partial.truncate(to: position) }
        while position < range.size {
            let wanted = Int(min(Int64(Self.chunk), range.size - position))
            let at = position
            let timeout = max(deadline - .now, .milliseconds(1))
            let count = try await channel.connection.readBytes(maximumCount: wanted, timeout: timeout) { bytes in
                let raw = UnsafeRawBufferPointer(bytes)
                try partial.write(raw, at: at)
                digest.update(raw)
            }
            guard count > 0 else {
                throw FetchError(
                    .unreachable,
                    "the owner closed the connection at byte \(position) of \(range.size); "
                        + "fetch again to resume")
            }
            position += Int64(count)
            await writeback.wrote(upTo: position)
            if position - checkedAt >= Self.roomCheckBytes {
                try checkRoom(in: folder, for: range.size - position, holding: position)
                checkedAt = position
            }
            if ContinuousClock.now - reportedAt >= .milliseconds(200) {
                await progress(position, range.size, range.offset)
                reportedAt = .now
            }
        }
        await writeback.finish()
    }

    /// Refuses to go on when `bytes` more would take the folder's disk below the free-space floor.
    private func checkRoom(in folder: DownloadsFolder, for bytes: Int64, holding held: Int64) throws(FetchError) {
        guard let space = DiskSpace.of(folder.path) else { return }
        let floor = store.freeFloor.bytes(ofDiskSize: space.size)
        let room = Int64(space.free) - Int64(floor)
        let wanted = min(bytes, Self.roomCheckBytes)
        guard room < wanted else { return }
        let kept = held > 0 ? "; \(held) bytes are kept in the partial file" : ""
        throw FetchError(
            .noRoom,
            "\(folder.path) has \(ByteCount.text(max(space.free, 0))) free, at the floor of "
                + "\(ByteCount.text(floor)) (--min-free)\(kept): free some space and fetch again"
                + (held > 0 ? " to resume" : ""))
    }

    /// How long the owner may take to answer a Fetch: it hashes the bytes before the offset
    /// (and the whole file when it looks changed), at a pace any disk keeps.
    static func answerAllowance(forBytes bytes: Int64) -> Duration {
        .seconds(30) + .seconds(Double(bytes) / Double(64 << 20))
    }
}

/// Why a fetch stopped, and what kind of stop it is (which decides hexctl's exit code).
struct FetchError: Error, CustomStringConvertible {
    enum Kind {
        /// The owner is away, busy, or the connection ended: fetching again later may work.
        case unreachable
        /// The owner refused (no such grant for this key, revoked, expired, changed, missing).
        case refused
        /// The downloads folder reached the free-space floor or filled up; the partial file is kept.
        case noRoom
        /// The bytes were not the granted ones.
        case corrupt
        /// This side could not write or read its own files.
        case local
    }

    let kind: Kind
    let description: String

    init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}
