import HexKit

/// What `status` reports about the daemon.
public struct StatusReport: Sendable, Codable, Equatable {
    public var peerUUID: String
    public var name: String
    public var versionID: String
    /// The daemon plays a legacy (1.x) peer.
    public var legacy: Bool
    public var tcpPort: UInt16
    public var discoveryPort: UInt16
    public var dataDirectory: String
    public var peers: Int
    public var inbox: Int
    public var unchecked: Int
    public var hexlist: Int
    /// Discovery datagrams received, and how many of them were dropped as malformed or oversized.
    public var datagramsReceived: Int
    public var datagramsMalformed: Int
    public var datagramsOversized: Int
    /// Datagrams dropped because their source sent more than the beacon rate.
    public var datagramsRateLimited: Int
    /// Peers dropped from the full table to make room for new ones.
    public var peersEvicted: Int
    /// Beacons dropped because their signature does not hold, or a derived ID came unsigned;
    /// nil from a daemon older than this field.
    public var datagramsForged: Int?
    /// Signed beacons dropped as older than one accepted before from the same key (replays).
    public var datagramsReplayed: Int?
    /// This device's key fingerprint (SHA-256 of its certificate, 64 hex digits); nil when it
    /// plays a legacy peer, which speaks no TLS.
    public var fingerprint: String?
    /// Whose hexes are taken (`hexd --accept`): paired, known or anyone.
    public var accept: String
    /// Sends waiting in the outbox.
    public var outbox: Int
    /// Peer connections, and what the budgets closed; nil from a daemon older than this field.
    public var connections: ConnectionCounts?
    /// The inbox's budgets and the disk's floors; nil from a daemon older than this field.
    public var storage: StorageReport?
    /// Whether the daemon announces itself; nil from a daemon older than this field.
    public var visibility: VisibilityReport?
    /// Seconds between this daemon's beacons now: `--announce-interval`, longer on a crowded
    /// segment; nil from an older daemon.
    public var announceInterval: Double?
    /// Where the last beacons went, address by address of each interface, and which were skipped
    /// and why; nil when `--broadcast` names the destinations, while hidden, or from an older daemon.
    public var interfaces: [InterfaceReport]?
    /// Where beacons could not be sent since the start, and why (each said once in the log);
    /// nil when there was nothing, or from an older daemon.
    public var beaconFailures: [String]?
    /// Why no peer may have been heard, and what to open in a firewall: set once beacons have
    /// gone out for 30 intervals with no peer heard, until one is; nil otherwise.
    public var discoveryHint: String?
    /// Whether the daemon is found by DNS-SD, as what it published, or why it is off; nil from a
    /// daemon older than this field.
    public var dnssd: String?
    /// hexd as a device of each other protocol it is one of now (LocalSend, KDE Connect, Quick
    /// Share; none of those `--localsend off` and the like turned off, or still starting); nil
    /// from an older daemon.
    public var carriers: [CarrierReport]?
    /// The kinds of device hexd is about to be (`LocalSend`, `KDE Connect`): started once hexd
    /// serves its own peers, their personas read or, on a first start, made; nil when none is.
    public var starting: [String]?

