import Foundation
import LatchkeyAPI
import LatchkeyShared
import Testing

@testable import FacebookEmulator

/// A compact JWS split into decoded header, payload and raw signing input, for assertions.
struct JWTParts {
    let header: JSONValue
    let payload: JSONValue
    let signingInput: String
    let signature: Data

    init(_ token: String) throws {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(parts.count == 3)
        header = try JSONValue.decode(try #require(Base64URL.decode(parts[0])))
        payload = try JSONValue.decode(try #require(Base64URL.decode(parts[1])))
        signingInput = parts[0] + "." + parts[1]
        signature = try #require(Base64URL.decode(parts[2]))
    }
}
