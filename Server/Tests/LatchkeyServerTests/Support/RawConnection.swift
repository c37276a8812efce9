import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A bare TCP connection to the server, for clients that misbehave on purpose: partial heads,
/// trickled bodies, connections held open. Its waits block a thread, so they run on Dispatch's,
/// never on Swift's small cooperative pool, which every other test shares. Close it with `close()`
/// (or let it go).
///
/// A class, and its close happens once: a descriptor closed twice closes whatever the process
/// opened under that number meanwhile. A test that closed one of these early and again on its way
/// out closed a socket of the in-process server, and NIO crashed the whole test run when it next
/// touched it (`epoll_ctl`'s EBADF is fatal there).
final class RawConnection: Sendable {
    /// The socket; -1 once closed, so a call after `close()` fails harmlessly with EBADF.
    private let socket: Mutex<Int32>
    private var descriptor: Int32 { socket.withLock { $0 } }

    /// Connects to the server on loopback.
    /// - Parameter source: the client's own address. Linux routes all of 127.0.0.0/8 to `lo`, so
    ///   binding to 127.0.0.2, 127.0.0.3… gives a test several distinct clients.
    init?(port: Int, from source: String = "127.0.0.1") {
        #if canImport(Glibc)
        let socketType = Int32(SOCK_STREAM.rawValue)
        #else
        let socketType = SOCK_STREAM
        #endif
        let descriptor = Glibc.socket(AF_INET, socketType, 0)
        guard descriptor >= 0 else { return nil }
        func ipv4(_ host: String, port: Int) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr(host)
            return address
        }
        var local = ipv4(source, port: 0)
        var remote = ipv4("127.0.0.1", port: port)
        let connected = withUnsafePointer(to: &local) { local in
            withUnsafePointer(to: &remote) { remote in
                local.withMemoryRebound(to: sockaddr.self, capacity: 1) { local in
                    remote.withMemoryRebound(to: sockaddr.self, capacity: 1) { remote in
                        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
                        return bind(descriptor, local, size) == 0 ? connect(descriptor, remote, size) : -1
                    }
                }
            }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            return nil
        }
        self.socket = Mutex(descriptor)
    }

    deinit { close() }

    /// Closes the socket; a second call does nothing.
    func close() {
        socket.withLock { descriptor in
            guard descriptor >= 0 else { return }
            _ = Glibc.close(descriptor)
            descriptor = -1
        }
    }

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

    /// Ends the client's side (a TCP half-close): the server reads the end of input, and may still
    /// answer.
    func endWriting() { _ = shutdown(descriptor, Int32(SHUT_WR)) }

    /// Waits up to `milliseconds` for the server to close the connection; `true` when it did.
    /// Anything it sent first is read and dropped.
    func closedByServer(within milliseconds: Int32) async -> Bool {
        await Self.offPool { self.waitForClose(milliseconds) }
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

    /// Everything the server sends until it closes the connection, waiting up to `milliseconds`
    /// in all; what came by then when it does not close.
    func received(within milliseconds: Int) async -> String {
        let descriptor = descriptor
        return await Self.offPool {
            let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 8192)
            while case let now = DispatchTime.now().uptimeNanoseconds, now < deadline {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, Int32((deadline - now) / 1_000_000) + 1) > 0 else { break }
                let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if count > 0 {
                    bytes += buffer.prefix(count)
                } else if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                    break
                }
            }
            return String(decoding: bytes, as: UTF8.self)
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

    /// A serial queue of its own for each blocking wait: not Swift's cooperative pool, and not
    /// Dispatch's global queue either, whose threads on Linux are as few as the cores (raw-socket
    /// waits of many seconds there queued every other test's Dispatch work behind them, and the
    /// PostgreSQL pass failed on time limits). A serial queue is overcommit (it gets a thread even
    /// when the pool is busy), and Dispatch's threads block signals, so a child's SIGCHLD never
    /// interrupts the wait (a plain thread's `read` was interrupted, and Foundation traps on EINTR).
    private static func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue(label: "latchkey.test.raw-connection").async { continuation.resume(returning: body()) }
        }
    }
}