    public init(
        peerUUID: String, name: String, versionID: String, legacy: Bool, tcpPort: UInt16, discoveryPort: UInt16,
        dataDirectory: String, peers: Int, inbox: Int, unchecked: Int, hexlist: Int, datagramsReceived: Int,
        datagramsMalformed: Int, datagramsOversized: Int, datagramsRateLimited: Int, peersEvicted: Int,
        fingerprint: String?, accept: String,
        outbox: Int, connections: ConnectionCounts? = nil, datagramsForged: Int? = nil, datagramsReplayed: Int? = nil,
        storage: StorageReport? = nil, visibility: VisibilityReport? = nil, discoveryHint: String? = nil,
        interfaces: [InterfaceReport]? = nil, announceInterval: Double? = nil, beaconFailures: [String]? = nil,
        dnssd: String? = nil, carriers: [CarrierReport]? = nil, starting: [String]? = nil
    ) {
        self.starting = starting
        self.carriers = carriers
        self.dnssd = dnssd
        self.beaconFailures = beaconFailures
        self.interfaces = interfaces
        self.announceInterval = announceInterval
        self.storage = storage
        self.visibility = visibility
        self.discoveryHint = discoveryHint
        self.datagramsForged = datagramsForged
        self.datagramsReplayed = datagramsReplayed
        self.outbox = outbox
        self.connections = connections
        self.fingerprint = fingerprint
        self.accept = accept
        self.peerUUID = peerUUID
        self.name = name
        self.versionID = versionID
        self.legacy = legacy
        self.tcpPort = tcpPort
        self.discoveryPort = discoveryPort
        self.dataDirectory = dataDirectory
        self.peers = peers
        self.inbox = inbox
        self.unchecked = unchecked
        self.hexlist = hexlist
        self.datagramsReceived = datagramsReceived
        self.datagramsMalformed = datagramsMalformed
        self.datagramsOversized = datagramsOversized
        self.datagramsRateLimited = datagramsRateLimited
        self.peersEvicted = peersEvicted
    }
}

/// A peer in the daemon's table.
public struct PeerInfo: Sendable, Codable, Equatable {
    public var uuid: String
    public var name: String
    public var versionID: String
    /// Where its envelopes go: its latest address and TCP port.
    public var endpoint: String
    /// Every address it was heard from.
    public var addresses: [String]
    /// Gets only what the original app understood.
    public var legacy: Bool
    /// Seconds since its last beacon.
    public var lastSeen: Double
    /// The key fingerprint it announced; sends to it go over TLS and must prove it.
    public var fingerprint: String?
    /// How its key is trusted: `paired`, or `pinned` on first use; nil before first contact.
    public var trust: SenderTrust?
    /// A pairing under way with it.
    public var pairing: PairingStatus?
    /// Another host claims its UUID with another key (or none).
    public var keyMismatch: KeyMismatch?
    /// Other peers, known here by a pinned or paired key, seen under the same name: a name is no
    /// identity. Nil when there is none.
    public var namesakes: [String]?
    /// The protocol it speaks; nil from a daemon older than this field (a hexd peer then).
    public var kind: PeerKind?
    /// That protocol's name as people know it (`LocalSend`), its version in `versionID`; nil for hexd
    /// peers and from a daemon older than this field.
    public var protocolName: String?
    /// True: its protocol gives it no key to prove (Quick Share), so a nil `fingerprint` says nothing
    /// of plaintext.
    public var keyless: Bool?
    /// True: `hexctl pair` may ask it to pair (a KDE Connect device not paired, no pairing under way).
    /// A hexd peer whose key is pinned may be asked too, as its `trust` says.
    public var pairable: Bool?
    /// What a device of another protocol says it is (LocalSend: `mobile`, `desktop`, …) and its
    /// make or system; nil for hexd peers.
    public var deviceType: String?
    public var deviceModel: String?

    public init(
        uuid: String, name: String, versionID: String, endpoint: String, addresses: [String], legacy: Bool,
        lastSeen: Double, fingerprint: String?,
        trust: SenderTrust? = nil, pairing: PairingStatus? = nil, keyMismatch: KeyMismatch? = nil,
        namesakes: [String]? = nil, kind: PeerKind? = .hexd, protocolName: String? = nil, keyless: Bool? = nil,
        pairable: Bool? = nil, deviceType: String? = nil, deviceModel: String? = nil
    ) {
        self.namesakes = namesakes
        self.kind = kind
        (self.protocolName, self.keyless, self.pairable) = (protocolName, keyless, pairable)
        self.deviceType = deviceType
        self.deviceModel = deviceModel
        self.fingerprint = fingerprint
        self.trust = trust
        self.pairing = pairing
        self.keyMismatch = keyMismatch
        self.uuid = uuid
        self.name = name
        self.versionID = versionID
        self.endpoint = endpoint
        self.addresses = addresses
        self.legacy = legacy
        self.lastSeen = lastSeen
    }
}

