import LatchkeyAPI
import LatchkeyShared
import Testing

/// `application/x-www-form-urlencoded`, written and read byte by byte.
@Suite("Form encoding")
struct FormEncodingTests {
    @Test("unreserved characters stay, space is +, everything else is %XX in upper case")
    func escape() {
        #expect(FormEncoding.escape("AZaz09-._~") == "AZaz09-._~")
        #expect(FormEncoding.escape("a b&c=d/e+f") == "a+b%26c%3Dd%2Fe%2Bf")
        #expect(FormEncoding.escape("é😀") == "%C3%A9%F0%9F%98%80")
        #expect(FormEncoding.escape("") == "")
    }

    @Test("+ and %XX decode; malformed escapes and non-UTF-8 bytes are kept as written")
    func unescape() {
        #expect(FormEncoding.unescape("a%20b+c%2b") == "a b c+")
        #expect(FormEncoding.unescape("%C3%A9%c3%a9") == "éé")
        #expect(FormEncoding.unescape("%zz%41%4") == "%zzA%4")
        #expect(FormEncoding.unescape("100%") == "100%")
        #expect(FormEncoding.unescape("%FF+x") == "%FF x")
    }

    @Test("encode then decode gives the pairs back")
    func roundTrip() {
        let pairs = [("redirect_uri", "app://cb?x=1&y=2"), ("state", "{\"a\": [1, 2]} é"), ("empty", "")]
        let decoded = FormEncoding.pairs(FormEncoding.encode(pairs))
        #expect(decoded.map(\.0) == pairs.map(\.0))
        #expect(decoded.map(\.1) == pairs.map(\.1))
    }
}
