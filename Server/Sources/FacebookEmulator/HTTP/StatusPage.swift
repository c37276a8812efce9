import AsyncHTTPClient
import LatchkeyAPI
import NIOCore
import NIOHTTP1

/// Opens a data-deletion status page as a check of what the person would see: one GET, no
/// redirect followed (a redirect is reported with its `Location`, since where it leads is the
/// backend's business), within a deadline, keeping only the start of the body. Facebook itself
/// never fetches the page; the emulator does so a scenario can tell whether the link works.
enum StatusPage {
    /// The most of the body kept: enough to recognise the page, never a download.
    static let bodyLimit = 4096

    /// The report's `status_page` member: `status`, `content_type`, `location`, `body` (its first
    /// `bodyLimit` bytes) and `truncated`, or `error` when nothing came back.
    static func fetch(_ url: String, timeoutMilliseconds: Int) async -> JSONValue {
        do {
            // A client of its own: the shared one follows redirects.
            return try await HTTPClient.withHTTPClient(configuration: .init(redirectConfiguration: .disallow)) {
                client -> JSONValue in
                var request = HTTPClientRequest(url: url)
                request.headers.add(name: "Accept", value: "text/html")
                let response = try await client.execute(
                    request, timeout: .milliseconds(Int64(timeoutMilliseconds)))
                var kept = ByteBuffer()
                var truncated = false
                for try await var chunk in response.body {
                    let room = bodyLimit - kept.readableBytes
                    if chunk.readableBytes > room {
                        truncated = true
                        if let slice = chunk.readSlice(length: room) { kept.writeImmutableBuffer(slice) }
                        // Leaving the loop drops the rest of the body (the request is cancelled).
                        break
                    }
                    kept.writeBuffer(&chunk)
                }
                return [
                    "status": .int(Int(response.status.code)),
                    "content_type": response.headers.first(name: "content-type").map(JSONValue.string) ?? .null,
                    "location": response.headers.first(name: "location").map(JSONValue.string) ?? .null,
                    "body": .string(String(decoding: kept.readableBytesView, as: UTF8.self)),
                    "truncated": .bool(truncated),
                ]
            }
        } catch {
            return ["error": .string("could not fetch the status page: \(error)")]
        }
    }
}
