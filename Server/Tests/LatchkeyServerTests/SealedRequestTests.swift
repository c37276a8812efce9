import Foundation
import LatchkeyAPI
import LatchkeyShared
import Testing

@testable import LatchkeyServer

/// `SealedRequest` and the request's encoding, without a server.
@Suite("Easy Login: sealing the request")
struct SealedRequestTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000.25)

    static func request(state: String? = "s", mapping: [String: String]? = ["email": "email"]) -> AuthorizationRequest {
        AuthorizationRequest(
            clientID: "app", redirectURI: "http://127.0.0.1:8123/callback", clientState: state,
            codeChallenge: String(repeating: "c", count: 43), fieldsMapping: mapping, facebookAppID: "1000001",
            facebookCodeVerifier: String(repeating: "v", count: 43), expiresAt: now)
    }

    static func ring(_ keys: SessionSigningKey...) -> [Data: SessionSigningKey] {
        Dictionary(uniqueKeysWithValues: keys.map { ($0.requestKeyID, $0) })
    }

    @Test("every field round-trips, absent ones too, the expiry to the fraction of a second")
    func roundTrip() throws {
        let key = SessionSigningKey.generate(now: Self.now)
        for request in [
            Self.request(), Self.request(state: nil, mapping: nil), Self.request(state: "", mapping: [:]),
            Self.request(state: "\u{0}é\"&=", mapping: ["id": "a", "email": "b", "name": "c"]),
        ] {
            #expect(AuthorizationRequest(encoded: request.encoded) == request)
            let opened = try #require(
                SealedRequest.open(try SealedRequest.seal(request, key: key), keys: Self.ring(key)))
            #expect(opened.request == request)
        }
    }

    @Test("each seal is new; one sealed state has one use key, however it is spelled")
    func useKey() throws {
        let key = SessionSigningKey.generate(now: Self.now)
        let first = try SealedRequest.seal(Self.request(), key: key)
        let second = try SealedRequest.seal(Self.request(), key: key)
        #expect(first != second)
        let keys = Self.ring(key)
        let use = try #require(SealedRequest.open(first, keys: keys)?.useKey)
        #expect(SealedRequest.open(second, keys: keys)?.useKey != use)
        #expect(SealedRequest.open(first + "==", keys: keys)?.useKey == use)
    }

    @Test("any altered bit, another deployment's key, another version or trailing bytes: refused")
    func refused() throws {
        let key = SessionSigningKey.generate(now: Self.now)
        let other = SessionSigningKey.generate(now: Self.now)
        let state = try SealedRequest.seal(Self.request(), key: key)
        let bytes = try #require(Base64URL.decode(state))
        for index in bytes.indices {
            var altered = bytes
            altered[index] ^= 0x01
            #expect(SealedRequest.open(Base64URL.encode(altered), keys: Self.ring(key, other)) == nil, "\(index)")
        }
        #expect(SealedRequest.open(state, keys: Self.ring(other)) == nil)
        #expect(SealedRequest.open(state, keys: Self.ring(key, other)) != nil)
        #expect(SealedRequest.open(Base64URL.encode(bytes.prefix(36)), keys: Self.ring(key)) == nil)
        #expect(SealedRequest.open(String(repeating: "A", count: 9000), keys: Self.ring(key)) == nil)
        #expect(AuthorizationRequest(encoded: Self.request().encoded + Data([0])) == nil)
        #expect(AuthorizationRequest(encoded: Self.request().encoded.dropLast()) == nil)
        #expect(AuthorizationRequest(encoded: Data()) == nil)
    }

    @Test(
        "a ring opens states sealed under a key that stopped signing within the window, not under keys rotated out long ago"
    )
    func retiredKeys() throws {
        let old = SessionSigningKey.generate(now: Self.now.addingTimeInterval(-60 * 86_400))
        let previous = SessionSigningKey.generate(now: Self.now.addingTimeInterval(-30 * 86_400))
        let current = SessionSigningKey.generate(now: Self.now.addingTimeInterval(-1000))
        let ring = try SessionKeyRing(
            keys: [old, previous, current], now: Self.now, accessTokenLifetime: 900, sealedRequestWindow: 4260)
        // `previous` signed until `current` came, 1000 s ago: a request it sealed may still be alive.
        let fromPrevious = try SealedRequest.seal(Self.request(), key: previous)
        #expect(SealedRequest.open(fromPrevious, keys: ring.requestKeys)?.request == Self.request())
        // `old` stopped signing 30 days ago: nothing it sealed is alive, and whoever holds it (an old
        // backup) cannot seal a request the server would act on.
        #expect(SealedRequest.open(try SealedRequest.seal(Self.request(), key: old), keys: ring.requestKeys) == nil)
        // With an activation delay, a key signs until its successor activates, not until it is made.
        let delayed = try SessionKeyRing(
            keys: [old, previous, current], now: Self.now, accessTokenLifetime: 900, activationDelay: 30 * 86_400,
            sealedRequestWindow: 4260)
        #expect(SealedRequest.open(try SealedRequest.seal(Self.request(), key: old), keys: delayed.requestKeys) != nil)
    }
}
