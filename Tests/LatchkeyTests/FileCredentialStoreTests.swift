import Foundation
import Latchkey
import LatchkeyAPI
import Testing

@testable import LatchkeyCore

/// The token file is private from the moment it exists, and replaced atomically.
@Suite("File credential store")
struct FileCredentialStoreTests {
    /// A fresh directory path under the temporary directory (not created).
    static func scratch() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-file-\(UUID().uuidString)")
    }

    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) & 0o777
    }

    static let credentials = StoredCredentials(
        accessToken: "access", accessTokenExpiresAt: Date(timeIntervalSince1970: 10), refreshToken: "refresh",
        user: LatchkeyUser(UserBody(id: "u", properties: ["name": "A"], identities: [], createdAt: 1)),
        serverURL: URL(string: "https://auth.example.com")!, refreshedAt: Date(timeIntervalSince1970: 1))

    @Test("the file is born 0600: right after creating and writing it, before anything else runs")
    func bornPrivate() throws {
        let directory = Self.scratch()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("tokens.json").path
        // Under the usual umask (022) a file written the ordinary way is 0644 here.
        try PrivateFile.create(atPath: path, contents: Data("secret".utf8))
        #expect(try Self.mode(path) == 0o600)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("secret".utf8))
    }

    @Test("creating never writes through an existing file or a planted symbolic link")
    func exclusive() throws {
        let directory = Self.scratch()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let existing = directory.appendingPathComponent("existing")
        try Data("keep".utf8).write(to: existing)
        #expect(throws: POSIXError.self) { try PrivateFile.create(atPath: existing.path, contents: Data("x".utf8)) }
        #expect(try Data(contentsOf: existing) == Data("keep".utf8))
        let link = directory.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: existing)
        #expect(throws: POSIXError.self) { try PrivateFile.create(atPath: link.path, contents: Data("x".utf8)) }
        #expect(try Data(contentsOf: existing) == Data("keep".utf8))
    }

    @Test("save and load round-trip; the new directory is 0700 and no temporary file stays behind")
    func roundTrip() async throws {
        let directory = Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("nested").appendingPathComponent("session.json")
        let store = FileCredentialStore(url: url)
        try await store.save(Self.credentials)
        #expect(try await store.load() == Self.credentials)
        #expect(try Self.mode(url.path) == 0o600)
        #expect(try Self.mode(url.deletingLastPathComponent().path) == 0o700)
        var changed = Self.credentials
        changed.refreshToken = "rotated"
        try await store.save(changed)
        #expect(try await store.load() == changed)
        let names = try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)
        #expect(names == ["session.json"])
        try await store.clear()
        #expect(try await store.load() == nil)
    }

    @Test("an existing world-readable file is replaced by a private one")
    func replacesReadable() async throws {
        let directory = Self.scratch()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("session.json")
        try Data("{}".utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        try await FileCredentialStore(url: url).save(Self.credentials)
        #expect(try Self.mode(url.path) == 0o600)
        #expect(try await FileCredentialStore(url: url).load() == Self.credentials)
    }
}
