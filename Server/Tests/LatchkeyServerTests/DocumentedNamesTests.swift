import Foundation
import LatchkeyServer
import Testing

@testable import LatchkeyCLI

/// The README and docs/ name only flags and settings the binary has: an operator pastes them.
/// About 0.5 s (one `latchkey --experimental-dump-help`).
@Suite(
    "Documented flags and settings exist",
    .enabled(if: LatchkeyBinary.url != nil || TestEnvironment.isCI, "the latchkey binary is not built"))
struct DocumentedNamesTests {
    /// Names the docs use on purpose that are no setting: a placeholder, a quoting example, and
    /// the misspelling whose refusal docs/deployment.md shows.
    static let deliberate: Set<String> = ["LATCHKEY_NAME", "LATCHKEY_X", "LATCHKEY_TRUSTED_PROXY"]

    static func documents() throws -> [(name: String, text: String)] {
        let docs = Repository.root.appendingPathComponent("docs")
        let files =
            [Repository.root.appendingPathComponent("README.md")]
            + (try FileManager.default.contentsOfDirectory(at: docs, includingPropertiesForKeys: nil))
            .filter { $0.pathExtension == "md" }.sorted { $0.path < $1.path }
        return try files.map { ($0.lastPathComponent, try String(contentsOf: $0, encoding: .utf8)) }
    }

    @Test("every LATCHKEY_ name in the README and docs is a setting (or a variable another command reads)")
    func settingNames() throws {
        let known = Set(ServerConfiguration.settingNames + ServerConfiguration.fileSettingNames)
            .union(Settings.otherVariables).union(Self.deliberate)
        var unknown: [String] = []
        for document in try Self.documents() {
            for match in document.text.matches(of: /LATCHKEY_[A-Z0-9_]*/) {
                let name = String(match.output)
                let exists =
                    known.contains(name) || Settings.otherPrefixes.contains { name.hasPrefix($0) }
                    // `LATCHKEY_LIMIT_…`: a prefix of settings.
                    || (name.hasSuffix("_") && known.contains { $0.hasPrefix(name) })
                if !exists { unknown.append("\(document.name): \(name)") }
            }
        }
        #expect(unknown.isEmpty, "not a setting: \(unknown)")
    }

    @Test("every `latchkey …` command's flags in the README and docs exist on that command")
    func commandFlags() async throws {
        let tree = try await CommandTree.load()
        var unknown: [String] = []
        for document in try Self.documents() {
            for use in DocumentedCommands.uses(in: document.text, tree: tree) {
                for flag in use.flags where !use.command.accepts(flag) {
                    unknown.append("\(document.name): latchkey \(use.command.path) \(flag)")
                }
            }
        }
        #expect(unknown.isEmpty, "no such flag: \(unknown)")
    }
}

/// `latchkey`'s commands and their long flags, from its own `--experimental-dump-help`.
final class CommandTree: Sendable {
    let name: String
    let path: String
    let flags: Set<String>
    let subcommands: [CommandTree]

    init(json: [String: Any], path: String) {
        name = json["commandName"] as? String ?? ""
        self.path = path
        let arguments = json["arguments"] as? [[String: Any]] ?? []
        flags = Set(
            arguments.flatMap { argument in
                (argument["names"] as? [[String: Any]] ?? []).compactMap { name in
                    name["kind"] as? String == "long" ? (name["name"] as? String).map { "--" + $0 } : nil
                }
            } + ["--help", "--version"])
        subcommands = (json["subcommands"] as? [[String: Any]] ?? []).map {
            let name = $0["commandName"] as? String ?? ""
            return CommandTree(json: $0, path: path.isEmpty ? name : path + " " + name)
        }
    }

