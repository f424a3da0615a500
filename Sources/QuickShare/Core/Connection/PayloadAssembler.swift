/// BYTES payloads put together from their chunks, as both ends of a connection receive them: each
/// at most `maximumBytes` as its header says, all together at most `maximumBytes`, and at most as
/// many under way at once as the caller makes room for. Chunks come in order; an empty one may come
/// at any offset (pyquickshare 0.1.0 sends its last one at offset 0).
struct PayloadAssembler: Sendable {
    let maximumBytes: Int
    private var held: [Int64: [UInt8]] = [:]
    private var heldBytes = 0

    init(maximumBytes: Int) {
        self.maximumBytes = maximumBytes
    }

    /// Takes one chunk; gives the payload's bytes once its last chunk came, else nil.
    /// - Parameter room: how many payloads may be under way at once.
    /// - Throws: `QuickShareError` for a payload larger than the bound or than its header said, a
    ///   chunk out of order, or a payload past `room`.
    mutating func take(_ transfer: PayloadTransfer, room: Int) throws(QuickShareError) -> [UInt8]? {
        let heldCount = held[transfer.payloadID]?.count ?? 0
        guard transfer.totalSize >= 0, transfer.totalSize <= Int64(maximumBytes) else {
            throw QuickShareError("a bytes payload of \(transfer.totalSize) bytes")
        }
        guard transfer.offset == Int64(heldCount) || transfer.body.isEmpty else {
            throw QuickShareError("a bytes payload's chunk is out of order")
        }
        guard Int64(heldCount + transfer.body.count) <= transfer.totalSize,
            heldBytes + transfer.body.count <= maximumBytes
        else { throw QuickShareError("a bytes payload is larger than it said") }
        guard held[transfer.payloadID] != nil || held.count < room else {
            throw QuickShareError("over \(room) bytes payloads under way at once")
        }
        guard transfer.isLastChunk else {
            held[transfer.payloadID, default: []].append(contentsOf: transfer.body)
            heldBytes += transfer.body.count
            return nil
        }
        heldBytes -= heldCount
        var whole = held.removeValue(forKey: transfer.payloadID) ?? []
        whole.append(contentsOf: transfer.body)
        return whole
    }
}
