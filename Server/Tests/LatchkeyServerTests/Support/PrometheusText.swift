import Foundation

/// A strict reader of Prometheus' text exposition format (0.0.4), for holding `/metrics` to it:
/// `# HELP` and `# TYPE` lines, samples `name{label="value",…} value`, label values with their
/// three escapes, and a histogram's `_bucket` (cumulative, ending at `le="+Inf"`), `_sum` and
/// `_count`. Anything else is an error naming the line.
struct PrometheusText {
    /// One sample.
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private(set) var samples: [Sample] = []
    private(set) var types: [String: String] = [:]

    init(_ text: String) throws {
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(line)
            if line.isEmpty { continue }
            func fail(_ problem: String) -> Failure { Failure(description: "line \(index + 1): \(problem): \(line)") }
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
                if parts.count >= 3, parts[1] == "TYPE" {
                    guard parts.count == 4, Self.isMetricName(parts[2]),
                        ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3])
                    else { throw fail("malformed TYPE") }
                    guard types[parts[2]] == nil else { throw fail("second TYPE for \(parts[2])") }
                    guard !samples.contains(where: { Self.family($0.name, types: types) == parts[2] }) else {
                        throw fail("TYPE after samples of \(parts[2])")
                    }
                    types[parts[2]] = parts[3]
                } else if parts.count >= 3, parts[1] == "HELP" {
                    guard Self.isMetricName(parts[2]) else { throw fail("malformed HELP") }
                }
                continue
            }
            samples.append(try Self.sample(line, fail: fail))
        }
        try checkHistograms()
    }

    /// The value of the one sample named `name` with exactly `labels`, if any.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    /// Every sample of `name` whose labels include `labels`.
    func samples(_ name: String, matching labels: [String: String] = [:]) -> [Sample] {
        samples.filter { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }
    }

    private static func sample(_ line: String, fail: (String) -> Failure) throws -> Sample {
        var rest = Substring(line)
        let name = String(rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" })
        guard isMetricName(name) else { throw fail("bad metric name") }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let label = String(rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" })
                guard isLabelName(label), rest.dropFirst(label.count).hasPrefix("=\"") else { throw fail("bad label") }
                rest = rest.dropFirst(label.count + 2)
                var value = ""
                while true {
                    guard let character = rest.first else { throw fail("unterminated label value") }
                    rest = rest.dropFirst()
                    if character == "\"" { break }
                    if character == "\\" {
                        guard let escaped = rest.first else { throw fail("dangling escape") }
                        rest = rest.dropFirst()
                        switch escaped {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: throw fail("unknown escape")
                        }
                    } else {
                        value.append(character)
                    }
                }
                guard labels[label] == nil else { throw fail("label twice") }
                labels[label] = value
                if rest.first == "," {
                    rest = rest.dropFirst()
                } else if rest.first != "}" {
                    throw fail("expected , or }")
                }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { throw fail("expected a space before the value") }
        let fields = rest.dropFirst().split(separator: " ")
        guard (1...2).contains(fields.count), let value = Self.number(String(fields[0])) else {
            throw fail("bad value")
        }
        if fields.count == 2, Int64(fields[1]) == nil { throw fail("bad timestamp") }
        return Sample(name: name, labels: labels, value: value)
    }

    private static func number(_ text: String) -> Double? {
        switch text {
        case "+Inf": .infinity
        case "-Inf": -.infinity
        case "NaN": .nan
        default: Double(text)
        }
    }

    /// The family a sample belongs to: its name, or a histogram's name for `_bucket`/`_sum`/`_count`.
    private static func family(_ name: String, types: [String: String]) -> String {
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if types[base] == "histogram" { return base }
        }
        return name
    }

    /// Each histogram series: cumulative buckets ending at +Inf, which equals `_count`.
    private func checkHistograms() throws {
        for (family, type) in types where type == "histogram" {
            let buckets = samples.filter { $0.name == family + "_bucket" }
            let series = Dictionary(grouping: buckets) { $0.labels.filter { $0.key != "le" } }
            for (labels, buckets) in series {
                let ordered = buckets.sorted {
                    (Self.number($0.labels["le"] ?? "") ?? 0) < (Self.number($1.labels["le"] ?? "") ?? 0)
                }
                guard ordered.last?.labels["le"] == "+Inf" else {
                    throw Failure(description: "\(family) \(labels): no +Inf bucket")
                }
                for (lower, upper) in zip(ordered, ordered.dropFirst()) where lower.value > upper.value {
                    throw Failure(description: "\(family) \(labels): buckets not cumulative")
                }
                let count = samples.first { $0.name == family + "_count" && $0.labels == labels }?.value
                guard count == ordered.last?.value,
                    samples.contains(where: { $0.name == family + "_sum" && $0.labels == labels })
                else { throw Failure(description: "\(family) \(labels): _count or _sum missing or off") }
            }
        }
    }

    static func isMetricName(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_" || first == ":" else {
            return false
        }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
    }

    static func isLabelName(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_" else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }
}
