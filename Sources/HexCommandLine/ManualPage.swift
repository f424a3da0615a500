/// A man page in troff (the `man` macros), made from the same tables as `--help`.
public struct ManualPage: Sendable {
    public let name: String
    /// 1 for user commands, 8 for daemons.
    public let section: Int
    public let summary: String
    public let synopsis: [String]
    public let description: String
    /// Titled sections: each a list of entries (a term and its text), or plain text.
    public let sections: [(title: String, entries: [(term: String, text: String)], text: String)]

    public init(
        name: String, section: Int, summary: String, synopsis: [String], description: String,
        sections: [(title: String, entries: [(term: String, text: String)], text: String)]
    ) {
        self.name = name
        self.section = section
        self.summary = summary
        self.synopsis = synopsis
        self.description = description
        self.sections = sections
    }

    /// The page, ready for `man -l`.
    public var troff: String {
        var lines = [
            ".TH \(name.uppercased()) \(section) \"\" \"hexd\" \"hexd manual\"",
            ".SH NAME", "\(name) \\- \(Self.escape(summary))",
            ".SH SYNOPSIS",
        ]
        lines += synopsis.flatMap { [".B", Self.escape($0), ".br"] }
        lines += [".SH DESCRIPTION", Self.paragraphs(description)]
        for section in sections {
            lines.append(".SH \(section.title.uppercased())")
            if !section.text.isEmpty { lines.append(Self.paragraphs(section.text)) }
            for entry in section.entries {
                // Each line of an entry's text stays a line of its own.
                lines += [
                    ".TP", ".B \(Self.escape(entry.term))",
                    entry.text.split(separator: "\n").map { Self.escape(String($0)) }.joined(separator: "\n.br\n"),
                ]
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Paragraphs (separated by blank lines), their lines joined, each escaped.
    static func paragraphs(_ text: String) -> String {
        text.split(separator: "\n\n").map { Self.escape($0.split(separator: "\n").joined(separator: " ")) }.joined(
            separator: "\n.PP\n")
    }

    /// Text with troff's special characters made plain: backslashes, hyphens, characters beyond
    /// ASCII, and a leading dot or quote.
    static func escape(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            var escaped = ""
            for scalar in line.unicodeScalars {
                switch scalar {
                case "\\": escaped += "\\e"
                case "-": escaped += "\\-"
                // troff reads ASCII: anything else is named by its code point.
                case _ where scalar.value > 0x7E:
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    escaped += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
                default: escaped.unicodeScalars.append(scalar)
                }
            }
            return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
        }.joined(separator: "\n")
    }
}
