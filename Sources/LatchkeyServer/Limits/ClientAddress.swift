import Foundation
import HTTPTypes

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The client an abuse limit counts: its IP address, IPv6 grouped by /64 (one home or phone
/// usually owns a whole /64, so per-address limits would be free to dodge).
///
/// Behind a reverse proxy every request comes from the proxy; with `LATCHKEY_TRUSTED_PROXIES`
/// set, a request from one of those networks is attributed to the address the proxy reports
/// (`Forwarded: for=…`, RFC 7239, else `X-Forwarded-For`), read from the right: the last hop
/// that is not itself a trusted proxy. Without the setting the headers are ignored, since any
/// client can send them.
struct ClientAddress: Sendable, Equatable {
    /// 4 or 16 bytes.
    let bytes: [UInt8]

    /// Parses `1.2.3.4` or an IPv6 literal (brackets and a port are stripped).
    init?(_ text: some StringProtocol) {
        var literal = String(text).trimmingCharacters(in: .whitespaces)
        if literal.hasPrefix("\""), literal.hasSuffix("\""), literal.count >= 2 {
            literal = String(literal.dropFirst().dropLast())
        }
        if literal.hasPrefix("["), let close = literal.firstIndex(of: "]") {
            literal = String(literal[literal.index(after: literal.startIndex)..<close])
        } else if literal.filter({ $0 == ":" }).count == 1, let colon = literal.firstIndex(of: ":") {
            literal = String(literal[..<colon])  // IPv4 with a port
        }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, literal, &v6) == 1 {
            let all = withUnsafeBytes(of: &v6) { Array($0) }
            // An IPv4-mapped address (::ffff:a.b.c.d) is the IPv4 client it wraps.
            bytes = all.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] ? Array(all.suffix(4)) : all
        } else {
            return nil
        }
    }

    /// The limiter key: the IPv4 address, or the IPv6 /64.
    var key: String {
        bytes.count == 4
            ? "v4:" + bytes.map(String.init).joined(separator: ".")
            : "v6:" + bytes.prefix(8).map { String($0, radix: 16) }.joined(separator: ":") + "::/64"
    }

    /// The client of a request that reached us from `peer`.
    static func of(peer: String?, headers: HTTPFields, trusted: [Network]) -> ClientAddress? {
        guard let peer, let address = ClientAddress(peer) else { return nil }
        guard !trusted.isEmpty, trusted.contains(where: { $0.contains(address) }) else { return address }
        let hops = forwardedHops(headers)
        for hop in hops.reversed() {
            guard let hopAddress = ClientAddress(hop) else { return address }  // garbage: trust no further
            if !trusted.contains(where: { $0.contains(hopAddress) }) { return hopAddress }
        }
        return hops.first.flatMap { ClientAddress($0) } ?? address
    }

    /// The `for=` values of `Forwarded`, else the entries of `X-Forwarded-For`, left to right.
    private static func forwardedHops(_ headers: HTTPFields) -> [String] {
        let forwarded = headers[values: HTTPField.Name("Forwarded")!]
        if !forwarded.isEmpty {
            return forwarded.flatMap { $0.split(separator: ",") }.compactMap { element in
                element.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                    .first { $0.lowercased().hasPrefix("for=") }
                    .map { String($0.dropFirst(4)) }
            }
        }
        return headers[values: HTTPField.Name("X-Forwarded-For")!].flatMap { $0.split(separator: ",") }.map {
            $0.trimmingCharacters(in: .whitespaces)
        }
    }

    /// A network in CIDR notation (`10.0.0.0/8`, `fd00::/8`, or one address).
    struct Network: Sendable, Equatable {
        let base: ClientAddress
        let prefix: Int

        init?(_ text: String) {
            let parts = text.split(separator: "/", maxSplits: 1)
            guard let base = ClientAddress(parts[0]) else { return nil }
            let bits = base.bytes.count * 8
            let prefix = parts.count == 2 ? Int(parts[1]) : bits
            guard let prefix, (0...bits).contains(prefix) else { return nil }
            self.base = base
            self.prefix = prefix
        }

        func contains(_ address: ClientAddress) -> Bool {
            guard address.bytes.count == base.bytes.count else { return false }
            var remaining = prefix
            for (left, right) in zip(address.bytes, base.bytes) where remaining > 0 {
                let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
                if left & mask != right & mask { return false }
                remaining -= 8
            }
            return true
        }
    }
}
