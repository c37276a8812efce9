import Foundation
import LatchkeyAPI

extension EmulatorEndpoints {
    /// `POST /_emulator/people`: many people at once, each with a classic token and `id_tokens`
    /// Limited Login tokens, for load tests that need distinct users and single-use `jti`s.
    /// People named `{prefix}-{n}` are created once and reused by later calls.
    func bulkPeople(_ input: ControlInput) async throws -> JSONValue {
        guard let app = await state.app(try input.requiredString("app_id")) else {
            throw ControlError.unknownApp(try input.requiredString("app_id"))
        }
        let count = try input.int("count", in: 1...100_000) ?? 1
        let first = try input.int("first", in: 1...10_000_000) ?? 1
        let perPerson = try input.int("id_tokens", in: 0...1_000) ?? 0
        let classic = input.bool("access_tokens") ?? true
        let prefix = input.string("prefix") ?? "load"
        guard prefix.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }), prefix.count <= 32 else {
            throw ControlError(code: "invalid_field", "prefix: letters, digits and - only")
        }
        let scopes = try validScopes(input.list("scopes") ?? app.defaultPermissions)
        let nonce = input.string("nonce")
        var people: [JSONValue] = []
        people.reserveCapacity(count)
        for number in first..<(first + count) {
            let key = "\(prefix)-\(number)"
            if await state.person(key: key) == nil {
                await state.addPerson(
                    Person(
                        key: key, name: "Load \(number)", firstName: "Load", lastName: "\(number)",
                        email: "\(key)@example.com", password: "\(key)-password"))
            }
            _ = await state.recordGrant(appID: app.id, personKey: key, granted: Set(scopes), declined: [])
            var entry: [String: JSONValue] = [
                "key": .string(key), "user_id": .string(EmulatorState.appScopedID(appID: app.id, personKey: key)),
            ]
            if classic {
                let record = await state.issueUserToken(
                    appID: app.id, personKey: key, lifetime: state.lifetimes.longLivedToken)
                entry["access_token"] = .string(record.token)
            }
            var idTokens: [JSONValue] = []
            for _ in 0..<perPerson {
                guard
                    let minted = try await state.mintIDToken(
                        appID: app.id, personKey: key, nonce: nonce, accessToken: nil, baseURL: input.request.baseURL)
                else { throw ControlError.unknownUser(key) }
                idTokens.append(.string(minted.token))
            }
            if perPerson > 0 { entry["id_tokens"] = .array(idTokens) }
            people.append(.object(entry))
        }
        return ["people": .array(people)]
    }
}
