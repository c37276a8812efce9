import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import LatchkeyCrypto

extension EmulatorEndpoints {
    /// The control API under `/_emulator/` (documented in the README): minting, revocation, clock,
    /// keys, faults, call counts and platform callbacks. Not Facebook's, so not in its envelope.
    func control(_ request: EmulatorRequest, path: [String]) async throws -> Response {
        let input = ControlInput(request: request)
        switch (request.method, path) {
        case (.get, []): return .json(await overview(request))
        case (.post, ["tokens"]): return .json(try await mintToken(input))
        case (.post, ["id-tokens"]): return .json(try await mintIDToken(input))
        case (.post, ["people"]): return .json(try await bulkPeople(input))
        case (.post, ["tokens", "revoke"]): return .json(try await revoke(input))
        case (.post, ["tokens", "expire"]):
            let token = try input.requiredString("access_token")
            guard await state.expire(token: token, sendsSubcode: input.bool("send_subcode")) else {
                throw ControlError(.notFound, code: "unknown_token", "the emulator did not issue this token")
            }
            return .json(["expired": true])
        case (.get, ["clock"]): return .json(["now": .int(Int(await state.now().timeIntervalSince1970))])
        case (.post, ["clock"]): return .json(try await moveClock(input))
        case (.get, ["keys"]): return .json(await keyList())
        case (.post, ["keys", "rotate"]):
            _ = try await state.rotateKey()
            return .json(await keyList())
        case (.post, ["keys"]):
            _ = try await state.addKey()
            return .json(await keyList())
        case (.delete, let parts) where parts.count == 2 && parts[0] == "keys":
            guard await state.removeKey(kid: parts[1]) else {
                throw ControlError(
                    .notFound, code: "unknown_key", "no removable key '\(parts[1])' (the signing key stays)")
            }
            return .json(await keyList())
        case (.post, let parts) where parts.count == 3 && parts[0] == "apps" && parts[2] == "redirect-uris":
            let uri = try input.requiredString("redirect_uri")
            guard let url = URL(string: uri), url.scheme != nil, !uri.contains("#") else {
                throw ControlError(.badRequest, code: "invalid_redirect_uri", "redirect_uri must be an absolute URI")
            }
            guard let app = await state.addRedirectURI(uri, appID: parts[1]) else {
                throw ControlError(.notFound, code: "unknown_app", "no app '\(parts[1])'")
            }
            return .json(["id": .string(app.id), "redirect_uris": .array(app.redirectURIs.map(JSONValue.string))])
        case (.post, let parts) where parts.count == 3 && parts[0] == "apps" && parts[2] == "callbacks":
            return .json(try await setCallbackURLs(input, appID: parts[1]))
        case (.get, ["faults"]): return .json(["faults": .array(await state.faults.map(Self.describe))])
        case (.post, ["faults"]):
            let fault = try faultFrom(input)
            await state.addFault(fault)
            return .json(Self.describe(fault))
        case (.delete, ["faults"]):
            await state.clearFaults()
            return .json(["faults": []])
        case (.get, ["calls"]):
            return .json(["calls": .object(await state.callCounts().mapValues(JSONValue.int))])
        case (.get, ["requests"]):
            return .json(["requests": .array(await state.recordedRequests().map(\.json))])
        case (.delete, ["requests"]):
            await state.clearRecordedRequests()
            return .json(["requests": []])
        case (.delete, ["calls"]):
            await state.resetCallCounts()
            return .json(["calls": [:]])
        case (.get, ["usage"]): return .json(await usageReport())
        case (.post, ["usage"]): return .json(try await setUsage(input))
        case (.delete, ["usage"]):
            await state.resetUsage()
            return .json(await usageReport())
        case (.post, ["callbacks", "deauthorize"]): return .json(try await sendCallback(input, kind: .deauthorize))
        case (.post, ["callbacks", "data-deletion"]): return .json(try await sendCallback(input, kind: .dataDeletion))
        case (.post, ["scenarios", "remove-app"]): return .json(try await removeAppScenario(input))
        case (.post, ["scenarios", "request-deletion"]): return .json(try await requestDeletionScenario(input))
        case (_, let parts) where parts.first == "apple":
            return .json(try await appleControl(request, path: Array(parts.dropFirst())))
        default:
            throw ControlError(
                .notFound, code: "unknown_control",
                "no control endpoint \(request.method) /_emulator/\(path.joined(separator: "/"))")
        }
    }

