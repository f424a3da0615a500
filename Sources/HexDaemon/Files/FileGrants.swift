import HexCarrier
import HexKit
import HexNet
import Synchronization

/// The files this device shares with peers: grants made by the `peer` link provider, and the
/// check every Fetch passes before a byte is served (Protocol.md, section 15).
struct FileGrants: Sendable {
    let store: HexService
    let settings: FileSettings
    /// Serves at once at most `perPeer` fetches to one key and `total` in all.
    let slots = ServingSlots(perPeer: 2, total: 8)
    /// The pace of all files served together; nil serves as fast as peers read.
    let pace: SendPace?

    init(store: HexService, settings: FileSettings) {
        self.store = store
        self.settings = settings
        pace = settings.maximumSendRate.map(SendPace.init(bytesPerSecond:))
    }

    /// The peer a file is shared with: the one key that may fetch it.
    struct Recipient: Sendable, Equatable {
        /// A key-derived device ID, uppercase.
        var deviceID: String
        var name: String
    }

    /// What a Fetch gets: the file, open, from the offset asked; or the status that refuses it.
    enum Answer {
        case serve(FileGrant, DiskFile, offset: Int64)
        case refuse(AckStatus, String)
    }

    /// Hashes the file at `path` and records a grant of it to `recipient`, for the grant lifetime.
    /// - Throws: `LinkProviderError` naming the path.
    func grant(_ path: String, to recipient: Recipient) async throws -> FileGrant {
        do {
            let file = try DiskFile.reading(path)
            let before = try file.status()
            let sha256 = try await FileDigest.sha256(of: file)
            let after = try file.status()
            guard before == after else {
                throw LinkProviderError("\(path) changed while it was hashed; share it once it is written")
            }
            let now = Date()
            let name = path.split(separator: "/").last.map(String.init) ?? path
            let grant = FileGrant(
                path: path, name: name, size: after.size, sha256: sha256,
                recipientID: recipient.deviceID, recipientName: recipient.name, created: now,
                expires: now + settings.grantLifetime.inSeconds, identity: FileIdentity(after))
            try await store.insertGrant(grant, forgettingEndedBefore: now - settings.grantLifetime.inSeconds)
            return grant
        } catch let error as DiskFileError where error.isMissing {
            throw LinkProviderError("\(path) does not exist")
        } catch let error as LinkProviderError {
            throw error
        } catch {
            throw LinkProviderError("\(error)")
        }
    }

    /// Checks a Fetch from the key `deviceID` proved (nil over plaintext): the grant must be this
    /// key's, neither revoked nor expired, the file still the bytes granted (hashed again when it
    /// looks otherwise), and the bytes before the offset the ones the fetching side holds.
    func answer(_ request: FetchJM, from deviceID: String?) async -> Answer {
        guard let deviceID else { return .refuse(.rejected, "files are fetched over TLS only") }
        let found: FileGrant?
        do {
            // The rule of Stores and Alerts: a blocked key gets nothing, not even what was shared with it.
            if try await store.isBlocked(senderUUID: deviceID) {
                return .refuse(.rejected, "\(store.identity.name) blocked you.")
            }
            found = try await store.grant(id: request.grant)
        } catch {
            return .refuse(.failed, "cannot read the grant: \(error)")
        }
        // Another key's grant is answered as one that does not exist: a forwarded link tells its
        // holder nothing.
        guard let grant = found, grant.recipientID == deviceID else {
            return .refuse(.notFound, "no file \(request.grant) is granted to this key")
        }
        if grant.revoked != nil { return .refuse(.revoked, "\(grant.name) was revoked by its owner") }
        guard grant.expires > Date() else { return .refuse(.expired, "the grant of \(grant.name) expired") }
        guard request.offset <= grant.size else {
            return .refuse(.mismatch, "\(grant.name) has \(grant.size) bytes, fewer than the offset \(request.offset)")
        }
        do {
            let file = try DiskFile.reading(grant.path)
            let identity = FileIdentity(try file.status())
            if identity != grant.identity {
                guard try await FileDigest.sha256(of: file) == grant.sha256 else {
                    return .refuse(.changed, "\(grant.name) changed since it was shared; ask for it to be shared again")
                }
                try await store.updateGrantIdentity(id: grant.id, to: identity)
            }
            if request.offset > 0 {
                guard try await FileDigest.sha256(of: file, count: request.offset) == request.prefixSHA256 else {
                    return .refuse(
                        .mismatch,
                        "the first \(request.offset) bytes held are not \(grant.name)'s; fetch from 0")
                }
            }
            return .serve(grant, file, offset: request.offset)
        } catch let error as DiskFileError where error.isMissing {
            return .refuse(.missing, "\(grant.name) was moved or deleted since it was shared")
        } catch {
            return .refuse(.failed, "cannot read \(grant.name): \(error)")
        }
    }
}

/// Bounds the fetches served at once, per key and in all: one more is refused (`busy`), not
/// queued, so a peer asking for many files cannot hold the others' turns.
final class ServingSlots: Sendable {
    let perPeer: Int
    let total: Int
    private let taken = Mutex<[String: Int]>([:])

    init(perPeer: Int, total: Int) {
        self.perPeer = perPeer
        self.total = total
    }

    /// Takes a slot for `deviceID`; false when none is free.
    func take(for deviceID: String) -> Bool {
        taken.withLock { taken in
            guard taken[deviceID, default: 0] < perPeer, taken.values.reduce(0, +) < total else { return false }
            taken[deviceID, default: 0] += 1
            return true
        }
    }

    func release(for deviceID: String) {
        taken.withLock { taken in
            let left = taken[deviceID, default: 1] - 1
            taken[deviceID] = left > 0 ? left : nil
        }
    }
}

/// Paces the bytes of every file served, together, to at most `bytesPerSecond` (`--max-send-rate`):
/// each chunk is given its slot on one timeline, and waits for it.
final class SendPace: Sendable {
    let bytesPerSecond: Int
    /// When the bytes given slots so far will have gone at the pace.
    private let due = Mutex<ContinuousClock.Instant?>(nil)

    init(bytesPerSecond: Int) {
        self.bytesPerSecond = max(bytesPerSecond, 1)
    }

    /// Waits until `bytes` more may go.
    func wait(toSend bytes: Int) async throws {
        let now = ContinuousClock.now
        let start = due.withLock { due in
            let start = max(due ?? now, now)
            due = start + .seconds(Double(bytes) / Double(bytesPerSecond))
            return start
        }
        if start > now { try await Task.sleep(until: start, clock: .continuous) }
    }
}
