/// Marshals values in little-endian order, each aligned relative to the start of the buffer
/// (which is the start of a message, or of a body: both 8-aligned).
struct DBusWriter {
    private(set) var bytes: [UInt8] = []

    mutating func pad(to alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    private mutating func append<T: FixedWidthInteger>(_ value: T) {
        pad(to: MemoryLayout<T>.size)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func write(_ value: DBusValue) {
        switch value {
        case .byte(let byte): bytes.append(byte)
        case .boolean(let flag): append(UInt32(flag ? 1 : 0))
        case .int16(let number): append(number)
        case .uint16(let number): append(number)
        case .int32(let number): append(number)
        case .uint32(let number), .unixFD(let number): append(number)
        case .int64(let number): append(number)
        case .uint64(let number): append(number)
        case .double(let number): append(number.bitPattern)
        case .string(let text), .objectPath(let text):
            let utf8 = Array(text.utf8)
            append(UInt32(truncatingIfNeeded: utf8.count))
            bytes.append(contentsOf: utf8)
            bytes.append(0)
        case .signature(let text):
            let utf8 = Array(text.utf8.prefix(255))
            bytes.append(UInt8(truncatingIfNeeded: utf8.count))
            bytes.append(contentsOf: utf8)
            bytes.append(0)
        case .array(let element, let values):
            writeArray(alignment: element.alignment) { writer in values.forEach { writer.write($0) } }
        case .dictionary(_, _, let entries):
            writeArray(alignment: 8) { writer in
                for entry in entries {
                    writer.pad(to: 8)
                    writer.write(entry.key)
                    writer.write(entry.value)
                }
            }
        case .structure(let fields):
            pad(to: 8)
            fields.forEach { write($0) }
        case .variant(let inner):
            write(.signature(inner.type.description))
            write(inner)
        }
    }

    /// The array's byte length, then padding to its elements' alignment (not counted), then the
    /// elements.
    private mutating func writeArray(alignment: Int, _ elements: (inout DBusWriter) -> Void) {
        append(UInt32(0))
        let lengthAt = bytes.count - 4
        pad(to: alignment)
        let start = bytes.count
        elements(&self)
        let length = UInt32(truncatingIfNeeded: bytes.count - start).littleEndian
        withUnsafeBytes(of: length) { raw in
            for (offset, byte) in raw.enumerated() { bytes[lengthAt + offset] = byte }
        }
    }
}
