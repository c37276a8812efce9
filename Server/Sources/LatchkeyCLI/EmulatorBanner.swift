import FacebookEmulator

/// What `latchkey emulator` prints once it listens: the apps (with their callback URLs) and people
/// it holds, and a curl to try.
enum EmulatorBanner {
    static func text(seed: EmulatorSeed, baseURL: String) -> String {
        var lines = ["Facebook emulator listening on \(baseURL)", "", "Apps:"]
        for app in seed.apps {
            let proof = app.requireAppSecretProof ? "  (requires appsecret_proof)" : ""
            lines.append("  \(app.id)  \(app.name)  secret=\(app.secret)\(proof)")
            // The callback URLs the scenarios post to, as the app's dashboard shows them.
            if let url = app.deauthorizeCallbackURL { lines.append("    deauthorize callback: \(url)") }
            if let url = app.dataDeletionCallbackURL { lines.append("    data deletion callback: \(url)") }
        }
        if let first = seed.apps.first {
            lines.append("")
            lines.append("Users (app-scoped ids in app \(first.id)):")
            for user in seed.users {
                let id = appScopedUserID(appID: first.id, personKey: user.person.key)
                let email = user.person.email.map { "<\($0)>" } ?? "(no email)"
                lines.append("  \(user.person.key.padding(8))  \(id)  \(user.person.name)  \(email)")
            }
            lines.append("")
            lines.append("Try:")
            lines.append(
                "  curl -s -X POST \(baseURL)/_emulator/tokens -H 'content-type: application/json' -d '{\"app_id\":\"\(first.id)\",\"user\":\"\(seed.users.first?.person.key ?? "alice")\"}'"
            )
            lines.append("  curl -s \"\(baseURL)/v21.0/me?fields=id,name,email&access_token=TOKEN\"")
            lines.append(
                "  curl -s \"\(baseURL)/debug_token?input_token=TOKEN&access_token=\(first.id)|\(first.secret)\"")
            lines.append(
                "  open \(baseURL)/dialog/oauth?client_id=\(first.id)&redirect_uri=https://www.facebook.com/connect/login_success.html"
            )
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
