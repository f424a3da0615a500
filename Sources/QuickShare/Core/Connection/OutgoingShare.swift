/// What hexd offers a Quick Share receiver on one connection: texts (a link goes as a URL) and files.
public struct OutgoingShare: Sendable, Equatable {
    public struct Text: Sendable, Equatable {
        public let kind: TextMetadata.Kind
        public let text: String

        public init(kind: TextMetadata.Kind, text: String) {
            self.kind = kind
            self.text = text
        }

        /// What the receiver shows before accepting: Android shows the title, and puts the start of
        /// the text there itself (NearDrop's sender does the same).
        var title: String {
            String(text.prefix(64))
        }
    }

    public struct File: Sendable, Equatable {
        public let name: String
        public let size: Int64
        public let mimeType: String

        public init(name: String, size: Int64, mimeType: String) {
            self.name = name
            self.size = size
            self.mimeType = mimeType
        }
    }

    public let texts: [Text]
    public let files: [File]

    /// The files' bytes together, at most `Int64.max`.
    public var fileBytes: Int64 {
        files.reduce(0) { sum, file in
            let (total, overflow) = sum.addingReportingOverflow(file.size)
            return overflow ? .max : total
        }
    }

    public init(texts: [Text] = [], files: [File] = []) {
        self.texts = texts
        self.files = files
    }
}
