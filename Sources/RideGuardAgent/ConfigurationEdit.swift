import FoundationEssentials
import Glibc

extension ConfigurationFile {
    /// `text` with `section.key` set to `value`, every comment and the layout kept: the key's line
    /// is rewritten in place (its trailing comment stays), or added under its section, or added
    /// with its section at the end. Used by `rideguard setup`; the caller parses the result.
    package static func setting(_ section: String, _ key: String, to value: String, in text: String) -> String {
        var lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { String($0) }
        let isIndented: (String) -> Bool = { $0.first == " " || $0.first == "\t" }
        guard let header = lines.firstIndex(where: { $0.hasPrefix(section + ":") && !isIndented($0) }) else {
            let ending = text.isEmpty || text.hasSuffix("\n") ? "" : "\n"
            return text + ending + "\n\(section):\n  \(key): \(value)\n"
        }
        var end = header + 1
        while end < lines.count, lines[end].isEmpty || isIndented(lines[end]) { end += 1 }
        for index in (header + 1)..<end {
            let line = lines[index]
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            guard trimmed.hasPrefix(key + ":") else { continue }
            let indentation = line.prefix(line.count - trimmed.count)
            let afterKey = trimmed.dropFirst(key.count + 1)
            // Keep a trailing comment, aligned where it was.
            var comment = ""
            if let hash = afterKey.firstRange(of: " #") {
                let valueWidth = afterKey.distance(from: afterKey.startIndex, to: hash.lowerBound)
                let padding = max(1, valueWidth - value.count)
                comment = String(repeating: " ", count: padding) + afterKey[hash.lowerBound...].dropFirst()
            }
            lines[index] = "\(indentation)\(key): \(value)\(comment)"
            return lines.joined(separator: "\n")
        }
        let indentation = lines[(header + 1)..<end].first { !$0.isEmpty }.map { String($0.prefix { $0 == " " || $0 == "\t" }) } ?? "  "
        lines.insert("\(indentation)\(key): \(value)", at: header + 1)
        return lines.joined(separator: "\n")
    }
}
