import Testing

@testable import LatchkeyServer

/// `Authorization: Bearer` parsing, which runs on every authenticated request.
@Suite("Bearer token header")
struct BearerTokenTests {
    @Test(
        "the scheme is case-insensitive and surrounding spaces are dropped",
        arguments: [
            ("Bearer abc.def", "abc.def"), ("bearer abc", "abc"), ("BEARER abc", "abc"),
            ("Bearer    abc  ", "abc"), ("bEaReR a b", "a b"), ("Bearer  ", ""),
        ])
    func accepted(header: String, token: String) {
        #expect(BearerAuthentication.bearerToken(header) == token)
    }

    @Test(
        "other schemes and malformed headers are refused",
        arguments: ["Basic abc", "Bearer", "Bearer ", "Bearerabc", "Bearer\tabc", "Bearer\u{0}abc", "", "Beärer abc"])
    func refused(header: String) {
        #expect(BearerAuthentication.bearerToken(header) == nil)
    }
}
