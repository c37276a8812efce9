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
        // Parsed into raw buffers: `in_addr()` and `in6_addr()` do not resolve reliably with
        // member-import visibility (NIO's C shims declare them too).
        func parse(_ family: Int32, _ count: Int) -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: count)
            let parsed = buffer.withUnsafeMutableBytes { inet_pton(family, literal, $0.baseAddress) }
            return parsed == 1 ? buffer : nil
        }
        guard let raw = parse(AF_INET, 4) ?? parse(AF_INET6, 16) else { return nil }
        self.init(raw: raw)
    }

    /// An address from its 4 or 16 bytes in network order.
    init(raw: [UInt8]) {
        // An IPv4-mapped address (::ffff:a.b.c.d) is the IPv4 client it wraps.
        bytes = raw.count == 16 && raw.prefix(12) == Self.mappedPrefix ? Array(raw.suffix(4)) : raw
    }

    /// The first 12 bytes of an IPv4-mapped IPv6 address (RFC 4291 §2.5.5.2).
    private static let mappedPrefix: ArraySlice<UInt8> = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]

    /// The limiter key: the IPv4 address, or the IPv6 /64.
    var key: String {
        bytes.count == 4
            ? "v4:" + bytes.map(String.init).joined(separator: ".")
            : "v6:" + bytes.prefix(8).map { String($0, radix: 16) }.joined(separator: ":") + "::/64"
    }

    /// The address as text (`203.0.113.7`, `2001:db8::1`), as the audit log and the sessions list
    /// keep it.
    var text: String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        // RFC 5952: lowercase hex groups, the longest run of two or more zero groups as "::".
        let groups = stride(from: 0, to: 16, by: 2).map { Int(bytes[$0]) << 8 | Int(bytes[$0 + 1]) }
        var best = (start: -1, length: 0)
        var run = (start: -1, length: 0)
        for (index, group) in groups.enumerated() {
            if group == 0 {
                run = run.start < 0 ? (index, 1) : (run.start, run.length + 1)
                if run.length > best.length { best = run }
            } else {
                run = (-1, 0)
            }
        }
        let hex = groups.map { String($0, radix: 16) }
        guard best.length >= 2 else { return hex.joined(separator: ":") }
        let head = hex[..<best.start].joined(separator: ":")
        let tail = hex[(best.start + best.length)...].joined(separator: ":")
        return head + "::" + tail
    }

    /// The network a person is shown for a session or an event: the IPv4 /24 or the IPv6 /48
    /// (`203.0.113.0/24`, `2001:db8:1::/48`), which names a provider and a region, not a home.
    var masked: String {
        let kept = bytes.count == 4 ? 3 : 6
        let network = ClientAddress(raw: Array(bytes.prefix(kept)) + Array(repeating: 0, count: bytes.count - kept))
        return network.text + (bytes.count == 4 ? "/24" : "/48")
    }

    /// The wider network an IPv6 client's /64 sits in, its /48 (the usual allocation to one site,
    /// RFC 6177), for an aggregate limit: whoever has a routed /48 has 65,536 /64 keys. `nil` for
    /// IPv4, whose single address is already the scarce unit.
    var networkKey: String? {
        guard bytes.count == 16 else { return nil }
        return "v6:" + bytes.prefix(6).map { String($0, radix: 16) }.joined(separator: ":") + "::/48"
    }

    /// The header a trusted proxy writes the client's address into (`LATCHKEY_FORWARDED_HEADER`).
    /// Only that one is read: proxies append to their own header and pass the other through as
    /// the client sent it, so reading both would let a client pick its own address.
    enum ForwardedHeader: String, Sendable, CaseIterable {
        case xForwardedFor = "x-forwarded-for"
        case forwarded
    }

    /// The client of a request that reached us from `peer`.
    static func of(
        peer: String?, headers: HTTPFields, trusted: [Network], header: ForwardedHeader = .xForwardedFor
    ) -> ClientAddress? {
        guard let peer, let address = ClientAddress(peer) else { return nil }
        guard !trusted.isEmpty, trusted.contains(where: { $0.contains(address) }) else { return address }
        let hops = forwardedHops(headers, header)
        for hop in hops.reversed() {
            guard let hopAddress = ClientAddress(hop) else { return address }  // garbage: trust no further
            if !trusted.contains(where: { $0.contains(hopAddress) }) { return hopAddress }
        }
        return hops.first.flatMap { ClientAddress($0) } ?? address
    }

    /// The `for=` values of `Forwarded`, or the entries of `X-Forwarded-For`, left to right.
    private static func forwardedHops(_ headers: HTTPFields, _ header: ForwardedHeader) -> [String] {
        if header == .forwarded {
            return headers[values: HTTPField.Name("Forwarded")!].flatMap { $0.split(separator: ",") }.compactMap {
                element in
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
            guard let first = parts.first, let base = ClientAddress(first) else { return nil }
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
