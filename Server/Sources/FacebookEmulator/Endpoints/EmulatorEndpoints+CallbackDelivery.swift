import AsyncHTTPClient
import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import NIOCore
import NIOHTTP1

/// One platform callback as the emulator sent it, and what came back.
struct CallbackDelivery: Sendable {
    /// What the backend did with the callback.
    enum Outcome: Sendable {
        /// It answered (any status).
        case answered(status: Int, body: String)
        /// Nothing came back: no connection, a timeout, a broken answer.
        case failed(String)
    }

    let url: String
    let signedRequest: String
    /// The payload the signed request really carries (tampering may have changed it).
    let payload: JSONValue
    let outcome: Outcome

    /// Why nothing came back, when nothing did.
    var failure: String? {
        guard case .failed(let reason) = outcome else { return nil }
        return reason
    }

    /// The report's `callback` member: where it went, what was sent, and the answer or the failure.
    var json: JSONValue {
        var members: [String: JSONValue] = [
            "url": .string(url), "signed_request": .string(signedRequest), "payload": payload,
        ]
        switch outcome {
        case .answered(let status, let body):
            members["status"] = .int(status)
            members["body"] = .string(body)
        case .failed(let reason): members["error"] = .string(reason)
        }
        return .object(members)
    }
}

extension EmulatorEndpoints {
    /// Signs a callback for the app-scoped `userID` with the app's secret (or tampered) and POSTs
    /// it to `url` as Facebook does: form field `signed_request`, Facebook's crawler user agent.
    /// Never throws: a callback nobody answered is a finding the caller reports or refuses.
    func deliverCallback(
        _ kind: CallbackKind, app: EmulatorApp, userID: String, to url: String,
        tampering: SignedRequest.Tampering? = nil, timeoutMilliseconds: Int
    ) async -> CallbackDelivery {
        let issuedAt = Int(await state.now().timeIntervalSince1970)
        var payload: [String: JSONValue] = [
            "user_id": .string(userID), "algorithm": "HMAC-SHA256", "issued_at": .int(issuedAt),
        ]
        if kind == .dataDeletion { payload["expires"] = .int(issuedAt + 3600) }
        let (signed, sentPayload) = SignedRequest.make(
            payload: .object(payload), secret: app.secret, tampering: tampering)

        var outgoing = HTTPClientRequest(url: url)
        outgoing.method = .POST
        outgoing.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        outgoing.headers.add(name: "User-Agent", value: "facebookexternalua")
        outgoing.body = .bytes(ByteBuffer(string: FormEncoding.encode([("signed_request", signed)])))
        let outcome: CallbackDelivery.Outcome
        do {
            let response = try await httpClient.execute(outgoing, timeout: .milliseconds(Int64(timeoutMilliseconds)))
            let body = String(buffer: try await response.body.collect(upTo: 64 * 1024))
            outcome = .answered(status: Int(response.status.code), body: body)
        } catch {
            outcome = .failed("could not deliver the callback: \(error)")
        }
        return CallbackDelivery(url: url, signedRequest: signed, payload: sentPayload, outcome: outcome)
    }
}
