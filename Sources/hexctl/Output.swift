import HexControl
import HexKit

/// How hexctl shows things to a person. Text from peers is printed as JSON string literals where
/// it could carry control characters, so a peer cannot drive the terminal.
enum Output {
    /// One line for a hex in a list; `truncated`: a field was cut short (marked with "…").
    static func hexLine(_ hex: HexSummary, truncated: Bool = false) -> String {
        let mark = hex.location == .inbox && !hex.isChecked ? "*" : " "
        let links = hex.linkCount == 1 ? "1 link" : "\(hex.linkCount) links"
        let trust = hex.senderTrust.map { " (\($0.rawValue))" } ?? ""
        return "\(mark) \(hex.id.uuidString.prefix(8))  \(hex.timestamp.formatted(.iso8601))  "
            + "\(json(hex.hexDescription))  "
            + "from \(json(hex.senderName)) \(shortID(hex.senderUUID))\(trust)  \(links)"
            + (truncated ? "  …" : "")
    }

    /// A peer's ID as lists show it beside every name (a name is not an identity): a UUID's first
    /// 8 digits, a device of another kind's prefix and the first 8 characters after it
    /// (`kdeconnect:9b48eaa8`); "(no ID)" when the sender gave none.
    static func shortID(_ id: String?) -> String {
        id?.shortPeerID ?? "(no ID)"
    }

    /// How a sender was known, for a person.
    static func describe(_ trust: SenderTrust) -> String {
        switch trust {
        case .paired: "its paired key (TLS)"
        case .pinned: "the key first seen with it (TLS)"
        case .new: "a key met for the first time with this hex (TLS; nothing else vouches for its name yet)"
        case .plaintext: "its own word (plaintext, a legacy peer)"
        }
    }

    static func hexDetail(_ hex: Hex) -> String {
        var lines = [
            "id: \(hex.id.uuidString)",
            "location: \(hex.location.rawValue)"
                + "\(hex.location == .inbox ? (hex.isChecked ? " (checked)" : " (unchecked)") : "")",
            "description: \(json(hex.hexDescription))",
            "color: \(json(hex.hexColor))",
            "from: \(json(hex.senderName)) \(json(hex.senderUUID))"
                + (hex.senderTrust.map { ", known by \(Self.describe($0))" } ?? ""),
            "time: \(hex.timestamp.formatted(.iso8601))",
        ]
        for (index, link) in hex.links.enumerated() {
            lines.append(
                "link \(index + 1): \(json(link.url)) \(json(link.linkDescription)) [\(json(link.service.rawValue))]")
        }
        return lines.joined(separator: "\n")
    }

    /// What a peer's VERSION column says: hexd's version (legacy or not), or the other protocol
    /// and its version (a version of digits and dots as it is, any other quoted). A daemon older
    /// than `protocolName` gives only the kind.
    private static func version(of peer: PeerInfo) -> String {
        let kind = peer.kind.flatMap { $0 == .hexd ? nil : $0.rawValue }
        guard let name = peer.protocolName ?? kind else {
            return json(peer.versionID) + (peer.legacy ? " (legacy)" : "")
        }
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        let plain =
            peer.versionID.utf8.count <= 16
            && peer.versionID.utf8.allSatisfy { $0 == UInt8(ascii: ".") || digits.contains($0) }
        return peer.versionID.isEmpty ? name : name + " " + (plain ? peer.versionID : json(peer.versionID))
    }

    /// Whether `peer` is a device of another protocol listed by a daemon older than `keyless`, which
    /// does not say whether its protocol has keys at all.
    private static func isUnsaid(_ peer: PeerInfo) -> Bool {
        peer.protocolName == nil && peer.kind != nil && peer.kind != .hexd
    }

