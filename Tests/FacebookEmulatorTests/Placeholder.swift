import Testing
import HummingbirdTesting
@Test func placeholder() { #expect(Bool(true)) }
