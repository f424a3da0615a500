/// The MIME type a file's name says it holds, for the offers hexd makes of files (LocalSend's
/// `fileType`). A LocalSend phone saves a file to its gallery only when the type offered is an
/// image or a video (localsend/localsend 1.18: `packages/localsend_isolates/lib/model/dto/file_dto.dart`
/// maps `image/` and `video/` to its file types, and `server_isolate.dart`, `_handleFileUpload`,
/// sends those alone to the gallery), so a photo offered as bytes would land in Downloads.
public enum MediaType {
    /// What a name without a known extension is offered as.
    public static let unknown = "application/octet-stream"

    /// The MIME type of a file named `name`, by its extension in any case; `unknown` when there is
    /// none or it is not one of the common ones below.
    public static func of(fileName name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return unknown }
        return byExtension[name[name.index(after: dot)...].lowercased()] ?? unknown
    }

    static let byExtension: [String: String] = [
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
        "heic": "image/heic", "heif": "image/heif", "avif": "image/avif", "bmp": "image/bmp", "tif": "image/tiff",
        "tiff": "image/tiff", "svg": "image/svg+xml", "dng": "image/x-adobe-dng",
        "mp4": "video/mp4", "m4v": "video/x-m4v", "mov": "video/quicktime", "mkv": "video/x-matroska",
        "webm": "video/webm", "avi": "video/x-msvideo", "3gp": "video/3gpp", "mpeg": "video/mpeg", "mpg": "video/mpeg",
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "ogg": "audio/ogg", "opus": "audio/opus",
        "wav": "audio/wav", "flac": "audio/flac",
        "pdf": "application/pdf", "txt": "text/plain", "md": "text/markdown", "csv": "text/csv",
        "html": "text/html", "htm": "text/html", "vcf": "text/vcard", "ics": "text/calendar",
        "json": "application/json", "xml": "application/xml", "zip": "application/zip", "gz": "application/gzip",
        "tar": "application/x-tar", "7z": "application/x-7z-compressed", "epub": "application/epub+zip",
        "apk": "application/vnd.android.package-archive", "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel", "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text",
    ]
}