    /// The peer table, then a line for each pairing under way and each key mismatch.
    static func peers(_ peers: [PeerInfo]) -> String {
        guard !peers.isEmpty else { return "no peers" }
        let rows =
            [["NAME", "UUID", "VERSION", "ENDPOINT", "KEY", "TRUST", "SEEN"]]
            + peers.map { peer in
                [
                    json(peer.name), peer.uuid, version(of: peer), peer.endpoint,
                    peer.fingerprint.map { String($0.prefix(16)) }
                        ?? (peer.keyless == true
                            ? "(none)" : peer.keyMismatch == nil && !isUnsaid(peer) ? "(plaintext)" : "-"),
                    (peer.trust?.rawValue ?? "-") + (peer.keyMismatch == nil ? "" : " MISMATCH"),
                    String(Int(clamping: peer.lastSeen.rounded())) + "s ago",
                ]
            }
        let widths = (0..<7).map { column in rows.map { $0[column].count }.max() ?? 0 }
        let table = rows.map { row in
            zip(row, widths).map { $0.0.padded(to: $0.1) }.joined(separator: "  ").trimmed
        }
        let notes = peers.flatMap { peer -> [String] in
            var notes: [String] = []
            if let pairing = peer.pairing, let offer = pairing.offer {
                let advice =
                    pairing.offerCheck.map { "if \($0)" }
                    ?? (pairing.offerPairs == true ? "to let it in (it is paired then)" : "to accept it")
                notes.append(
                    "\(json(peer.name)) wants to send \(offer)\(pairing.offerBy.map { " by \($0)" } ?? ""), and waits "
                        + "a minute: \(advice), run: hexctl pair --accept \(peer.uuid.shortPeerID ?? peer.uuid)")
            } else if let pairing = peer.pairing {
                notes.append(
                    pairing.awaitingUs
                        ? "\(json(peer.name)) asks to pair, code \(pairing.code): "
                            + "if it shows the same, run: hexctl pair --accept \(peer.uuid)"
                        : "pairing with \(json(peer.name)), code \(pairing.code): waiting for its user to accept")
            }
            if let mismatch = peer.keyMismatch {
                notes.append(
                    "warning: \(mismatch.endpoint) claims to be \(json(peer.name)) (\(peer.uuid)) with "
                        + (mismatch.fingerprint.map { "the key \($0.prefix(16))" } ?? "no key")
                        + ", but its pinned key is \(mismatch.pinned.prefix(16)); sends go only to the pinned key"
                        + " (if the peer was reinstalled: hexctl trust --reset \(peer.uuid))")
            }
            if let namesakes = peer.namesakes {
                notes.append(
                    "warning: \(json(peer.name)) (\(peer.uuid)) is not the \(json(peer.name)) "
                        + "whose key is pinned here as "
                        + namesakes.joined(separator: ", ")
                        + ": same name, another device (or that one was reinstalled)")
            }
            return notes
        }
        return (table + notes).joined(separator: "\n")
    }

    /// How a peer's key is trusted after pair, unpair or trust --reset.
    static func trust(_ report: TrustReport) -> String {
        let peer = report.peer.isEmpty ? report.peerUUID : "\(json(report.peer)) (\(report.peerUUID))"
        if let offer = report.offer {
            guard report.accepted == true || report.trust == .paired else {
                return "declined what \(peer) offered (\(offer)): nothing is stored"
            }
            return report.trust == .paired
                ? "let \(peer) in: it sends \(offer) now, and is paired, key \(report.key ?? "?")"
                : "let \(peer) in: it sends \(offer) now"
        }
        if let code = report.code {
            if report.awaitingPeer != true {
                return report.trust == .paired
                    ? "paired with \(peer), code \(code); key \(report.key ?? "?")"
                    : "declined the pairing request of \(peer) (code \(code)): nothing is pinned or sent"
            }
            return """
                verification code: \(code)
                asked \(peer) to pair; on it, 'hexctl peers' shows the code and the command that accepts:
                its user runs it only if the code is the same (a different code means another host is in the middle)
                """
        }
        switch report.trust {
        case nil: return "forgot the key pinned to \(peer): the next key it proves is pinned"
        case .some(let trust): return "\(peer) is now \(trust.rawValue), key \(report.key ?? "?")"
        }
    }

