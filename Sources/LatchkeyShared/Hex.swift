/// Lowercase hex, as nonce hashes and `appsecret_proof` are written. A table lookup per byte:
/// `String(format: "%02x")` went through Foundation's formatter and was a tenth of a Limited
/// Login's CPU (docs/performance.md).
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as lowercase hex. Inlinable around a non-generic loop, like `Base64URL`, so callers in
    /// other modules do not run it unspecialized.
    @inlinable
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        if let hex = bytes.withContiguousStorageIfAvailable({ encode(buffer: UnsafeRawBufferPointer($0)) }) {
            return hex
        }
        return Array(bytes).withUnsafeBytes { encode(buffer: $0) }
    }

    /// The loop behind `encode(_:)`.
    @usableFromInline
    static func encode(buffer: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: buffer.count * 2) { output in
            for (index, byte) in buffer.enumerated() {
                output[2 * index] = digits[Int(byte >> 4)]
                output[2 * index + 1] = digits[Int(byte & 15)]
            }
            return buffer.count * 2
        }
    }
}