    /// Apps (with secrets: this is a development tool, and with the callback URLs their dashboard
    /// holds), people with their per-app ids, keys, time.
    private func overview(_ request: EmulatorRequest) async -> JSONValue {
        let apps = await state.allApps()
        let people = await state.allPeople()
        var overview: [String: JSONValue] = [
            "apps": .array(
                apps.map { app -> JSONValue in
                    var members: [String: JSONValue] = [
                        "id": .string(app.id), "name": .string(app.name), "secret": .string(app.secret),
                        "redirect_uris": .array(app.redirectURIs.map(JSONValue.string)),
                        "require_appsecret_proof": .bool(app.requireAppSecretProof),
                    ]
                    members.merge(Self.callbackURLs(of: app)) { first, _ in first }
                    return .object(members)
                }),
            "users": .array(
                people.map { person in
                    [
                        "key": .string(person.key), "name": .string(person.name),
                        "email": person.email.map(JSONValue.string) ?? .null,
                        "ids": .object(
                            Dictionary(
                                uniqueKeysWithValues: apps.map {
                                    (
                                        $0.id,
                                        JSONValue.string(EmulatorState.appScopedID(appID: $0.id, personKey: person.key))
                                    )
                                })),
                    ]
                }),
            "keys": .array(await state.keys.map { .string($0.kid) }),
            "now": .int(Int(await state.now().timeIntervalSince1970)),
            "issuer": .string(state.issuer),
            "base_url": .string(request.baseURL),
        ]
        if let apple = await appleOverview() { overview["apple"] = apple }
        return .object(overview)
    }

    /// The app and person a control call names (`app_id` + `user`, key or app-scoped id).
    private func appAndPerson(_ input: ControlInput) async throws -> (EmulatorApp, Person) {
        let appID = try input.requiredString("app_id")
        guard let app = await state.app(appID) else { throw ControlError.unknownApp(appID) }
        let reference = try input.requiredString("user")
        guard let person = await state.resolvePerson(reference, appID: app.id) else {
            throw ControlError.unknownUser(reference)
        }
        return (app, person)
    }

    /// Grants `scopes` (or the app's defaults) and issues a token without the dialog.
    private func mintToken(_ input: ControlInput) async throws -> JSONValue {
        let (app, person) = try await appAndPerson(input)
        let scopes = try validScopes(input.list("scopes") ?? app.defaultPermissions)
        let declined = try validScopes(input.list("declined") ?? [])
        // `replace: true` sets the grant to exactly these permissions instead of adding to it.
        let grant =
            input.bool("replace") == true
            ? await state.replaceGrant(
                appID: app.id, personKey: person.key, granted: Set(scopes), declined: Set(declined))
            : await state.recordGrant(
                appID: app.id, personKey: person.key, granted: Set(scopes), declined: Set(declined))
        let lifetime: TimeInterval? =
            input.bool("short_lived") == true
            ? nil
            : TimeInterval(
                try input.int("lifetime_seconds", in: 1...3_153_600_000) ?? Int(state.lifetimes.longLivedToken))
        let record = await state.issueUserToken(
            appID: app.id, personKey: person.key, lifetime: lifetime, sendsSubcode: input.bool("send_subcode") ?? true)
        return [
            "access_token": .string(record.token),
            "user_id": .string(EmulatorState.appScopedID(appID: app.id, personKey: person.key)),
            "expires_at": .int(Int(record.expiresAt?.timeIntervalSince1970 ?? 0)),
            "expires_in": .int(Int(record.expiresAt?.timeIntervalSince(record.issuedAt) ?? 0)),
            "scopes": .array(grant.granted.sorted().map(JSONValue.string)),
            "appsecret_proof": .string(AppSecretProof.compute(accessToken: record.token, secret: app.secret)),
        ]
    }

    /// Signs a Limited Login id token directly, honest or with one `defect`.
    private func mintIDToken(_ input: ControlInput) async throws -> JSONValue {
        let (app, person) = try await appAndPerson(input)
        var defect: IDTokenDefect?
        if let name = input.string("defect") {
            guard let parsed = IDTokenDefect(rawValue: name) else {
                let names = IDTokenDefect.allCases.map(\.rawValue).joined(separator: ", ")
                throw ControlError(code: "invalid_field", "unknown defect '\(name)'; one of: \(names)")
            }
            defect = parsed
        }
        let scopes = try validScopes(input.list("scopes") ?? app.defaultPermissions)
        _ = await state.recordGrant(appID: app.id, personKey: person.key, granted: Set(scopes), declined: [])
        guard
            let minted = try await state.mintIDToken(
                appID: app.id, personKey: person.key, nonce: input.string("nonce"), accessToken: nil,
                baseURL: input.request.baseURL, defect: defect)
        else { throw ControlError.unknownUser(person.key) }
        return ["id_token": .string(minted.token), "claims": minted.claims]
    }