    static func status(_ status: StatusReport) -> String {
        """
        name: \(json(status.name)) (\(status.peerUUID))
        version: \(status.versionID)\(status.legacy ? " (playing a legacy peer)" : "")
        envelopes: TCP \(status.tcpPort); discovery: UDP \(status.discoveryPort)\(beaconInterval(status))
        visibility: \(status.visibility?.text ?? "visible")\(status.dnssd.map { "\ndns-sd: " + $0 } ?? "")
        data directory: \(status.dataDirectory)
        key: \(status.fingerprint ?? "none (a legacy peer speaks no TLS)")
        accepts hexes from: \(status.accept)
        peers: \(status.peers)
        outbox: \(status.outbox) waiting
        inbox: \(status.inbox) (\(status.unchecked) unchecked); My Hexlist: \(status.hexlist)
        discovery datagrams: \(status.datagramsReceived) received, \(status.datagramsMalformed) malformed, \
        \(status.datagramsOversized) oversized, \(status.datagramsRateLimited) over the rate limit, \
        \(status.datagramsForged ?? 0) forged, \(status.datagramsReplayed ?? 0) replayed
        peers dropped from the full table: \(status.peersEvicted)
        """ + (status.interfaces.map(interfaces) ?? "")
            + (status.beaconFailures ?? []).map { "\nbeacons cannot go: " + $0 }.joined()
            + (status.discoveryHint.map { "\nhint: " + $0 } ?? "")
            + (status.connections.map(connections) ?? "") + (status.storage.map(storage) ?? "")
            + (status.carriers ?? []).map(carrier).joined()
            + (status.starting.map { "\nstarting: " + $0.joined(separator: ", ") } ?? "")
    }

    /// A carrier's line (`LocalSend: TCP 53317, fingerprint 3F2A…, 2 devices listed`), then a line
    /// for each of its notes. An identity longer than 40 characters (a fingerprint) is cut to 16.
    private static func carrier(_ carrier: CarrierReport) -> String {
        let identity = carrier.identity.count > 40 ? carrier.identity.prefix(16) + "…" : carrier.identity
        return "\n\(carrier.name): TCP \(carrier.port), \(carrier.identityName) \(identity)"
            + carrier.counts.map { ", " + $0.words }.joined()
            + carrier.notes.map { "\n\(carrier.name): " + $0 }.joined()
    }

    private static func beaconInterval(_ status: StatusReport) -> String {
        status.announceInterval.map { ", a beacon every \(seconds($0)) s" } ?? ""
    }

    /// Seconds with at most two decimals, without trailing zeros (2, 0.5, 3.75).
    private static func seconds(_ value: Double) -> String {
        // A daemon's answer is input too: nothing out of range reaches the conversion.
        guard value.isFinite, value >= 0, value < 1e9 else { return "\(value)" }
        let hundredths = Int((value * 100).rounded())
        let text = "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
        return text.hasSuffix(".00") ? String(text.dropLast(3)) : text.hasSuffix("0") ? String(text.dropLast()) : text
    }

    /// Where beacons go, interface by interface, and what is skipped and why.
    private static func interfaces(_ reports: [InterfaceReport]) -> String {
        let used = reports.compactMap { report in
            report.broadcast.map { "\(report.interface) \(report.address) -> \($0)" }
        }
        let skipped = reports.compactMap { report in
            report.skipped.map { "\(report.interface) \(report.address) (\($0))" }
        }
        return "\nbeacons on: " + (used.isEmpty ? "no interface" : used.joined(separator: ", "))
            + (skipped.isEmpty ? "" : "\nnot on: " + skipped.joined(separator: ", "))
    }

    private static func storage(_ report: StorageReport) -> String {
        let size = ByteCount.text
        let largest = report.largestSender.map { "\($0): \(size(report.largestSenderBytes))" } ?? "none"
        let disk =
            report.diskFree.map { free in
                "\(size(free)) free; floors \(size(report.diskFloor ?? 0)) (senders not paired) and "
                    + "\(size(report.diskHardFloor ?? 0)) (everyone)"
            } ?? "free space unknown"
        return """

            inbox space: \(size(report.inboxBytes)) of \(size(report.inboxBudget)); senders not paired: \
            \(size(report.strangersBytes)) of \(size(report.strangersBudget)); the most from one (of \
            \(size(report.senderBudget)) each): \(largest)
            disk: \(disk); refusing \(report.refusing); reserve \(size(report.reserveBytes))
            """
    }

