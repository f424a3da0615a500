import HexDNS
import Testing

/// Names compare and hash with ASCII letters in either case the same (RFC 6762, 16), and nothing
/// else folded; a service instance is told from its type without making a name of the rest.
@Suite(.timeLimit(.minutes(1))) struct DNSNameTests {
    @Test func namesCompareAndHashWithoutTheCaseOfTheirLetters() throws {
        let name = try DNSName("Ada's Laptop", "_hexd", "_tcp", "local")
        let shouted = try DNSName("ADA'S LAPTOP", "_HEXD", "_TCP", "LOCAL")
        #expect(name == shouted && name.hashValue == shouted.hashValue && Set([name, shouted]).count == 1)
        let others = [
            try DNSName("Ada's Laptop", "_hexd", "_tcp"),
            try DNSName("Ada's Laptop2", "_hexd", "_tcp", "local"),
            try DNSName("Ada's Laptop", "_hexd", "_udp", "local"),
            // The labels' bytes run together the same, split otherwise: another name.
            try DNSName("Ada's Lapto", "p_hexd", "_tcp", "local"),
        ]
        for other in others { #expect(name != other, "\(other)") }
        // Only ASCII letters are folded: "Ä" (C3 84) and "ä" (C3 A4) are other bytes.
        #expect(try DNSName("Ä", "local") != DNSName("ä", "local"))
        #expect(try DNSName("@", "local") != DNSName("`", "local"), "0x40 and 0x60 are no letters")
    }

    @Test func anInstanceIsAChildOfItsServiceType() throws {
        let service = try DNSName("_kdeconnect", "_udp", "local")
        #expect(try DNSName("phone", "_KDEConnect", "_UDP", "local").isChild(of: service))
        #expect(!service.isChild(of: service))
        #expect(try !DNSName("a", "b", "_kdeconnect", "_udp", "local").isChild(of: service), "a grandchild")
        #expect(try !DNSName("phone", "_hexd", "_tcp", "local").isChild(of: service))
    }

    @Test func aRecordIsLookedUpByItsNameAndDataNotItsTTL() throws {
        let service = try DNSName("_hexd", "_tcp", "local")
        let instance = try DNSName("Ada", "_hexd", "_tcp", "local")
        let kept = DNSRecord(name: service, data: .ptr(instance), ttl: 4_500)
        let heard = DNSRecord(
            name: try DNSName("_HEXD", "_tcp", "local"), data: .ptr(try DNSName("ada", "_hexd", "_tcp", "local")),
            ttl: 10)
        #expect(Set([kept.identity]).contains(heard.identity) && kept.isSameRecord(as: heard))
        let other = DNSRecord(name: service, data: .ptr(try DNSName("Grace", "_hexd", "_tcp", "local")), ttl: 4_500)
        #expect(!Set([kept.identity]).contains(other.identity))
    }
}
