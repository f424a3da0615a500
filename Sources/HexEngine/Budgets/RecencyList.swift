/// Keys in the order they were last touched, oldest first: insert, touch, remove and finding the
/// oldest are all O(1) (a doubly linked list in arrays, with a free list for reused slots).
public struct RecencyList<Key: Hashable & Sendable>: Sendable {
    private struct Node: Sendable {
        var key: Key?
        var previous = -1
        var next = -1
    }

    private var nodes: [Node] = []
    private var slots: [Key: Int] = [:]
    private var free: [Int] = []
    private var head = -1
    private var tail = -1

    public init() {}

    public var count: Int { slots.count }

    /// The key touched longest ago.
    public var oldest: Key? { head >= 0 ? nodes[head].key : nil }

    /// Adds `key` as the most recent, or makes it the most recent if it is there.
    public mutating func touch(_ key: Key) {
        if let slot = slots[key] {
            unlink(slot)
            append(slot)
            return
        }
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            nodes[slot] = Node(key: key)
        } else {
            slot = nodes.count
            nodes.append(Node(key: key))
        }
        slots[key] = slot
        append(slot)
    }

    public mutating func remove(_ key: Key) {
        guard let slot = slots.removeValue(forKey: key) else { return }
        unlink(slot)
        nodes[slot] = Node()
        free.append(slot)
    }

    private mutating func append(_ slot: Int) {
        nodes[slot].previous = tail
        nodes[slot].next = -1
        if tail >= 0 { nodes[tail].next = slot } else { head = slot }
        tail = slot
    }

    private mutating func unlink(_ slot: Int) {
        let (previous, next) = (nodes[slot].previous, nodes[slot].next)
        if previous >= 0 { nodes[previous].next = next } else { head = next }
        if next >= 0 { nodes[next].previous = previous } else { tail = previous }
    }
}
