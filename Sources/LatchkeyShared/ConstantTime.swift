/// Comparisons of secrets whose running time does not depend on where the inputs differ, so
/// timing cannot reveal how much of a guessed secret, proof or nonce was right.
public enum ConstantTime {
    /// Whether two strings have the same UTF-8 bytes, in time independent of their content.
    public static func equals(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            difference |= (index < left.count ? left[index] : 0) ^ (index < right.count ? right[index] : 0)
        }
        return difference == 0
    }
}
