import Foundation
import Hummingbird
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared

/// What the OAuth dialog was asked for, validated before anything is shown or redirected.
struct DialogRequest: Sendable {
    let app: EmulatorApp
    let redirectURI: String
    let state: String?
    let responseTypes: Set<String>
    /// Requested permissions, `public_profile` first, `openid` excluded.
    let permissions: [String]
    let openID: Bool
    let returnScopes: Bool
    let authType: String?
    let nonce: String?
    let challenge: String?
    let challengeMethod: PKCE.Method?
    /// The original parameters, re-posted by the HTML form.
    let parameters: [String: String]

    /// Fragment (`#`) for implicit-style answers, query otherwise (§2.2).
    var usesFragment: Bool {
        !responseTypes.isDisjoint(with: ["token", "token_or_nonce", "id_token", "signed_request"])
    }
}

/// A dialog problem shown as a page: Facebook never redirects to an unverified `redirect_uri`.
struct DialogFailure: Error {
    let title: String
    let message: String
}

extension EmulatorEndpoints {
    /// `GET|POST /dialog/oauth`: the login page, its form submission, or the documented
    /// non-interactive shortcut (`emulator_user`, `emulator_grant`, `emulator_action=cancel`).
    func dialog(_ request: EmulatorRequest, submitted: Bool) async throws -> Response {
        let dialog: DialogRequest
        do {
            dialog = try await parseDialog(request.parameters)
        } catch let failure as DialogFailure {
            return .html(DialogPage.error(title: failure.title, message: failure.message), status: .badRequest)
        }
        if request["emulator_action"] == "cancel" {
            return .redirect(to: redirectURL(dialog, pairs: cancelPairs(dialog)))
        }
        guard let userReference = request["emulator_user"] else {
            if submitted {
                return .html(
                    DialogPage.login(
                        dialog, people: await state.people(visibleTo: dialog.app.id),
                        error: "Choose an account to continue."),
                    status: .badRequest)
            }
            return .html(DialogPage.login(dialog, people: await state.people(visibleTo: dialog.app.id), error: nil))
        }
        guard let person = await state.resolvePerson(userReference, appID: dialog.app.id),
            person.testUserOf == nil || person.testUserOf == dialog.app.id
        else {
            return .html(
                DialogPage.login(
                    dialog, people: await state.people(visibleTo: dialog.app.id), error: "Unknown account."),
                status: .badRequest)
        }
        let chosen = chosenPermissions(request, dialog: dialog)
        return try await approve(dialog, person: person, chosen: chosen, baseURL: request.baseURL)
    }

    /// The permissions the person ticked: `emulator_grant=a,b` (shortcut), `grant_<name>=on`
    /// checkboxes (the form), or everything asked when neither is present.
    private func chosenPermissions(_ request: EmulatorRequest, dialog: DialogRequest) -> Set<String> {
        if let list = request.parameters["emulator_grant"] { return Set(Permissions.parse(list)) }
        let ticked = request.parameters.keys.filter { $0.hasPrefix("grant_") }.map { String($0.dropFirst(6)) }
        if request["emulator_form"] != nil { return Set(ticked) }
        return Set(dialog.permissions)
    }

    private func parseDialog(_ parameters: [String: String]) async throws -> DialogRequest {
        guard let clientID = parameters["client_id"], !clientID.isEmpty, let app = await state.app(clientID) else {
            throw DialogFailure(
                title: "Invalid App ID", message: "The provided app ID does not look like a valid app ID.")
        }
        guard let redirectURI = parameters["redirect_uri"], !redirectURI.isEmpty else {
            throw DialogFailure(title: "Missing redirect_uri", message: "The redirect_uri parameter is required.")
        }
        guard app.accepts(redirectURI: redirectURI) else {
            throw DialogFailure(
                title: "URL Blocked",
                message:
                    "This redirect failed because the redirect URI is not whitelisted in the app's Client OAuth Settings. Make sure Client and Web OAuth Login are on and add all your app domains as Valid OAuth Redirect URIs."
            )
        }
        let requested = Permissions.parse(parameters["scope"])
        let invalid = requested.filter { !Permissions.known.contains($0) }
        guard invalid.isEmpty else {
            throw DialogFailure(
                title: "Invalid Scopes",
                message: "Invalid Scopes: \(invalid.joined(separator: ", ")). This message is only shown to developers."
            )
        }
        var challengeMethod: PKCE.Method?
        let challenge = parameters["code_challenge"].flatMap { $0.isEmpty ? nil : $0 }
        if let challenge {
            // RFC 7636 §4.3: the method defaults to plain.
            let methodName = parameters["code_challenge_method"].flatMap { $0.isEmpty ? nil : $0 } ?? "plain"
            guard let method = PKCE.Method(rawValue: methodName) else {
                throw DialogFailure(
                    title: "Invalid PKCE", message: "Unsupported code_challenge_method '\(methodName)'.")
            }
            guard PKCE.isWellFormed(challenge) else {
                throw DialogFailure(title: "Invalid PKCE", message: "The code_challenge is malformed.")
            }
            challengeMethod = method
        }
        var responseTypes = Set(Permissions.parse(parameters["response_type"]))
        if responseTypes.isEmpty { responseTypes = ["code"] }
        let permissions = ["public_profile"] + requested.filter { $0 != "public_profile" && $0 != "openid" }
        return DialogRequest(
            app: app, redirectURI: redirectURI, state: parameters["state"], responseTypes: responseTypes,
            permissions: permissions, openID: requested.contains("openid"),
            returnScopes: parameters["return_scopes"] == "true" || responseTypes.contains("granted_scopes"),
            authType: parameters["auth_type"].flatMap { $0.isEmpty ? nil : $0 },
            nonce: parameters["nonce"], challenge: challenge, challengeMethod: challengeMethod,
            parameters: parameters.filter { !$0.key.hasPrefix("emulator_") && !$0.key.hasPrefix("grant_") })
    }