    static func load() async throws -> CommandTree {
        let (status, output) = try await ChildProcess.run(
            try #require(LatchkeyBinary.url), ["--experimental-dump-help"])
        try #require(status == 0, "\(output)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        return CommandTree(json: try #require(json["command"] as? [String: Any]), path: "")
    }

    func subcommand(_ name: String) -> CommandTree? { subcommands.first { $0.name == name } }

    /// A flag of this command, or, for a group named without its subcommand (prose such as
    /// "`latchkey users` … `--dev`"), of one below it.
    func accepts(_ flag: String) -> Bool { flags.contains(flag) || subcommands.contains { $0.accepts(flag) } }
}

/// Where the docs run `latchkey`: in code blocks (each command to the end of its line, `\`
/// continuations joined, up to a pipe, `;`, `&&`, `)` or a comment), and in inline code, where a
/// flag alone (`--dev`) belongs to the command the same paragraph last named.
enum DocumentedCommands {
    struct Use {
        let command: CommandTree
        let flags: [String]
    }

    static func uses(in text: String, tree: CommandTree) -> [Use] {
        var uses: [Use] = []
        var inFence = false
        var lastCommand: CommandTree?
        var pending = ""
        for line in text.components(separatedBy: "\n") {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
                continue
            }
            if inFence {
                if line.hasSuffix("\\") {
                    pending += line.dropLast() + " "
                    continue
                }
                uses += commands(in: pending + line, tree: tree)
                pending = ""
                continue
            }
            // A paragraph, a list item or a table row is the context of a lone flag.
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("-") || trimmed.hasPrefix("|") || trimmed.hasPrefix("#")
                || trimmed.first?.isNumber == true
            {
                lastCommand = nil
            }
            for span in line.matches(of: /`([^`]+)`/) {
                let code = String(span.output.1)
                let found = commands(in: code, tree: tree)
                if let last = found.last {
                    uses += found
                    lastCommand = last.command
                } else if code.hasPrefix("--"), let lastCommand {
                    uses.append(Use(command: lastCommand, flags: flags(in: code)))
                }
            }
        }
        return uses
    }

    /// Each `latchkey SUBCOMMAND…` in a line of shell, with the flags up to where its command ends.
    static func commands(in line: String, tree: CommandTree) -> [Use] {
        let tokens = line.split(whereSeparator: \.isWhitespace).map(String.init)
        var found: [Use] = []
        var index = 0
        while index < tokens.count {
            defer { index += 1 }
            // `latchkey`, `/usr/local/bin/latchkey`, `$(latchkey`; a user or a directory named
            // latchkey is not followed by a subcommand.
            guard tokens[index].hasSuffix("latchkey"), !tokens[index].hasSuffix("/latchkey/"),
                index + 1 < tokens.count
            else { continue }
            var command = tree
            var next = index + 1
            while next < tokens.count, let sub = command.subcommand(tokens[next]) {
                command = sub
                next += 1
            }
            guard command !== tree || tokens[next].hasPrefix("--version") || tokens[next].hasPrefix("--help") else {
                continue
            }
            var flags: [String] = []
            while next < tokens.count {
                let token = tokens[next]
                // Another `latchkey` starts another command, unless it is a flag's value
                // (`--run-as latchkey`).
                if ["|", "||", "&&", ";", "#", ">", "2>&1"].contains(token) || token.hasPrefix(")")
                    || (token.hasSuffix("latchkey") && !tokens[next - 1].hasPrefix("--"))
                {
                    break
                }
                flags += Self.flags(in: token)
                if token.hasSuffix(")") || token.hasSuffix(";") { break }
                next += 1
            }
            found.append(Use(command: command, flags: flags))
            index = next - 1
        }
        return found
    }

    /// The long flags in a token (`--port=8080`, `[--host`, `--dev)`).
    static func flags(in text: String) -> [String] {
        text.split(whereSeparator: \.isWhitespace).compactMap { token in
            let trimmed = token.trimmingCharacters(in: CharacterSet(charactersIn: "[](),.`'\""))
            guard trimmed.hasPrefix("--"), trimmed.count > 2 else { return nil }
            return String(trimmed.prefix { $0 != "=" })
        }
    }
}
