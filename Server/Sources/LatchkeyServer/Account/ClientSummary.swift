import LatchkeyAPI

extension ClientBody {
    /// What a person is shown of `client`: the network of its address and the family of its
    /// user agent, never the address or the header itself.
    init(_ client: ClientInfo) {
        self.init(
            network: client.address.flatMap(ClientAddress.init).map(\.masked),
            agent: client.userAgent.flatMap(UserAgentFamily.describe))
    }
}

/// A user agent reduced to what an account page shows ("Safari on iPhone"): the browser, or the
/// app's own name for a native app (whose HTTP stack puts it first), and the platform.
enum UserAgentFamily {
    /// Browsers by a token of theirs, most specific first (Edge and Opera also say Chrome, and
    /// Chrome also says Safari).
    private static let browsers: [(token: String, name: String)] = [
        ("Edg/", "Edge"), ("OPR/", "Opera"), ("Firefox/", "Firefox"), ("FxiOS/", "Firefox"), ("CriOS/", "Chrome"),
        ("Chrome/", "Chrome"), ("Safari/", "Safari"),
    ]

    /// Platforms by a token of theirs, most specific first.
    private static let platforms: [(token: String, name: String)] = [
        ("iPhone", "iPhone"), ("iPad", "iPad"), ("Android", "Android"), ("Windows", "Windows"),
        ("Macintosh", "Mac"), ("Mac OS X", "Mac"), ("Darwin/", "Apple"), ("CrOS", "ChromeOS"), ("Linux", "Linux"),
    ]

    /// The family of `userAgent`, or `nil` when it names nothing recognisable.
    static func describe(_ userAgent: String) -> String? {
        let platform = platforms.first { userAgent.contains($0.token) }?.name
        let client: String?
        if userAgent.hasPrefix("Mozilla/") {
            client = browsers.first { userAgent.contains($0.token) }?.name ?? "Browser"
        } else {
            // An app's stack (CFNetwork, okhttp, curl) leads with a product token: `MyApp/3.1 …`.
            client = userAgent.split(separator: " ").first.map { String($0.split(separator: "/").first ?? $0) }
                .map { String($0.prefix(40)) }
        }
        switch (client, platform) {
        case (let client?, let platform?): return "\(client) on \(platform)"
        case (let client?, nil): return client
        case (nil, let platform?): return platform
        case (nil, nil): return nil
        }
    }
}
