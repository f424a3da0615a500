/// What a sender offers on one connection, once it has introduced it: who it says it is, the PIN
/// both screens show, and the texts and files. A person (or the policy for texts) answers it.
public struct ShareOffer: Sendable, Equatable {
    public struct Text: Sendable, Equatable {
        public let kind: TextMetadata.Kind
        /// The sender's title for the text (Android puts the start of it here), not the text itself.
        public let title: String
        public let size: Int64
    }

    public struct File: Sendable, Equatable {
        /// The name as the sender gave it, which may be anything: the receiver makes it safe.
        public let name: String
        public let size: Int64
        public let mimeType: String
    }

    /// The sender's device name, or nil when its endpoint info carried none.
    public let senderName: String?
    public let deviceType: EndpointInfo.DeviceType
    public let pin: String
    public let texts: [Text]
    public let files: [File]

    /// The bytes the files will take, which the offer promises and the transfer may not exceed (an
    /// offer whose sizes add up past `Int64.max` is refused before it is put to anyone).
    public var fileBytes: Int64 {
        files.reduce(0) { sum, file in
            let (total, overflow) = sum.addingReportingOverflow(file.size)
            return overflow ? .max : total
        }
    }

    /// The bytes of the files and the texts together, at most `Int64.max`.
    public var totalBytes: Int64 {
        texts.reduce(fileBytes) { sum, text in
            let (total, overflow) = sum.addingReportingOverflow(text.size)
            return overflow ? .max : total
        }
    }
}

/// What a connection's payloads delivered, in the order they completed.
public enum ShareDelivery: Sendable, Equatable {
    /// A text payload, whole, of the kind its metadata named.
    case text(TextMetadata.Kind, String)
    /// The next bytes of the offer's file at `index`, starting at `offset` within it.
    case fileBytes(index: Int, offset: Int64, bytes: ArraySlice<UInt8>)
    /// The file at `index` has all its bytes.
    case fileEnded(index: Int)
}
