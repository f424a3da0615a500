import HexCarrier
import HexKit
import HexNet

/// Answers Fetch envelopes: the Ack `sending` and the granted file's bytes from the offset asked,
/// streamed from disk a chunk at a time (only as fast as the peer reads), or an Ack saying why
/// not (Protocol.md, section 15).
struct FileServer: Sendable {
    let grants: FileGrants
    let versionID: String
    let logger: Logger

    /// Bytes read and written at a time: the memory one fetch holds.
    static let chunk = 256 * 1024

    /// Answers `envelope` (a Fetch) on `connection`.
    /// - Parameters:
    ///   - deviceID: the key the connection proved; nil over plaintext.
    ///   - progressed: told as each chunk leaves, so that a connection carrying a file is never
    ///     taken for one that sits idle (the connection cap closes those first).
    /// - Returns: false when the connection can no longer carry lines (a write failed or the
    ///   file could not be sent whole): it must be closed.
    func serve(
        _ envelope: Envelope, from deviceID: String?, on connection: StreamConnection,
        remote: String, progressed: () -> Void
    ) async -> Bool {
        guard let request = envelope.fetch else {
            return await reply(
                .invalid,
                "a Fetch needs a jmObject of type Fetch with a grant id (and prefixSHA256 "
                    + "with an offset)", to: envelope, on: connection)
        }
        if let deviceID, !grants.slots.take(for: deviceID) {
            return await reply(
                .busy,
                "this daemon sends at most \(grants.slots.perPeer) files to one key and "
                    + "\(grants.slots.total) in all at once; try again when one is done",
                to: envelope, on: connection)
        }
        defer { if let deviceID { grants.slots.release(for: deviceID) } }
        switch await grants.answer(request, from: deviceID) {
        case .refuse(let status, let reason):
            logger.limited(
                "fetch refused", .info,
                "refused a fetch of \(request.grant.prefix(8)) by \(remote): \(reason)")
            return await reply(status, reason, to: envelope, on: connection)
        case .serve(let grant, let file, let offset):
            return await send(
                grant, file, from: offset, answering: envelope, on: connection, remote: remote,
                progressed: progressed)
        }
    }

    private func send(
        _ grant: FileGrant, _ file: DiskFile, from offset: Int64, answering envelope: Envelope,
        on connection: StreamConnection, remote: String, progressed: () -> Void
    ) async -> Bool {
        let range = FileRangeJM(
            name: grant.name, size: grant.size, sha256: grant.sha256, offset: offset,
            length: grant.size - offset)
        let start = ContinuousClock.now
        let deadline = start + TransferAllowance.forBytes(range.length)
        var position = offset
        do {
            try await connection.writeLine(
                Envelope.sending(range, messageID: envelope.messageID, versionID: versionID)
                    .encodedLine(), timeout: deadline - .now)
            let chunk = Chunk(count: Self.chunk)
            while position < grant.size {
                let wanted = Int(min(Int64(Self.chunk), grant.size - position))
                let at = position
                let read = try await BlockingPool.shared.run { try chunk.fill(from: file, count: wanted, at: at) }
                // A file cut shorter since it was checked cannot be sent whole: the peer resumes.
                guard read == wanted else { throw DiskFileError("read \(grant.path)", reason: "it got shorter") }
                try await grants.pace?.wait(toSend: read)
                try await connection.stream.write(
                    read == chunk.bytes.count ? chunk.bytes : Array(chunk.bytes[..<read]),
                    timeout: max(deadline - .now, .milliseconds(1)))
                position += Int64(read)
                progressed()
            }
        } catch {
            logger.info(
                "stopped sending \(grant.name) to \(grant.recipientName) (\(remote)) at byte \(position) "
                    + "of \(grant.size): \(error)")
            return false
        }
        let milliseconds = Int(clamping: (ContinuousClock.now - start).inSeconds * 1_000)
        logger.info(
            "sent \(grant.name) to \(grant.recipientName) (\(remote)): bytes \(offset) to \(grant.size) "
                + "in \(milliseconds) ms", [("grant", grant.id), ("bytes", String(range.length))])
        do {
            try await grants.store.recordFetch(ofGrant: grant.id, at: Date())
        } catch {
            logger.warning("cannot count the fetch of \(grant.name): \(error)")
        }
        return true
    }

    private func reply(
        _ status: AckStatus, _ reason: String, to envelope: Envelope, on connection: StreamConnection
    ) async -> Bool {
        let reply = Envelope.ack(status, messageID: envelope.messageID, message: reason, versionID: versionID)
        return (try? await connection.writeLine(reply.encodedLine(), timeout: .seconds(10))) != nil
    }
}

/// The buffer of one fetch, filled on the blocking pool and written from the task serving the
/// fetch, in turn: one user at a time, so the array is never copied.
private final class Chunk: @unchecked Sendable {
    private(set) var bytes: [UInt8]

    init(count: Int) {
        bytes = [UInt8](repeating: 0, count: count)
    }

    func fill(from file: DiskFile, count: Int, at offset: Int64) throws -> Int {
        try bytes.withUnsafeMutableBytes {
            try file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<count]), at: offset)
        }
    }
}