    private static func connections(_ counts: ConnectionCounts) -> String {
        """

        peer connections: \(counts.open) open, \(counts.accepted) accepted; closed by the budgets: \
        \(counts.refusedPerAddress) over the per-address cap, \(counts.closedForRoom) to make room, \
        \(counts.closedAtDeadline) at a deadline, \
        \(counts.cutOffForPartialLines) holding unfinished lines, \
        \(counts.closedForLongLines) after a line over the cap, \
        \(counts.closedInHandshake ?? 0) in their TLS handshake to make room; \
        TLS handshakes: \(counts.tlsHandshakes ?? 0), \(counts.resumedHandshakes ?? 0) of them resumed; \
        before any handshake (every TLS listener): \(counts.refusedBeforeHandshake ?? 0) strangers' connections \
        closed past --stranger-handshakes, \(counts.fromKnownPeers ?? 0) from known peers' addresses let through
        """
    }

    static func send(_ report: SendReport) -> String {
        let tenths = Int(clamping: report.milliseconds * 10)
        let milliseconds = "\(tenths / 10).\(tenths % 10)"
        // A duplicate is a delivery: an earlier attempt (whose Ack was lost, or came too late) stored it.
        let outcome =
            switch report.status {
            case .duplicate?: "delivered to \(report.peer) (stored by an earlier attempt)"
            case let status?: "\(status.rawValue) by \(report.peer)"
            case nil: "sent to \(report.peer)"
            }
        let channel = report.peerKey.map { " over TLS (key \($0.prefix(16)))" } ?? ""
        return "\(outcome)\(channel) in \(milliseconds) ms: \(report.message)"
    }

    /// A send queued and not waited for (`--no-wait`).
    static func queued(_ report: QueuedReport) -> String {
        "queued \(report.messageID) for \(json(report.peer)): "
            + "hexd delivers it in the background until \(report.expires.formatted(.iso8601)) (hexctl outbox)"
    }

    /// One line for a send waiting in the outbox.
    static func outboxLine(_ item: OutboxItem) -> String {
        let attempts = item.attempts == 1 ? "1 attempt" : "\(item.attempts) attempts"
        let destination = item.address.map { json(item.peer) + " at " + $0 } ?? json(item.peer)
        return
            "\(item.messageID)  \(item.kind)  to \(destination)  \(attempts)  "
            + "next \(item.nextAttempt.formatted(.iso8601))"
            + (item.lastError.map { "  last error: \(json($0))" } ?? "")
    }

    /// `0B5CA58D  2026-11-24T09:39:23Z  from 6F9619FF at 192.168.1.20: "the message"`; over
    /// plaintext, `from 192.168.1.20 (plaintext: no proven sender)`.
    static func alertLine(_ alert: ReceivedAlert) -> String {
        let from =
            alert.senderID.map { "\(shortID($0)) at \(alert.address)" }
            ?? "\(alert.address) (plaintext: no proven sender)"
        let time = alert.timestamp.formatted(.iso8601)
        return "\(alert.id.uppercaseText.prefix(8))  \(time)  from \(from): \(json(alert.message))"
    }

    static func event(_ event: DaemonEvent) -> String {
        var line = "\(event.seq) \(event.time.formatted(.iso8601)) \(event.kind.rawValue)"
        if let peer = event.peer { line += " \(json(peer))" + (event.peerUUID.map { " " + shortID($0) } ?? "") }
        if let version = event.versionID { line += " version \(json(version))" }
        if let id = event.id { line += " \(id)" }
        if let message = event.message { line += " \(json(message))" }
        return line
    }
}

extension String {
    /// The string with spaces added up to `length` characters.
    func padded(to length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }

}

/// An item printed as JSON with `"truncated": true` added when the daemon cut some of its text.
struct Listed<Item: Encodable>: Encodable {
    let item: Item
    let truncated: Bool

    init(_ item: Item, truncated: Bool) {
        self.item = item
        self.truncated = truncated
    }

    private enum CodingKeys: String, CodingKey { case truncated }

    func encode(to encoder: any Encoder) throws {
        try item.encode(to: encoder)
        if truncated {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(true, forKey: .truncated)
        }
    }
}
