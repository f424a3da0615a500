import HexKit

/// How a person names one of a carrier's devices, or one of its offers, in `hexctl` (`send --to`,
/// `pair`, `decline`): one rule for every carrier, in this order.
/// 1. Its whole ID, in any case (`kdeconnect:9b48…`, an offer's key): that one.
/// 2. An ID of another kind (a hexd peer's UUID, another protocol's device): none.
/// 3. Its name, in any case, when one alone has it (two of one name: none), unless the text has the
///    form of one of the carrier's IDs: an ID is no name.
/// 4. A prefix of its ID, 4 characters after the colon at least (`localsend:A1B2`), or of what
///    follows the colon alone (`A1B2`) when a key proves the device (one that nothing proves claims
///    any text it likes, another's fingerprint or a peer's name), when one alone has it.
package enum DeviceNaming {
    /// The shortest prefix of what follows an ID's colon that names a device.
    package static let shortestPrefix = 4

    /// The one of `devices` that `text` names; nil when none or several do.
    /// - Parameters:
    ///   - forms: the carrier's ID forms (`SendingCarrier.idForms`).
    ///   - id: a device's ID in hexd (its form's spelling), or an offer's key.
    ///   - name: what the device calls itself.
    package static func device<Device>(
        named text: String, among devices: [Device], forms: [PeerIDForm], id: (Device) -> String,
        name: (Device) -> String
    ) -> Device? {
        let wanted = text.trimmed
        guard !wanted.isEmpty else { return nil }
        let lowered = wanted.lowercased()
        if let whole = devices.first(where: { id($0).lowercased() == lowered }) { return whole }
        let isOwnForm = forms.contains { $0.canonical(wanted) != nil }
        guard isOwnForm || wanted.canonicalPeerID == nil else { return nil }
        let byName = isOwnForm ? [] : devices.filter { name($0).lowercased() == lowered }
        guard byName.isEmpty else { return byName.count == 1 ? byName.first : nil }
        let byID = devices.filter { isPrefix(wanted, of: id($0), forms: forms) }
        return byID.count == 1 ? byID.first : nil
    }

    /// Whether `text` is a prefix of `id` as rule 4 reads it.
    private static func isPrefix(_ text: String, of id: String, forms: [PeerIDForm]) -> Bool {
        guard let form = forms.first(where: { $0.owns(id) }) else { return false }
        let own = id.utf8.dropFirst(form.prefix.utf8.count)
        let digits: Substring.UTF8View
        if form.starts(text) {
            digits = Substring(text).utf8.dropFirst(form.prefix.utf8.count)
        } else if form.unproved == nil {
            digits = Substring(text).utf8
        } else {
            return false
        }
        return digits.count >= shortestPrefix && digits.count <= own.count
            && zip(digits, own).allSatisfy { lowercase($0) == lowercase($1) }
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}