    /// Records the grant and answers the app with code, tokens or both (§2.2–2.3).
    private func approve(
        _ dialog: DialogRequest, person: Person, chosen: Set<String>, baseURL: String
    ) async throws
        -> Response
    {
        let grant = await state.recordDialogGrant(
            appID: dialog.app.id, personKey: person.key, requested: Set(dialog.permissions), chosen: chosen,
            rerequest: dialog.authType == "rerequest")
        let scopedID = EmulatorState.appScopedID(appID: dialog.app.id, personKey: person.key)

        var pairs: [(String, String)] = []
        var accessToken: String?
        if !dialog.responseTypes.isDisjoint(with: ["token", "token_or_nonce"]) {
            let record = await state.issueUserToken(
                appID: dialog.app.id, personKey: person.key, lifetime: nil, authType: dialog.authType)
            accessToken = record.token
            pairs.append(("access_token", record.token))
            pairs.append(("expires_in", String(Int(record.expiresAt?.timeIntervalSince(record.issuedAt) ?? 0))))
            pairs.append(
                ("data_access_expiration_time", String(Int(record.dataAccessExpiresAt?.timeIntervalSince1970 ?? 0))))
        }
        var code: String?
        if dialog.responseTypes.contains("code") {
            let value = RandomString.authorizationCode()
            await state.issueCode(
                AuthorizationCode(
                    code: value, appID: dialog.app.id, personKey: person.key, redirectURI: dialog.redirectURI,
                    challenge: dialog.challenge, challengeMethod: dialog.challengeMethod, nonce: dialog.nonce,
                    openID: dialog.openID, authType: dialog.authType, issuedAt: await state.now(), used: false))
            code = value
            pairs.insert(("code", value), at: 0)
        }
        if dialog.responseTypes.contains("id_token"),
            let minted = try await state.mintIDToken(
                appID: dialog.app.id, personKey: person.key, nonce: dialog.nonce, accessToken: accessToken,
                baseURL: baseURL)
        {
            pairs.append(("id_token", minted.token))
        }
        if dialog.responseTypes.contains("signed_request") {
            let issued = Int(await state.now().timeIntervalSince1970)
            var payload: [String: JSONValue] = [
                "algorithm": "HMAC-SHA256", "issued_at": .int(issued), "user_id": .string(scopedID),
            ]
            if let code { payload["code"] = .string(code) }
            pairs.append(("signed_request", SignedRequest.sign(payload: .object(payload), secret: dialog.app.secret)))
        }
        if dialog.responseTypes.contains("graph_domain") { pairs.append(("graph_domain", "facebook")) }
        if dialog.returnScopes {
            pairs.append(("granted_scopes", grant.granted.sorted().joined(separator: ",")))
            pairs.append(("denied_scopes", grant.declined.sorted().joined(separator: ",")))
        }
        if let state = dialog.state { pairs.append(("state", state)) }
        return .redirect(to: redirectURL(dialog, pairs: pairs))
    }

    /// Facebook's cancel redirect (§2.4).
    private func cancelPairs(_ dialog: DialogRequest) -> [(String, String)] {
        var pairs: [(String, String)] = [
            ("error", "access_denied"), ("error_code", "200"), ("error_description", "Permissions error"),
            ("error_reason", "user_denied"),
        ]
        if let state = dialog.state { pairs.append(("state", state)) }
        return pairs
    }

    /// The answer in the fragment, or in the query followed by Facebook's empty `#_=_` fragment.
    /// Facebook has appended that fragment to query redirects (success and error alike) since
    /// 2011 when the redirect URI has none (Facebook's developer blog post 552; passport-facebook's
    /// README, "by design"; omniauth-facebook#71 and django-socialregistration#119 show it after a
    /// code and after a denial), so a callback that reads the query by splitting strings finds
    /// `_=_` where it expected its `state`.
    private func redirectURL(_ dialog: DialogRequest, pairs: [(String, String)]) -> String {
        let encoded = FormEncoding.encode(pairs)
        if dialog.usesFragment { return dialog.redirectURI + "#" + encoded }
        let separator = dialog.redirectURI.contains("?") ? "&" : "?"
        let fragment = dialog.redirectURI.contains("#") ? "" : "#_=_"
        return dialog.redirectURI + separator + encoded + fragment
    }
}
