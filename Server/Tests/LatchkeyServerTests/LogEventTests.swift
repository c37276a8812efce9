import Foundation
import Testing

/// docs/operations.md's table of log events against the code: every event the server logs is in
/// the table with its levels, and every `latchkey.…` name any guide mentions exists, as an event
/// or a metadata key. An operator told to watch a line can find it, and it is really written.
@Suite("Log events documented")
struct LogEventTests {
    /// Every event the server's sources log, with the levels they log it at.
    static func logged() throws -> [String: Set<String>] {
        var events: [String: Set<String>] = [:]
        let sources = Repository.root.appendingPathComponent("Server/Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(
                of: /\.(trace|debug|info|notice|warning|error|critical)\(\s*"(latchkey\.[a-z0-9_.]+)"/)
            {
                events[String(match.output.2), default: []].insert(String(match.output.1))
            }
            // PruningService.ResealEvents: a reseal's three events, logged as notice, warning, warning.
            for match in text.matches(
                of:
                    /sealed: "(latchkey\.[a-z0-9_.]+)", unopened: "(latchkey\.[a-z0-9_.]+)",\s+failed: "(latchkey\.[a-z0-9_.]+)"/
            ) {
                events[String(match.output.1), default: []].insert("notice")
                events[String(match.output.2), default: []].insert("warning")
                events[String(match.output.3), default: []].insert("warning")
            }
        }
        return events
    }

    /// Every metadata key the sources write (`"latchkey.…": `).
    static func metadataKeys() throws -> Set<String> {
        var keys: Set<String> = []
        let sources = Repository.root.appendingPathComponent("Server/Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: /"(latchkey\.[a-z0-9_.]+)":/) { keys.insert(String(match.output.1)) }
        }
        return keys
    }

    static func document(_ path: String) throws -> String {
        try String(contentsOf: Repository.root.appendingPathComponent(path), encoding: .utf8)
    }

    @Test("every logged event is in docs/operations.md's table with its levels, and nothing else is")
    func table() throws {
        let logged = try Self.logged()
        #expect(logged.count >= 50)
        var documented: [String: Set<String>] = [:]
        for match in try Self.document("docs/operations.md").matches(
            of: /\n\| `(latchkey\.[a-z0-9_.]+)` \| ([a-z, ]+) \|/)
        {
            documented[String(match.output.1)] = Set(
                match.output.2.split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces)
                })
        }
        for (event, levels) in logged.sorted(by: { $0.key < $1.key }) {
            #expect(
                documented[event] == levels,
                "\(event): logged at \(levels.sorted()), documented \(documented[event]?.sorted() ?? [])")
        }
        #expect(Set(documented.keys).subtracting(logged.keys).isEmpty, "documented, never logged")
    }

    @Test("every latchkey.… name the guides mention is an event or a metadata key the server writes")
    func mentioned() throws {
        let known = Set(try Self.logged().keys).union(try Self.metadataKeys())
        for path in ["README.md", "docs/deployment.md", "docs/operations.md", "docs/security.md", "docs/audit.md"] {
            let text = try Self.document(path)
            for match in text.matches(of: /`(latchkey\.[a-z0-9_]+(?:\.[a-z0-9_]+)+)`/) {
                let name = String(match.output.1)
                #expect(known.contains(name), "\(path) mentions \(name), which the server never writes")
            }
        }
    }
}