    func validScopes(_ scopes: [String]) throws -> [String] {
        if let unknown = scopes.first(where: { !Permissions.known.contains($0) }) {
            throw ControlError(code: "invalid_field", "unknown permission '\(unknown)'")
        }
        return scopes
    }

    /// Revokes one token, or every token of a person in an app, for a reason with its own subcode.
    private func revoke(_ input: ControlInput) async throws -> JSONValue {
        let reasonName = input.string("reason") ?? TokenInvalidation.invalidated.rawValue
        guard let reason = TokenInvalidation(rawValue: reasonName) else {
            let names = TokenInvalidation.allCases.map(\.rawValue).joined(separator: ", ")
            throw ControlError(code: "invalid_field", "unknown reason '\(reasonName)'; one of: \(names)")
        }
        let sendsSubcode = input.bool("send_subcode")
        if let token = input.string("access_token") {
            guard await state.invalidate(token: token, reason: reason, sendsSubcode: sendsSubcode) else {
                throw ControlError(.notFound, code: "unknown_token", "the emulator did not issue this token")
            }
            return ["revoked": 1, "reason": .string(reason.rawValue)]
        }
        let (app, person) = try await appAndPerson(input)
        if reason == .appRemoved {
            await state.removeApp(appID: app.id, personKey: person.key, sendsSubcode: sendsSubcode)
            return ["revoked": .int(1), "reason": .string(reason.rawValue)]
        }
        let count = await state.invalidateTokens(
            personKey: person.key, appID: app.id, reason: reason, sendsSubcode: sendsSubcode)
        return ["revoked": .int(count), "reason": .string(reason.rawValue)]
    }

    private func moveClock(_ input: ControlInput) async throws -> JSONValue {
        let now: Date
        // About ±100 years: far enough for any expiry test, near enough that dates stay representable.
        if let seconds = try input.int("advance_seconds", in: -3_153_600_000...3_153_600_000) {
            now = await state.advanceClock(by: TimeInterval(seconds))
        } else if let epoch = try input.int("now", in: 0...4_102_444_800) {
            now = await state.setClock(to: Date(timeIntervalSince1970: TimeInterval(epoch)))
        } else {
            throw ControlError(code: "missing_field", "give 'advance_seconds' or 'now' (epoch seconds)")
        }
        return ["now": .int(Int(now.timeIntervalSince1970))]
    }

    private func keyList() async -> JSONValue {
        let keys = await state.keys
        return ["active": .string(keys.first?.kid ?? ""), "keys": .array(keys.map { .string($0.kid) })]
    }

    private func faultFrom(_ input: ControlInput) throws -> Fault {
        let endpoint = input.string("endpoint") ?? "*"
        guard endpoint == "*" || Endpoint.allNames.contains(endpoint) else {
            throw ControlError(
                code: "invalid_field",
                "unknown endpoint '\(endpoint)'; one of: *, \(Endpoint.allNames.sorted().joined(separator: ", "))")
        }
        let latency = try input.int("latency_ms", in: 0...60_000) ?? 0
        var error: GraphError?
        if let preset = input.string("preset") {
            guard let found = Fault.preset(preset) else {
                throw ControlError(
                    code: "invalid_field",
                    "unknown preset '\(preset)'; one of: server_error, unknown_error, transient, rate_limit_app, rate_limit_user, rate_limit_custom"
                )
            }
            error = found
        } else if let code = try input.int("code") {
            let status = try input.int("status", in: 400...599) ?? 400
            error = GraphError(
                status: HTTPResponse.Status(code: status), message: input.string("message") ?? "Injected error",
                type: input.string("type") ?? "OAuthException", code: code, subcode: try input.int("subcode"),
                isTransient: input.bool("is_transient"))
        } else if input.string("apple_error") != nil {
            // Apple's paths answer only `{"error": …}`; the Graph error carries the status (and is
            // what a `*` fault answers on Facebook's paths).
            let status = try input.int("status", in: 400...599) ?? 400
            error = GraphError(status: HTTPResponse.Status(code: status), message: "Injected error", code: 1)
        }
        var fault = Fault(
            endpoint: endpoint, latencyMilliseconds: latency, error: error,
            remaining: try input.int("count", in: 1...1_000_000), headers: try headerChanges(input),
            sendsSubcodes: input.bool("send_subcode") ?? true)
        fault.appleError = input.string("apple_error")
        guard fault.isEffective else {
            throw ControlError(
                code: "missing_field",
                "give 'preset', 'code', 'apple_error', 'latency_ms', 'headers' or 'send_subcode: false'")
        }
        return fault
    }

