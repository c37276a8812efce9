import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyShared

/// Random strings from the system's secure generator, for every party: session ids and refresh
/// tokens on the server, nonces, states and PKCE verifiers in the SDK, Facebook-shaped tokens in
/// the emulator.
public enum RandomToken {
    /// `count` random bytes as unpadded base64url (4 characters per 3 bytes).
    ///
    /// One getrandom call for the whole token (through `SymmetricKey`); drawing byte by byte from
    /// the system generator cost a call per byte (docs/performance.md).
    public static func base64URL(bytes count: Int) -> String {
        bytes(count).withUnsafeBytes { Base64URL.encode($0) }
    }

    /// `count` characters drawn uniformly from `alphabet` (at most 256 distinct ASCII characters).
    ///
    /// Uniform by rejection: a byte is used only when it falls below the largest multiple of the
    /// alphabet's size, so no character is likelier than another (a plain `byte % size` would
    /// favour the first `256 % size` characters).
    public static func string(count: Int, alphabet: String) -> String {
        string(count: count, alphabet: alphabet, source: bytes)
    }

    /// `string(count:alphabet:)` over a given byte source (tests pass their own bytes).
    static func string(count: Int, alphabet: String, source: (Int) -> [UInt8]) -> String {
        let symbols = Array(alphabet.utf8)
        guard count > 0, !symbols.isEmpty, symbols.count <= 256 else { return "" }
        let limit = 256 - 256 % symbols.count
        var output: [UInt8] = []
        output.reserveCapacity(count)
        while output.count < count {
            // Enough bytes for the rest in one call, plus a margin for the rejected ones.
            for byte in source(count - output.count + 8) where Int(byte) < limit && output.count < count {
                output.append(symbols[Int(byte) % symbols.count])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// `[A-Za-z0-9]`.
    public static let alphanumerics = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

    /// `count` characters of `[A-Za-z0-9]`.
    public static func alphanumeric(_ count: Int) -> String { string(count: count, alphabet: alphanumerics) }

    /// `count` lowercase hex characters.
    public static func hex(_ count: Int) -> String { string(count: count, alphabet: "0123456789abcdef") }

    private static func bytes(_ count: Int) -> [UInt8] {
        SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { Array($0) }
    }
}
