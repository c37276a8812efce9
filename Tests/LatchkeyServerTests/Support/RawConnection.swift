import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A bare TCP connection to the server, for clients that misbehave on purpose: partial heads,
/// trickled bodies, connections held open. Its waits block a thread, so they run on Dispatch's,
/// never on Swift's small cooperative pool, which every other test shares. Close it with `close()`.
struct RawConnection: Sendable {
    private let descriptor: Int32

    init?(port: Int) {
        #if canImport(Glibc)
        let socketType = Int32(SOCK_STREAM.rawValue)
        #else
        let socketType = SOCK_STREAM
        #endif
        let descriptor = socket(AF_INET, socketType, 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    func close() { _ = Glibc.close(descriptor) }

    /// Sends `text`; `false` once the server has closed the connection.
    @discardableResult
    func write(_ text: String) -> Bool {
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, flags) } >= 0
    }

    /// Waits up to `milliseconds` for the server to close the connection; `true` when it did.
    /// Anything it sent first is read and dropped.
    func closedByServer(within milliseconds: Int32) async -> Bool {
        await Self.offPool { waitForClose(milliseconds) }
    }

    /// The server's first answer bytes, waiting up to `milliseconds`; `nil` when none came.
    func response(within milliseconds: Int32) async -> String? {
        let descriptor = descriptor
        return await Self.offPool {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, milliseconds) > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 8192)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : nil
        }
    }

    private func waitForClose(_ milliseconds: Int32) -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, milliseconds) > 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        if count == 0 { return true }
        if count < 0 { return errno != EAGAIN && errno != EWOULDBLOCK }
        return waitForClose(milliseconds)
    }

    private static func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: body()) }
        }
    }
}