    /// `headers`: an object of header names to a string value, or `null` to remove the header.
    private func headerChanges(_ input: ControlInput) throws -> [Fault.HeaderChange] {
        guard let given = input.request.json?["headers"] else { return [] }
        guard let members = given.objectValue, members.count <= 20 else {
            throw ControlError(code: "invalid_field", "'headers' must be an object of at most 20 headers")
        }
        return try members.keys.sorted().map { name in
            guard let field = HTTPField.Name(name) else {
                throw ControlError(code: "invalid_field", "'\(name)' is not a header name")
            }
            // Headers that frame the message would corrupt the connection a client reuses.
            guard !Self.framingHeaders.contains(name.lowercased()) else {
                throw ControlError(code: "invalid_field", "'\(name)' frames the message and cannot be set")
            }
            switch members[name] {
            case .string(let value)?
            where value.utf8.count <= 8192 && value.unicodeScalars.allSatisfy(Self.isFieldScalar):
                return Fault.HeaderChange(name: field, value: value)
            case .null?: return Fault.HeaderChange(name: field, value: nil)
            default:
                throw ControlError(
                    code: "invalid_field", "header '\(name)' needs a printable string of at most 8 KiB, or null")
            }
        }
    }

    private static let framingHeaders: Set<String> = [
        "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer",
    ]

    private static func isFieldScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\t" || (scalar.value >= 0x20 && scalar.value != 0x7F)
    }

    private static func describe(_ fault: Fault) -> JSONValue {
        var body: [String: JSONValue] = [
            "endpoint": .string(fault.endpoint), "latency_ms": .int(fault.latencyMilliseconds),
            "remaining": fault.remaining.map(JSONValue.int) ?? .null,
        ]
        if let error = fault.error { body["error"] = error.envelope(traceID: "")["error"] ?? .null }
        if !fault.headers.isEmpty {
            body["headers"] = .object(
                Dictionary(
                    uniqueKeysWithValues: fault.headers.map {
                        ($0.name.rawName, $0.value.map(JSONValue.string) ?? .null)
                    }))
        }
        if !fault.sendsSubcodes { body["send_subcode"] = false }
        if let appleError = fault.appleError { body["apple_error"] = .string(appleError) }
        return .object(body)
    }

    /// `GET /_emulator/usage`: each app's platform rate limit, its calls in the rolling hour and the
    /// `X-App-Usage` figures they amount to.
    private func usageReport() async -> JSONValue {
        var apps: [String: JSONValue] = [:]
        for (appID, limits, calls) in await state.usageReport() {
            apps[appID] = [
                "daily_active_users": .int(limits.dailyActiveUsers), "hourly_budget": .int(limits.hourlyBudget),
                "user_hourly_limit": limits.userHourlyLimit.map(JSONValue.int) ?? .null,
                "headers_after_calls": .int(limits.headersAfterCalls), "calls": .int(calls),
                "usage": limits.usage(calls: calls).json, "pinned": limits.pinned.json,
            ]
        }
        return ["apps": .object(apps)]
    }

    /// `POST /_emulator/usage`: an app's budget (`daily_active_users`), per-person limit
    /// (`user_hourly_limit`, 0 for none), when headers start (`headers_after_calls`) and pinned
    /// percentages (`call_count`, `total_cputime`, `total_time`).
    private func setUsage(_ input: ControlInput) async throws -> JSONValue {
        let appID = try input.requiredString("app_id")
        let users = try input.int("daily_active_users", in: 1...1_000_000_000)
        let userLimit = try input.int("user_hourly_limit", in: 0...1_000_000_000)
        let after = try input.int("headers_after_calls", in: 0...1_000_000_000)
        let callCount = try input.int("call_count", in: 0...1000)
        let cpu = try input.int("total_cputime", in: 0...1000)
        let time = try input.int("total_time", in: 0...1000)
        guard
            await state.setUsageLimits(
                appID: appID,
                { limits in
                    if let users { limits.dailyActiveUsers = users }
                    if let userLimit { limits.userHourlyLimit = userLimit == 0 ? nil : userLimit }
                    if let after { limits.headersAfterCalls = after }
                    if let callCount { limits.pinned.callCount = callCount }
                    if let cpu { limits.pinned.totalCPUTime = cpu }
                    if let time { limits.pinned.totalTime = time }
                }) != nil
        else { throw ControlError.unknownApp(appID) }
        return await usageReport()
    }
}
