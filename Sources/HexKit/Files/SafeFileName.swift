/// A name a peer gave a file, made safe to create in a downloads folder: one path component,
/// never hidden, never a device name, no control or direction-changing characters, of a length
/// every file system takes. What a peer sends only ever names a file *inside* the folder.
public enum SafeFileName {
    /// The longest name made, in UTF-8 bytes (ext4 takes 255; room is left for a suffix and `.part`).
    public static let maximumBytes = 180
    /// Used when nothing of the given name is left.
    public static let fallback = "file"

    /// The safe form of `name`.
    public static func make(from name: String) -> String {
        // Only the last component: "../../.bashrc" and "/etc/passwd" name a file, not a place.
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var scalars = String.UnicodeScalarView()
        for scalar in last.unicodeScalars where !isInvisible(scalar) {
            scalars.append(isReserved(scalar) ? "_" : scalar)
        }
        // No hidden file, and no name a shell or file manager shows differently from what it is.
        var safe = String(scalars).trimmingLeading { $0 == "." || $0.isWhitespace }
            .trimmingTrailing { $0 == "." || $0.isWhitespace }
        if isDeviceName(safe) { safe = "_" + safe }
        safe = clipped(safe)
        return safe.isEmpty ? fallback : safe
    }

    /// `name` with ` (n)` before its extension: the n-th choice when the name is taken.
    public static func numbered(_ name: String, _ number: Int) -> String {
        let (stem, suffix) = split(name)
        return stem + " (\(number))" + suffix
    }

    /// Control characters (C0, DEL, C1) and the format characters that reorder or hide text
    /// (bidirectional overrides and isolates, zero-width marks): "invoice‮fdp.exe" shows as
    /// "invoiceexe.pdf" in a file manager.
    private static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x200B...0x200F, 0x202A...0x202E, 0x2060...0x2069, 0xFEFF: true
        default: false
        }
    }

    /// Characters some file systems (FAT, NTFS on a USB stick, SMB shares) refuse in a name.
    private static func isReserved(_ scalar: Unicode.Scalar) -> Bool {
        "<>:\"|?*".unicodeScalars.contains(scalar)
    }

    /// The names Windows keeps for devices, with or without an extension ("CON", "nul.txt").
    private static func isDeviceName(_ name: String) -> Bool {
        let stem = (name.split(separator: ".", maxSplits: 1).first.map(String.init) ?? name).uppercased()
            .trimmingTrailing { $0 == " " }
        if ["CON", "PRN", "AUX", "NUL"].contains(stem) { return true }
        guard stem.count == 4, stem.hasPrefix("COM") || stem.hasPrefix("LPT"), let digit = stem.last else {
            return false
        }
        return ("0"..."9").contains(digit) || ["¹", "²", "³"].contains(digit)
    }

    /// The name cut to `maximumBytes`, keeping a short extension and whole characters.
    private static func clipped(_ name: String) -> String {
        guard name.utf8.count > maximumBytes else { return name }
        let (stem, suffix) = split(name)
        let kept = suffix.utf8.count <= 16 ? suffix : ""
        return stem.clipped(toUTF8: maximumBytes - kept.utf8.count) + kept
    }

    /// The name before its last dot, and from the dot on (empty without one).
    private static func split(_ name: String) -> (stem: String, suffix: String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        return (String(name[..<dot]), String(name[dot...]))
    }
}

extension String {
    fileprivate func trimmingLeading(while isTrimmed: (Character) -> Bool) -> String {
        String(drop(while: isTrimmed))
    }

    fileprivate func trimmingTrailing(while isTrimmed: (Character) -> Bool) -> String {
        String(String(reversed()).drop(while: isTrimmed).reversed())
    }
}
