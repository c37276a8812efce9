import Foundation
import LatchkeyAPI
import Logging

/// Asks Graph for a person's `token_for_business` (`GET /{app-scoped-id}?fields=token_for_business`
/// with the app token, which Facebook allows for Limited Login ids too): the same string for one
/// person across every app of one Business Manager, so a person's first sign-in through a second
/// app can land on the user the first app made (developers.facebook.com/docs/apps/for-business).
struct BusinessTokenLookup: Sendable {
    let graph: GraphClient
    let apps: [ServerConfiguration.FacebookApp]
    let logger: Logger

    /// The longest token accepted: Facebook's are short opaque strings.
    static let maximumLength = 256

    /// The person's token, or `nil` when Facebook gives none: an app outside any business gets an
    /// error, which is not a failure of the sign-in (the person just gets a user of their own).
    /// - Throws: `facebook_unavailable` when Facebook does not answer: a sign-in that went on
    ///   without asking would split one person into two users for good.
    func token(for identity: FacebookIdentity) async throws -> String? {
        guard let app = apps.first(where: { $0.id == identity.appID }),
            GraphClient.isGraphID(identity.subject)
        else { return nil }
        let answer = try await graph.get(
            "/\(identity.subject)", query: [("fields", "token_for_business")], bearer: app.appToken, app: app.id)
        if let failure = answer.failure {
            if failure.isTransient || [1, 2, 4, 17, 32, 613].contains(failure.code ?? 0) {
                throw APIError.facebookUnavailable("Facebook is temporarily unavailable; try again shortly.")
            }
            logger.debug(
                "latchkey.signin.no_business_token",
                metadata: ["latchkey.facebook.app_id": "\(app.id)", "latchkey.error.cause": "\(failure)"])
            return nil
        }
        guard let token = answer.body["token_for_business"]?.stringValue, !token.isEmpty,
            token.utf8.count <= Self.maximumLength
        else { return nil }
        return token
    }
}
