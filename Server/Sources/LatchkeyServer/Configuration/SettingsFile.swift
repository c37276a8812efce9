import Foundation

/// A configuration file in the usual dotenv forms: `NAME=value`, `export NAME=value`, values in
/// double quotes (with `\n`, `\"` and `\\` escapes) or single quotes (literal), a `#` comment at
/// the start of a line or after a space in an unquoted value, blank lines, and CRLF line endings.
/// Every mistake names the file, the line and the setting, and an unknown name comes with the
/// nearest known one.
enum SettingsFile {
    /// The settings of `text`, read from `path` (named in errors).
    static func parse(_ text: String, path: String, known: Set<String>) throws -> [String: String] {
        var settings: [String: String] = [:]
        var lineOf: [String: Int] = [:]
        // `isNewline` on Characters: "\r\n" is one Character, so splitting on "\n" would miss it.
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let number = index + 1
            var line = Substring(rawLine)
            line = line.drop { $0 == " " || $0 == "\t" }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = line.dropFirst(7).drop { $0 == " " } }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError("\(path):\(number): expected NAME=value")
            }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            guard known.contains(name) else {
                let hint = nearest(to: name, in: known).map { "; did you mean \($0)?" } ?? ""
                throw ConfigurationError("\(path):\(number): unknown setting '\(name)'\(hint)")
            }
            if let first = lineOf[name] {
                throw ConfigurationError("\(path):\(number): \(name) is already set on line \(first)")
            }
            settings[name] = try value(line[line.index(after: equals)...], path: path, line: number, name: name)
            lineOf[name] = number
        }
        return settings
    }

    /// The value after `=`: quoted, or bare up to a ` #` comment.
    static func value(_ text: Substring, path: String, line: Int, name: String) throws -> String {
        let text = text.drop { $0 == " " || $0 == "\t" }
        guard let quote = text.first, quote == "\"" || quote == "'" else {
            var bare = text
            if let comment = bare.range(of: " #") ?? bare.range(of: "\t#") { bare = bare[..<comment.lowerBound] }
            return bare.trimmingCharacters(in: .whitespaces)
        }
        var result = ""
        var escaped = false
        var closed: String.Index?
        for index in text.indices.dropFirst() {
            let character = text[index]
            if escaped {
                switch character {
                case "n": result.append("\n")
                case "t": result.append("\t")
                default: result.append(character)
                }
                escaped = false
            } else if character == "\\" && quote == "\"" {
                escaped = true
            } else if character == quote {
                closed = index
                break
            } else {
                result.append(character)
            }
        }
        guard let closed else {
            throw ConfigurationError("\(path):\(line): the value of \(name) has no closing \(quote)")
        }
        let rest = text[text.index(after: closed)...].trimmingCharacters(in: .whitespaces)
        guard rest.isEmpty || rest.hasPrefix("#") else {
            throw ConfigurationError("\(path):\(line): unexpected text after the quoted value of \(name)")
        }
        return result
    }

    /// The known name closest to `name` by edit distance, when close enough to be a typo.
    static func nearest(to name: String, in known: Set<String>) -> String? {
        if known.contains("LATCHKEY_" + name.uppercased()) { return "LATCHKEY_" + name.uppercased() }
        let target = Array(name.uppercased())
        var best: (name: String, score: Int)?
        for candidate in known.sorted() {
            let score = distance(target, Array(candidate))
            if score < best?.score ?? Int.max { best = (candidate, score) }
        }
        guard let best, best.score <= max(3, target.count / 4) else { return nil }
        return best.name
    }

    /// Levenshtein distance.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        var previous = Array(0...b.count)
        for (i, left) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, right) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (left == right ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
