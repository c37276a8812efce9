import Hummingbird
import LatchkeyAPI
import LatchkeyShared

/// The signed-in person's account: `GET` and `PATCH /v1/users/me`.
struct UsersController: Controller {
    let users: UserService
    let events: SecurityEventsService
    let reading: RequestReading
    /// Checks only the token: `GET` reads the user and checks the session in one store operation.
    let tokenChecked: BearerAuthentication
    /// Checks the token and that its session is active.
    let sessionChecked: BearerAuthentication

    /// The fields `PATCH /v1/users/me` accepts: the wire type's, which the SDK writes.
    static let updateFields = UserPropertiesUpdate.CodingKeys.fieldNames

    func register(on router: Router<LatchkeyRequestContext>) {
        router.group().add(middleware: tokenChecked).route(.get, "/v1/users/me") { _, context in
            try Response.json(UserBody(try await users.current(try context.authenticatedSession())))
        }
        router.group().add(middleware: sessionChecked).route(.patch, "/v1/users/me") { request, context in
            let claims = try context.authenticatedSession()
            let fields = try await reading.fields(request, allowed: Self.updateFields)
            guard let properties = fields[UserPropertiesUpdate.CodingKeys.properties.stringValue]?.objectValue else {
                throw APIError.invalidRequest("Send {\"properties\": {…}}.")
            }
            let user = try await users.update(claims, UserPropertiesUpdate(properties: properties))
            return try Response.json(UserBody(user))
        }
        router.group().add(middleware: sessionChecked).route(.get, "/v1/users/me/events") { request, context in
            let query = QueryParameters(request.uri.query)
            guard query.repeated.isEmpty else { throw APIError.invalidRequest("Send each parameter once.") }
            return try Response.json(
                try await events.page(
                    try context.authenticatedSession(), cursor: query.values["cursor"], limit: query.values["limit"]))
        }
    }
}
