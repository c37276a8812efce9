import Foundation
import Testing

@testable import LatchkeyServer

#if canImport(Glibc)
import Glibc
#endif

/// `NAME_FILE` read from an inherited descriptor or a file: an empty pipe and an oversized file
/// are refused by name, never read as a value. Milliseconds.
@Suite("Setting files")
struct SettingFileTests {
    /// A pipe holding `contents`, its writing end closed: the reading end's descriptor.
    static func pipe(_ contents: String) throws -> Int32 {
        var ends: [Int32] = [0, 0]
        try #require(Glibc.pipe(&ends) == 0)
        let written = contents.utf8.withContiguousStorageIfAvailable { write(ends[1], $0.baseAddress, $0.count) }
        #expect(written == contents.utf8.count)
        close(ends[1])
        return ends[0]
    }

    @Test("an inherited descriptor is read to its end; an empty one is a failed command before it")
    func inherited() throws {
        let full = try Self.pipe("the-secret\n")
        defer { close(full) }
        #expect(try SettingFile.read("/dev/fd/\(full)", name: "LATCHKEY_X") == "the-secret\n")
        let empty = try Self.pipe("")
        defer { close(empty) }
        #expect {
            try SettingFile.read("/dev/fd/\(empty)", name: "LATCHKEY_X")
        } throws: { error in
            "\(error)".contains("LATCHKEY_X_FILE") && "\(error)".contains("nothing came through")
        }
    }

    @Test("a file over 1 MiB is refused, not cut")
    func oversized() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("setting-\(UUID())")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(repeating: 0x61, count: SettingFile.limit + 1).write(to: url)
        #expect {
            try SettingFile.read(url.path, name: "LATCHKEY_X")
        } throws: { error in
            "\(error)".contains("longer than 1 MiB")
        }
        try Data(repeating: 0x61, count: SettingFile.limit).write(to: url)
        #expect(try SettingFile.read(url.path, name: "LATCHKEY_X").utf8.count == SettingFile.limit)
    }
}
