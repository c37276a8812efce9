import Foundation

/// The low-S rule for raw P-256 ECDSA signatures (`r || s`, 32 bytes each, big-endian).
///
/// ECDSA is malleable: when `(r, s)` verifies, so does `(r, n − s)`, and swift-crypto (BoringSSL)
/// accepts both. A token would then have two valid encodings, a second string for the same claims,
/// which defeats anything keyed by the token text (the verified-token cache, a revocation list, a
/// replay check). Requiring `s ≤ n/2`, as Bitcoin's BIP 62 and libsecp256k1 do, leaves one.
public enum P256LowS {
    /// The order n of P-256's base point (FIPS 186-4 D.1.2.3; SEC 2 §2.4.2), big-endian.
    public static let order: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]
    /// ⌊n / 2⌋, the largest S allowed: n shifted right by one bit, each byte taking the bit the
    /// byte before it dropped.
    public static let halfOrder: [UInt8] = order.indices.map { index in
        order[index] >> 1 | (index > 0 ? order[index - 1] << 7 : 0)
    }

    /// Whether `signature` is 64 bytes and its S is at most n/2.
    public static func isLowS(_ signature: Data) -> Bool {
        guard signature.count == 64 else { return false }
        return !isGreater(Array(signature.suffix(32)), than: halfOrder)
    }

    /// `signature` with S replaced by n − S when S is above n/2 (the same signature, its low-S form).
    /// Anything not 64 bytes long is returned unchanged.
    public static func normalized(_ signature: Data) -> Data {
        guard signature.count == 64 else { return signature }
        let s = Array(signature.suffix(32))
        guard isGreater(s, than: halfOrder) else { return signature }
        return Data(Array(signature.prefix(32)) + subtract(s, from: order))
    }

    /// `n − s` for a 32-byte `s` (both big-endian); callers pass `s < n`, so nothing underflows.
    public static func subtract(_ s: [UInt8], from n: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        // Schoolbook subtraction from the least significant byte, carrying the borrow leftwards.
        for index in stride(from: 31, through: 0, by: -1) {
            var difference = Int(n[index]) - Int(s[index]) - borrow
            borrow = difference < 0 ? 1 : 0
            if difference < 0 { difference += 256 }
            result[index] = UInt8(difference)
        }
        return result
    }

    /// Whether `a > b` for two 32-byte big-endian numbers: the first differing byte decides.
    /// Not constant-time, and need not be: signatures and the order are public.
    public static func isGreater(_ a: [UInt8], than b: [UInt8]) -> Bool {
        for (left, right) in zip(a, b) where left != right { return left > right }
        return false
    }
}
