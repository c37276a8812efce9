/// Lowercase hex, as nonce hashes and `appsecret_proof` are written. A table lookup per byte:
/// `String(format: "%02x")` went through Foundation's formatter and was a tenth of a Limited
/// Login's CPU (docs/performance.md).
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as lowercase hex.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 15)])
        }
        return String(decoding: output, as: UTF8.self)
    }
}
