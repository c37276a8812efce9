import ArgumentParser
import Foundation
import LatchkeyServer

/// `latchkey settings`: every setting, its default and meaning, from the one table the server
/// parses its configuration with (`ServerConfiguration.settings`). The README's table is this
/// command's `--markdown` output, and a test holds the two equal.
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings", abstract: "List every setting, with its default and meaning.")

    @Flag(help: "Print the README's Markdown tables.")
    var markdown = false

    func run() {
        let settings = ServerConfiguration.settings
        guard !markdown else {
            print(Setting.markdown(settings))
            return
        }
        for group in Setting.Group.allCases {
            let members = settings.filter { $0.group == group }
            guard !members.isEmpty else { continue }
            print("\(group.title):")
            for setting in members {
                print("  \(setting.name) (default \(Self.plain(setting.defaultValue)))")
                print("      \(Self.plain(setting.meaning))")
            }
        }
    }

    /// Markdown's code spans as plain text, for a terminal.
    static func plain(_ markdown: String) -> String { markdown.replacingOccurrences(of: "`", with: "") }
}