/// hexd as a device of another protocol (`status`).
public struct CarrierReport: Sendable, Codable, Equatable {
    /// The protocol as people know it (`LocalSend`), and the kind of peer its devices are.
    public var name: String
    public var kind: PeerKind
    /// The TCP port it serves its devices on.
    public var port: UInt16
    /// What its devices know hexd by (LocalSend: its certificate's fingerprint; KDE Connect: its
    /// device ID; Quick Share: its endpoint ID), and what that is called.
    public var identity: String
    public var identityName: String
    /// Its figures (LocalSend: `devices`; KDE Connect: `devices`, `paired`; Quick Share:
    /// `receivers`, `offersWaiting`).
    public var counts: [CarrierCount]
    /// What the person should know: a port another program holds, why phones may not show up.
    public var notes: [String]

    public init(
        name: String, kind: PeerKind, port: UInt16, identity: String, identityName: String, counts: [CarrierCount],
        notes: [String]
    ) {
        (self.name, self.kind, self.port, self.identity, self.identityName) = (name, kind, port, identity, identityName)
        (self.counts, self.notes) = (counts, notes)
    }
}

/// One of a carrier's figures.
public struct CarrierCount: Sendable, Codable, Equatable {
    /// Its name (`devices`), its number, and the figure in words (`2 devices listed`).
    public var name: String
    public var count: Int
    public var words: String

    public init(name: String, count: Int, words: String) {
        (self.name, self.count, self.words) = (name, count, words)
    }
}

/// A pairing under way with a peer (Protocol.md, section 12).
public struct PairingStatus: Sendable, Codable, Equatable {
    /// The verification code both sides show: 8 hex digits.
    public var code: String
    /// True: the peer asked, and this side's user accepts with `hexctl pair --accept`; false:
    /// this side asked, and waits for the peer's user.
    public var awaitingUs: Bool
    /// A device's offer waiting for the user's yes (a LocalSend or Quick Share device's, Protocol.md,
    /// sections 16.3 and 18): what it offers; `code` is then empty.
    public var offer: String?
    /// The protocol the offer came by (`Quick Share`); nil without an offer or from an older daemon.
    public var offerBy: String?
    /// What the user should check before taking the offer (`its screen shows the same PIN`); nil when
    /// there is nothing to check.
    public var offerCheck: String?
    /// True: taking the offer also lets the device send from now on without asking (LocalSend).
    public var offerPairs: Bool?

    public init(
        code: String, awaitingUs: Bool, offer: String? = nil, offerBy: String? = nil, offerCheck: String? = nil,
        offerPairs: Bool? = nil
    ) {
        self.code = code
        self.awaitingUs = awaitingUs
        self.offer = offer
        (self.offerBy, self.offerCheck, self.offerPairs) = (offerBy, offerCheck, offerPairs)
    }
}

/// A beacon that claimed a peer's UUID with a key other than the one pinned to it.
public struct KeyMismatch: Sendable, Codable, Equatable {
    /// Where the claim came from: `HOST:PORT`.
    public var endpoint: String
    /// The key it announced; nil when it announced none (as if it spoke plaintext).
    public var fingerprint: String?
    /// The key pinned to the UUID, which sends still require.
    public var pinned: String

    public init(endpoint: String, fingerprint: String?, pinned: String) {
        self.endpoint = endpoint
        self.fingerprint = fingerprint
        self.pinned = pinned
    }
}

/// The result of `pair`, `pair --accept`, `unpair` and `trust.reset`: how a peer's key is trusted now.
public struct TrustReport: Sendable, Codable, Equatable {
    public var peerUUID: String
    /// The peer's name, as it announced it.
    public var peer: String
    /// The peer's key; nil once its trust is reset.
    public var key: String?
    /// `paired`, `pinned`, or nil: nothing pinned, the next key to prove itself is pinned on first use.
    public var trust: SenderTrust?
    /// pair: the verification code both users compare.
    public var code: String?
    /// pair: the pairing waits for the peer's user to accept.
    public var awaitingPeer: Bool?
    /// A device's offer the user answered (LocalSend, Quick Share): what it offered.
    public var offer: String?
    /// Whether that offer was let in (a LocalSend device is paired then; Quick Share has no pairing).
    public var accepted: Bool?

