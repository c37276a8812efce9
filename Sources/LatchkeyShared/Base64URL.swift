import Foundation

/// Unpadded base64url (RFC 4648 §5), the encoding of JWS segments and Facebook's `signed_request`.
///
/// Written over bytes rather than through Foundation's base64 and string replacement: it runs
/// several times per token on every request, and the string route cost more than the signature
/// check it surrounds (docs/performance.md).
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// 0–63 for each base64url byte, 0xFF otherwise; `+` and `/` are refused (not base64url).
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// Encodes bytes without `=` padding.
    ///
    /// The generic entry points are inlinable wrappers around one non-generic loop over a buffer:
    /// called from another module, a plain generic function runs unspecialized, through witness
    /// tables per byte, which made decoding a token slower than verifying its signature.
    @inlinable
    public static func encode(_ bytes: some DataProtocol) -> String {
        if let encoded = bytes.withContiguousStorageIfAvailable({ encode(buffer: UnsafeRawBufferPointer($0)) }) {
            return encoded
        }
        return Array(bytes).withUnsafeBytes { encode(buffer: $0) }
    }

    /// Decodes padded or unpadded base64url; `nil` when the text is not base64url.
    ///
    /// Padding is accepted because one report has Facebook's signature segment carrying a trailing `=`.
    @inlinable
    public static func decode(_ text: some StringProtocol) -> Data? {
        if let decoded = text.utf8.withContiguousStorageIfAvailable({ decode(buffer: UnsafeRawBufferPointer($0)) }) {
            return decoded
        }
        return Array(text.utf8).withUnsafeBytes { decode(buffer: $0) }
    }

    /// Decodes padded or unpadded base64url text given as its UTF-8 bytes; `nil` when it is not
    /// base64url. Callers that split a token on its bytes decode the slices without making strings.
    @inlinable
    public static func decode(bytes text: some Collection<UInt8>) -> Data? {
        if let decoded = text.withContiguousStorageIfAvailable({ decode(buffer: UnsafeRawBufferPointer($0)) }) {
            return decoded
        }
        return Array(text).withUnsafeBytes { decode(buffer: $0) }
    }

    /// The encoding loop behind `encode(_:)`.
    @usableFromInline
    static func encode(buffer input: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: (input.count * 4 + 2) / 3) { output in
            var written = 0
            var index = 0
            while index + 3 <= input.count {
                let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                output[written] = alphabet[Int(chunk >> 18 & 63)]
                output[written + 1] = alphabet[Int(chunk >> 12 & 63)]
                output[written + 2] = alphabet[Int(chunk >> 6 & 63)]
                output[written + 3] = alphabet[Int(chunk & 63)]
                written += 4
                index += 3
            }
            let rest = input.count - index
            if rest > 0 {
                let chunk = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
                output[written] = alphabet[Int(chunk >> 18 & 63)]
                output[written + 1] = alphabet[Int(chunk >> 12 & 63)]
                written += 2
                if rest == 2 {
                    output[written] = alphabet[Int(chunk >> 6 & 63)]
                    written += 1
                }
            }
            return written
        }
    }

    /// The decoding loop behind `decode(_:)` and `decode(bytes:)`.
    @usableFromInline
    static func decode(buffer: UnsafeRawBufferPointer) -> Data? {
        var count = buffer.count
        while count > 0, buffer[count - 1] == UInt8(ascii: "=") { count -= 1 }
        if count % 4 == 1 { return nil }
        var output = [UInt8]()
        output.reserveCapacity(count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in buffer[..<count] {
            let value = values[Int(byte)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero, as a canonical encoder writes them.
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return Data(output)
    }
}
