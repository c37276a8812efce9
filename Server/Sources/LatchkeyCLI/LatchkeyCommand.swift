import ArgumentParser

/// The `latchkey` command: thin, it reads configuration and runs what the library builds.
@main
struct LatchkeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latchkey",
        abstract: "Self-hosted Login with Facebook, and a Facebook emulator for offline development.",
        version: Version.current,
        subcommands: [
            ServeCommand.self, EmulatorCommand.self, LoginCommand.self, KeysCommand.self, DatabaseCommand.self,
            UsersCommand.self, DeletionsCommand.self, AdminCommand.self, SettingsCommand.self,
        ]
    )
}