    public init(
        peerUUID: String, peer: String, key: String?, trust: SenderTrust?, code: String? = nil,
        awaitingPeer: Bool? = nil, offer: String? = nil, accepted: Bool? = nil
    ) {
        self.offer = offer
        self.accepted = accepted
        self.peerUUID = peerUUID
        self.peer = peer
        self.key = key
        self.trust = trust
        self.code = code
        self.awaitingPeer = awaitingPeer
    }
}

/// The result of a send.
public struct SendReport: Sendable, Codable, Equatable {
    /// Where it went (`name (HOST:PORT)` or `HOST:PORT`).
    public var peer: String
    /// The envelope's messageID; nil for a legacy peer, which gets none.
    public var messageID: String?
    /// The Ack's status; nil when no Ack was expected (legacy peer, or `wait` false).
    public var status: AckStatus?
    public var message: String
    /// Milliseconds from connecting to the Ack (or to the end of writing when no Ack is awaited).
    public var milliseconds: Double
    /// The id the receiver gave the stored hex (from its Ack; none from a legacy peer).
    public var hexID: String?
    /// The key the receiver proved over TLS; nil when the send went over plaintext.
    public var peerKey: String?

    public init(
        peer: String, messageID: String?, status: AckStatus?, message: String, milliseconds: Double,
        hexID: String? = nil, peerKey: String? = nil
    ) {
        self.peerKey = peerKey
        self.peer = peer
        self.messageID = messageID
        self.status = status
        self.message = message
        self.milliseconds = milliseconds
        self.hexID = hexID
    }
}

/// A send committed to the outbox.
public struct QueuedReport: Sendable, Codable, Equatable {
    /// The envelope's messageID, the same on every attempt.
    public var messageID: String
    /// The destination as the user reads it: a peer's name, or `HOST:PORT`.
    public var peer: String
    /// The peer's UUID, when the send follows a peer rather than an address.
    public var peerUUID: String?
    /// When it is given up if still undelivered.
    public var expires: Date

    public init(messageID: String, peer: String, peerUUID: String?, expires: Date) {
        self.messageID = messageID
        self.peer = peer
        self.peerUUID = peerUUID
        self.expires = expires
    }
}

/// A send waiting in the outbox.
public struct OutboxItem: Sendable, Codable, Equatable {
    public var messageID: String
    /// `hex` or `alert`.
    public var kind: String
    /// The destination as the user reads it: a peer's name, or `HOST:PORT`.
    public var peer: String
    /// The peer's UUID, when the send follows a peer wherever it announces itself.
    public var peerUUID: String?
    /// `HOST:PORT`, when the send stays at an address the user typed.
    public var address: String?
    /// Attempts made so far.
    public var attempts: Int
    public var nextAttempt: Date
    /// Why the last attempt failed.
    public var lastError: String?
    public var created: Date
    public var expires: Date

    public init(
        messageID: String, kind: String, peer: String, peerUUID: String?, address: String?, attempts: Int,
        nextAttempt: Date,
        lastError: String?, created: Date, expires: Date
    ) {
        self.messageID = messageID
        self.kind = kind
        self.peer = peer
        self.peerUUID = peerUUID
        self.address = address
        self.attempts = attempts
        self.nextAttempt = nextAttempt
        self.lastError = lastError
        self.created = created
        self.expires = expires
    }
}

/// An interface address in `status`: where its beacons go, or why none do.
public struct InterfaceReport: Sendable, Codable, Equatable {
    public var interface: String
    public var address: String
    /// The broadcast address its beacons go to; nil when it is skipped.
    public var broadcast: String?
    /// Why it is skipped (down, loopback, excluded, ...); nil when beacons go out on it.
    public var skipped: String?

    public init(interface: String, address: String, broadcast: String?, skipped: String?) {
        self.interface = interface
        self.address = address
        self.broadcast = broadcast
        self.skipped = skipped
    }
}
