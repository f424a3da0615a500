import HexJSON
import HexKit

/// One file a LocalSend sender offers in `prepare-upload`. A message (a note or a link) is one
/// file of a `text/*` type whose whole text is its `preview`; its bytes are never uploaded.
public struct LocalSendFile: Sendable, Equatable {
    /// The sender's id of the file, which the answer's tokens and the uploads name.
    public var id: String
    /// The name the sender gives it: a peer's word, made safe before it names anything on disk.
    public var fileName: String
    public var size: Int64
    /// A MIME type (`image/jpeg`), or one of protocol 1's names (`image`, `text`).
    public var fileType: String
    /// The SHA-256 of its bytes, 64 lower-case hex digits, when the sender gave a valid one.
    public var sha256: String?
    /// The whole text of a message; a thumbnail's data for other files, which hexd ignores.
    public var preview: String?

    public static let maximumIDBytes = 128
    public static let maximumFileNameBytes = 1_024
    public static let maximumFileTypeBytes = 128
    /// The longest message taken whole; a longer preview is refused, never cut.
    public static let maximumPreviewBytes = 1 << 20

    public init(
        id: String, fileName: String, size: Int64, fileType: String, sha256: String? = nil, preview: String? = nil
    ) {
        self.id = id
        self.fileName = fileName.clipped(toUTF8: Self.maximumFileNameBytes)
        self.size = size
        self.fileType = fileType.clipped(toUTF8: Self.maximumFileTypeBytes)
        self.sha256 = sha256.flatMap(Self.sha256(from:))
        self.preview = preview
    }

    /// Whether it is text: a `text/…` MIME type, or protocol 1's `text`.
    public var isText: Bool { fileType == "text" || fileType.lowercased().hasPrefix("text/") }

    /// A SHA-256 in lower case, or nil when `text` is not 64 hex digits.
    static func sha256(from text: String) -> String? {
        HexDigits.isHex(text, count: 64) ? text.lowercased() : nil
    }

    init?(_ object: JSONObject) {
        guard let id = object.string("id"), !id.isEmpty, id.utf8.count <= Self.maximumIDBytes,
            let fileName = object.string("fileName"), let size = object.integer("size", as: Int64.self), size >= 0,
            let fileType = object.string("fileType")
        else { return nil }
        let preview = object.string("preview")
        guard (preview?.utf8.count ?? 0) <= Self.maximumPreviewBytes else { return nil }
        self.init(
            id: id, fileName: fileName, size: size, fileType: fileType, sha256: object.string("sha256"),
            preview: preview)
    }

    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("id", id)
        writer.member("fileName", fileName)
        writer.member("size", size)
        writer.member("fileType", fileType)
        writer.member("sha256", sha256)
        writer.member("preview", preview)
        writer.endObject()
    }
}

/// The body of `prepare-upload`: who sends, and what it offers.
public struct LocalSendUploadRequest: Sendable, Equatable {
    public var info: LocalSendDevice
    /// The files in the order the sender wrote them.
    public var files: [LocalSendFile]

    /// The most files one request offers; a request with more is refused whole.
    public static let maximumFiles = 1_000
    /// The largest body read: `maximumFiles` with their names, or one message at its longest.
    public static let maximumSize = 2 << 20

    public init(info: LocalSendDevice, files: [LocalSendFile]) {
        self.info = info
        self.files = files
    }

    /// The text a request carries when it is a message: one text file, its whole text the
    /// preview. Nil for files.
    public var message: String? {
        guard files.count == 1, let file = files.first, file.isText else { return nil }
        return file.preview
    }

    /// The request in `bytes`; nil when they are not one: not JSON, too long, no sender, no files
    /// or more than `maximumFiles`, a file without its fields, or two files with one id.
    public static func decode(_ bytes: some Collection<UInt8>) -> LocalSendUploadRequest? {
        guard bytes.count <= maximumSize,
            case .object(let object)? = try? JSONValue.parse(bytes, limits: JSONLimits(maximumDepth: 8)),
            let info = object.object("info").flatMap(LocalSendDevice.init), let offered = object.object("files"),
            !offered.members.isEmpty, offered.members.count <= maximumFiles
        else { return nil }
        var files: [LocalSendFile] = []
        var ids = Set<String>()
        for member in offered.members {
            guard case .object(let fields) = member.value, let file = LocalSendFile(fields),
                ids.insert(file.id).inserted
            else { return nil }
            files.append(file)
        }
        return LocalSendUploadRequest(info: info, files: files)
    }

    public func encoded() -> [UInt8] {
        var writer = JSONWriter(escapeSlashes: false)
        writer.beginObject()
        writer.key("info")
        info.write(to: &writer)
        writer.key("files")
        writer.beginObject()
        for file in files {
            writer.key(file.id)
            file.write(to: &writer)
        }
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }
}

/// The answer to `prepare-upload` (200): the session, and a token for each file the receiver
/// takes (the others are not uploaded).
public struct LocalSendUploadSession: Sendable, Equatable {
    public var sessionID: String
    /// Each accepted file's id and the token its upload presents, in the order written.
    public var tokens: [(fileID: String, token: String)]

    public static let maximumTokenBytes = 256

    public init(sessionID: String, tokens: [(fileID: String, token: String)]) {
        self.sessionID = sessionID
        self.tokens = tokens
    }

    public static func == (left: Self, right: Self) -> Bool {
        left.sessionID == right.sessionID && left.tokens.elementsEqual(right.tokens) { $0 == $1 }
    }

    /// The session in `bytes` (a receiver's answer); nil when they are not one.
    public static func decode(_ bytes: some Collection<UInt8>) -> LocalSendUploadSession? {
        guard bytes.count <= LocalSendUploadRequest.maximumSize,
            case .object(let object)? = try? JSONValue.parse(bytes, limits: JSONLimits(maximumDepth: 4)),
            let sessionID = object.string("sessionId"), !sessionID.isEmpty,
            sessionID.utf8.count <= maximumTokenBytes, let files = object.object("files"),
            files.members.count <= LocalSendUploadRequest.maximumFiles
        else { return nil }
        var tokens: [(fileID: String, token: String)] = []
        for member in files.members {
            guard case .string(let token) = member.value, token.utf8.count <= maximumTokenBytes else { return nil }
            tokens.append((member.key, token))
        }
        return LocalSendUploadSession(sessionID: sessionID, tokens: tokens)
    }

    public func encoded() -> [UInt8] {
        var writer = JSONWriter(escapeSlashes: false)
        writer.beginObject()
        writer.member("sessionId", sessionID)
        writer.key("files")
        writer.beginObject()
        for (fileID, token) in tokens { writer.member(fileID, token) }
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }
}
