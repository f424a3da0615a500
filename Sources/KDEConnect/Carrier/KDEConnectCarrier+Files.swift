import HexCarrier
import HexEngine
import HexKit
import HexNet
import HexTLS
import KDEConnectCore

/// Files between hexd and paired KDE Connect devices, as the apps move them: the share packet
/// names the file and a port, the sender listens there (in 1739–1764) as the TLS server, and the
/// receiver connects as the TLS client; each side must show the certificate paired. The sender
/// writes the payload's bytes and closes.
extension KDEConnectCarrier {
    /// The ports a sender offers payloads on (the apps' range).
    static let payloadPorts: ClosedRange<UInt16> = 1_739...1_764
    /// How long a sender waits for the receiver to connect (the apps wait 10 to 30 s).
    static let payloadWait: Duration = .seconds(30)
    /// The deadline of a payload connection's TLS handshake.
    static let payloadHandshake: Duration = .seconds(10)

    // MARK: Receiving

    /// Files waiting for their fetch from one device, at most: the apps send a file's offer once
    /// the previous one's fetch began.
    static let filesQueued = 64

    /// A paired device shares a file: queued for the device's fetcher, which fetches its files one
    /// after the other apart from the link's reader (a slow payload holds neither the link nor
    /// another device's files).
    func queue(_ file: KDEConnectSharedFile, from device: Device) {
        let key = device.key
        guard (fileQueues[key]?.count ?? 0) < Self.filesQueued else {
            logger.limited(
                "kdeconnect file", .info,
                "refused \(file.name.clipped(toUTF8: 80)) from \(device.label): \(Self.filesQueued) of its files wait")
            return
        }
        let idle = fileQueues[key] == nil
        fileQueues[key, default: []].append(file)
        if idle { Task { await self.fetchQueued(from: device) } }
    }

    /// Fetches the device's queued files until none is left.
    private func fetchQueued(from device: Device) async {
        while let file = nextQueuedFile(device.key) { await receive(file, from: device) }
    }

    /// The next file queued from the device, taken by its fetcher; nil once none is left, which
    /// ends the fetcher (a device's key is in `fileQueues` while its fetcher runs).
    private func nextQueuedFile(_ key: String) -> KDEConnectSharedFile? {
        guard var queue = fileQueues[key], !queue.isEmpty else {
            fileQueues[key] = nil
            return nil
        }
        let file = queue.removeFirst()
        fileQueues[key] = queue
        return file
    }

    /// Drops the files waiting from a device no longer paired (the one being fetched stops at its
    /// next check).
    func dropQueuedFiles(_ key: String) {
        if fileQueues[key] != nil { fileQueues[key] = [] }
    }

    /// Whether `device` may still send files: paired, with a link up.
    private func takesFiles(from device: Device) -> Bool {
        devices.isPaired(device.key)
    }

    /// A file from a paired device: admitted by the rules every peer's hexes are (its bytes and
    /// its hex counted against the device's budgets, the downloads folder's free space), fetched
    /// from the device into the downloads folder, and kept as a hex that links to it.
    private func receive(_ file: KDEConnectSharedFile, from device: Device) async {
        guard takesFiles(from: device) else { return }
        let safeName = SafeFileName.make(from: file.name)
        let landing = downloads.folder.path + "/" + safeName
        let hex = ForeignMessage.kdeConnect.hex(
            files: [(safeName, landing)], from: device.identity.name, senderID: device.peerID)
        if let refusal = await admit(file, making: hex, from: device) {
            logger.limited(
                "kdeconnect file", .info,
                "refused \(file.name.clipped(toUTF8: 80)) (\(ByteCount.text(Int(clamping: file.size)))) from "
                    + "\(device.label): \(refusal)")
            return
        }
        let saved: IncomingFiles.Saved
        do {
            saved = try await fetch(file, from: device)
        } catch {
            logger.limited(
                "kdeconnect file", .info,
                "\(file.name.clipped(toUTF8: 80)) from \(device.label) did not land: \(error)")
            return
        }
        let kept = await keep(
            ForeignMessage.kdeConnect.hex(
                files: [(saved.name, saved.path)], from: device.identity.name, senderID: device.peerID),
            from: device, attachedBytes: Int(clamping: saved.size))
        if !kept { DiskFile.remove(saved.path) }
        logger.info(
            "\(saved.name) (\(ByteCount.text(Int(clamping: saved.size)))) from \(device.label): "
                + (kept ? "in \(downloads.folder.path)" : "refused, removed"))
    }

    /// Why a file from `device` is refused before a byte of it is written; nil when it may come.
    private func admit(_ file: KDEConnectSharedFile, making hex: HexJM, from device: Device) async -> String? {
        if let problem = downloads.roomProblem(for: file.size) { return problem }
        let charge = Int64(HexManager.makeHex(from: hex, location: .inbox, at: Date()).storedBytes)
        let (bytes, overflow) = file.size.addingReportingOverflow(charge)
        do {
            let admission = try await intake.store.admission(
                of: device.peerID, proof: device.proof, from: device.address.description,
                bytes: overflow ? .max : Int(clamping: bytes))
            switch admission {
            case .admitted: return nil
            case .askPerson(let outcome), .refused(let outcome): return outcome.explanation
            }
        } catch {
            return "\(error)"
        }
    }

