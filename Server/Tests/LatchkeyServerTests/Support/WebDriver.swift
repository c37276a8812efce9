import AsyncHTTPClient
import Foundation
import LatchkeyAPI
import NIOCore
import NIOHTTP1
import Synchronization

/// A real headless Chromium driven over the W3C WebDriver protocol (plain HTTP + JSON to Debian's
/// chromedriver), so a test can click through the emulator's dialog as a person would.
final class ChromeDriver: Sendable {
    /// Why browser tests cannot run here, or `nil` when they can.
    static let unavailableReason: String? = {
        if chromedriver == nil {
            return "chromedriver is not installed (scripts/test installs Debian's chromium-driver)"
        }
        if chromium == nil { return "chromium is not installed (scripts/test installs Debian's chromium)" }
        return nil
    }()

    static let chromedriver = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static let chromium = ["/usr/lib/chromium/chromium", "/usr/bin/chromium"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    private let process: Process
    let base: String

    private init(process: Process, port: Int) {
        self.process = process
        self.base = "http://127.0.0.1:\(port)"
    }

    /// Starts chromedriver on a port it picks, read from its banner.
    ///
    /// Up to three attempts, when it could not bind the port it picked ("IPv4 port
    /// not available. Exiting..."): seen once in a few dozen passes, while the other tests opened
    /// ports at the same moment.
    static func start() async throws -> ChromeDriver {
        var attempt = 1
        while true {
            do {
                return try await startOnce()
            } catch let error as WebDriverError where attempt < 3 && error.message.contains("port not available") {
                attempt += 1
            }
        }
    }

    private static func startOnce() async throws -> ChromeDriver {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try require(chromedriver, "chromedriver"))
        process.arguments = ["--port=0"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let (lines, continuation) = AsyncStream<String>.makeStream()
        let reader = output.fileHandleForReading
        try await TestLock.fileDescriptors.withLock { try process.run() }
        // Blocking reads on a serial queue of their own, off the test's cooperative pool and off
        // Dispatch's global queue (as few threads as cores on Linux: a reader held there for the
        // driver's life stalled other tests' Dispatch work). See RawConnection.offPool.
        DispatchQueue(label: "latchkey.test.webdriver-output").async {
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                continuation.yield(String(decoding: data, as: UTF8.self))
            }
            continuation.finish()
        }
        var banner = ""
        for await chunk in lines {
            banner += chunk
            if let range = banner.range(of: #"on port (\d+)\."#, options: .regularExpression) {
                let digits = banner[range].filter(\.isNumber)
                if let port = Int(digits) { return ChromeDriver(process: process, port: port) }
            }
        }
        process.terminate()
        throw WebDriverError(message: "chromedriver did not start: \(banner)")
    }

    /// chromedriver ignores SIGTERM, so it gets SIGKILL (its browsers are closed with their sessions).
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// A new headless browser window of `width` × `height` pixels.
    func session(width: Int = 720, height: Int = 860) async throws -> WebDriverSession {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("lk-chrome-\(UUID().uuidString)")
        let capabilities: JSONValue = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": [
                        "binary": .string(try Self.require(Self.chromium, "chromium")),
                        "args": [
                            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                            .string("--window-size=\(width),\(height)"), "--no-first-run",
                            .string("--user-data-dir=\(profile.path)"),
                        ],
                    ],
                ]
            ]
        ]
        let answer = try await WebDriverSession.call(.POST, base + "/session", capabilities)
        let id = try Self.require(answer["sessionId"]?.stringValue, "session id in \(answer)")
        return WebDriverSession(url: base + "/session/" + id)
    }

    private static func require<T>(_ value: T?, _ what: String) throws -> T {
        guard let value else { throw WebDriverError(message: "missing \(what)") }
        return value
    }
}

/// One browser window.
struct WebDriverSession: Sendable {
    let url: String

    static let client = HTTPClient(eventLoopGroupProvider: .singleton)

    /// Navigates and waits for the page to load (WebDriver's default page-load strategy).
    func navigate(to target: URL) async throws {
        _ = try await Self.call(.POST, url + "/url", ["url": .string(target.absoluteString)])
    }

    /// The first element matching a CSS selector.
    func element(_ css: String) async throws -> String {
        let answer = try await Self.call(.POST, url + "/element", ["using": "css selector", "value": .string(css)])
        guard let id = answer["element-6066-11e4-a52e-4f735466cecf"]?.stringValue else {
            throw WebDriverError(message: "no element \(css): \(answer)")
        }
        return id
    }

    func click(_ css: String) async throws {
        _ = try await Self.call(.POST, url + "/element/\(try await element(css))/click", [:])
    }

    /// Types `text` into the first element matching a CSS selector, as a person's keys would.
    func type(_ css: String, _ text: String) async throws {
        _ = try await Self.call(.POST, url + "/element/\(try await element(css))/value", ["text": .string(text)])
    }

    func source() async throws -> String { try await Self.call(.GET, url + "/source", nil).stringValue ?? "" }

    func currentURL() async throws -> String { try await Self.call(.GET, url + "/url", nil).stringValue ?? "" }

    /// A PNG of the window.
    func screenshot() async throws -> Data {
        let base64 = try await Self.call(.GET, url + "/screenshot", nil).stringValue ?? ""
        guard let data = Data(base64Encoded: base64) else { throw WebDriverError(message: "screenshot not base64") }
        return data
    }

    func close() async { _ = try? await Self.call(.DELETE, url, nil) }

    /// One WebDriver command; answers are `{"value": …}`, errors carry `value.error`.
    static func call(_ method: HTTPMethod, _ url: String, _ body: JSONValue?) async throws -> JSONValue {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body.encoded()))
        }
        let response = try await client.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 32 << 20)
        let answer = try JSONValue.decode(Data(bytes.readableBytesView))
        if let error = answer["value"]?["error"]?.stringValue {
            throw WebDriverError(message: "\(error): \(answer["value"]?["message"]?.stringValue ?? "")")
        }
        return answer["value"] ?? .null
    }
}

struct WebDriverError: Error, CustomStringConvertible {
    let message: String
    var description: String { "WebDriver: \(message)" }
}