    /// Fetches the payload of `file` from `device` into the downloads folder.
    private nonisolated func fetch(_ file: KDEConnectSharedFile, from device: Device) async throws
        -> IncomingFiles.Saved
    {
        try await BlockingPool.shared.run { [folder = downloads.folder] in try folder.prepare() }
        let deadline = ContinuousClock.now + TransferAllowance.forBytes(file.size)
        guard let port = file.port else {
            // An empty file comes without a payload.
            return try await downloads.receive(
                named: file.name, size: 0, sha256: nil, over: nil, first: [], deadline: deadline, progressed: {},
                stillWanted: { true })
        }
        let channel = try await connect(Endpoint(device.address, port: port), Self.payloadHandshake)
        defer { channel.shutdown() }
        let connection = try await TLSConnection.handshake(
            over: channel, context: tls, as: .client, timeout: Self.payloadHandshake)
        guard connection.peerCertificate == device.certificate else {
            throw Refusal(description: "the payload's connection showed another certificate than the device's")
        }
        // A device unpaired (or gone) meanwhile stops its fetch at the next check.
        return try await downloads.receive(
            named: file.name, size: file.size, sha256: nil, over: connection, first: [], deadline: deadline,
            progressed: {}, stillWanted: { await self.takesFiles(from: device) })
    }

    // MARK: Sending

    /// Sends the files at `paths` to the paired device `peerID`, one after the other: each offered
    /// in a share packet with a port hexd listens on, its bytes written to the device once it
    /// connects (showing the certificate paired), then the connection closed. `progress` hears the
    /// file being sent and the bytes sent of all.
    /// - Throws: `SendError.refused` for a path that is no readable file or a device not paired;
    ///   `.undelivered` when the device is away, does not come for a file, or its link ends.
    package func sendFiles(
        _ paths: [String], to peerID: String, progress: @escaping @Sendable (String, Int64, Int64) async -> Void
    ) async throws(SendError) -> FilesDelivery {
        try await refuseUnlessAllowed(peerID)
        guard let device = device(peerID: peerID) else {
            throw .undelivered("\(peerID) is away: no KDE Connect link with it")
        }
        var sizes: [Int64] = []
        for path in paths {
            do {
                sizes.append(try DiskFile.reading(path).status().size)
            } catch {
                throw .refused("cannot send \(path): \(error)")
            }
        }
        let total = sizes.reduce(Int64(0)) { sum, size in
            let (next, overflow) = sum.addingReportingOverflow(size)
            return overflow ? .max : next
        }
        let free: StreamListener?
        do {
            free = try Self.payloadListener()
        } catch {
            throw .undelivered("no payload can be offered: \(error)")
        }
        guard let listener = free else {
            throw .undelivered("every port from 1739 to 1764 is taken: no payload can be offered")
        }
        defer { listener.socket.shutdown() }
        var sent: Int64 = 0
        for (path, size) in zip(paths, sizes) {
            let name = String(path.split(separator: "/").last ?? Substring(path))
            let offer = KDEConnectShare.file(
                KDEConnectSharedFile(
                    name: name, size: size, port: size == 0 ? nil : listener.port, numberOfFiles: paths.count,
                    totalSize: total))
            let line = Array(offer.encoded(id: Self.milliseconds()).dropLast())
            guard await device.outgoing.write([line], timeout: Self.queueWait) else {
                throw .undelivered("\(device.label): its link ended before \(name) was offered")
            }
            guard size > 0 else { continue }
            let before = sent
            do {
                try await Self.serve(path, size: size, on: listener, to: device, tls: tls) {
                    await progress(name, before + $0, total)
                }
            } catch {
                throw .undelivered("\(device.label): \(name) stopped: \(error)")
            }
            sent += size
        }
        let count = paths.count
        return FilesDelivery(label: device.label, files: count, bytes: sent, certificate: device.certificate) { size in
            "KDE Connect: \(count) file(s) (\(size)) written to the device (it confirms nothing more)"
        }
    }

    /// A listener on the first free port of `payloadPorts`; nil when all are taken.
    /// - Throws: `SocketError` at once for any failure but a port taken (out of descriptors: the
    ///   next port would fail the same way).
    private static func payloadListener() throws(SocketError) -> StreamListener? {
        for port in payloadPorts {
            do {
                return try StreamListener.tcp(port: port)
            } catch let error where error.isAddressInUse {
                continue
            }
        }
        return nil
    }

    /// Waits for the device to connect (another address is turned away), proves the TLS link
    /// both ways, writes the file's bytes and closes.
    private static func serve(
        _ path: String, size: Int64, on listener: StreamListener, to device: Device, tls: ForeignTLSContext,
        progress: (Int64) async -> Void
    ) async throws {
        let file = try DiskFile.reading(path)
        guard try file.status().size == size else {
            throw DiskFileError("read \(path)", reason: "it changed size since it was offered")
        }
        let socket = try await accept(on: listener, from: device.address, until: .now + payloadWait)
        defer { socket.shutdown() }
        let connection = try await TLSConnection.handshake(
            over: socket, context: tls, as: .server, timeout: payloadHandshake)
        guard connection.peerCertificate == device.certificate else {
            throw Refusal(description: "the device that came for it showed another certificate than the one paired")
        }
        try await FileStreaming.write(
            file, size: size, to: connection, until: .now + TransferAllowance.forBytes(size), progress: progress)
        // The receiver counts the bytes; it may close first. A second is enough for the last ones
        // to leave before the connection closes.
        _ = try? await connection.read(maximumCount: 1, timeout: .seconds(1)) { _ in }
    }

    /// The next connection from `address` to `listener`, by `deadline`.
    private static func accept(
        on listener: StreamListener, from address: IPAddress, until deadline: ContinuousClock.Instant
    ) async throws -> Socket {
        try await withThrowingTaskGroup(of: Socket?.self) { group in
            group.addTask {
                while true {
                    let socket = try await listener.accept()
                    if socket.remoteAddress == address { return socket }
                    socket.shutdown()
                }
            }
            group.addTask {
                try await Task.sleep(until: deadline)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let socket = first else {
                throw SocketError.timedOut("wait for the device to fetch the file")
            }
            return socket
        }
    }
}
