import Foundation
import Testing

/// The SDK's privacy manifest (`Sources/Latchkey/PrivacyInfo.xcprivacy`), held to the sources it
/// describes: it must stay a valid property list that App Store Connect reads, and an SDK file
/// that starts using one of Apple's required-reason APIs must be declared there.
@Suite("Privacy manifest")
struct PrivacyManifestTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func manifest() throws -> [String: Any] {
        let data = try Data(contentsOf: root.appendingPathComponent("Sources/Latchkey/PrivacyInfo.xcprivacy"))
        return try #require(PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
    }

    /// Apple's required-reason API categories and the symbols that put a file in one
    /// (developer.apple.com, "Describing use of required reason API").
    static let requiredReasonAPIs: [String: [String]] = [
        "NSPrivacyAccessedAPICategoryFileTimestamp": [
            "creationDate", "modificationDate", "contentModificationDate", "attributesOfItem", "getattrlist", "fstat(",
            "stat(", "lstat(",
        ],
        "NSPrivacyAccessedAPICategorySystemBootTime": ["systemUptime", "mach_absolute_time"],
        "NSPrivacyAccessedAPICategoryDiskSpace": [
            "volumeAvailableCapacity", "volumeTotalCapacity", "systemFreeSize", "systemSize", "statfs(",
        ],
        "NSPrivacyAccessedAPICategoryActiveKeyboards": ["activeInputModes"],
        "NSPrivacyAccessedAPICategoryUserDefaults": ["UserDefaults", "NSUserDefaults"],
    ]

    @Test("no tracking; the person's id, name and email collected, linked, for the app's functionality")
    func collected() throws {
        let manifest = try Self.manifest()
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyTrackingDomains"] as? [Any])?.isEmpty == true)
        let collected = try #require(manifest["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        #expect(
            Set(collected.compactMap { $0["NSPrivacyCollectedDataType"] as? String }) == [
                "NSPrivacyCollectedDataTypeUserID", "NSPrivacyCollectedDataTypeName",
                "NSPrivacyCollectedDataTypeEmailAddress",
            ])
        for entry in collected {
            #expect(entry["NSPrivacyCollectedDataTypeLinked"] as? Bool == true)
            #expect(entry["NSPrivacyCollectedDataTypeTracking"] as? Bool == false)
            #expect(
                entry["NSPrivacyCollectedDataTypePurposes"] as? [String] == [
                    "NSPrivacyCollectedDataTypePurposeAppFunctionality"
                ])
        }
    }

    @Test("every required-reason API the SDK's sources call is declared (today: none)")
    func requiredReasonAPIs() throws {
        let declared = Set(
            (try Self.manifest()["NSPrivacyAccessedAPITypes"] as? [[String: Any]] ?? []).compactMap {
                $0["NSPrivacyAccessedAPIType"] as? String
            })
        var used: [String: [String]] = [:]
        for module in ["LatchkeyAPI", "LatchkeyShared", "LatchkeyCrypto", "LatchkeyCore", "Latchkey"] {
            let directory = Self.root.appendingPathComponent("Sources/\(module)")
            let files = try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil))
            for case let file as URL in files where file.pathExtension == "swift" {
                let code = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                    .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
                for (category, symbols) in Self.requiredReasonAPIs where symbols.contains(where: code.contains) {
                    used[category, default: []].append("\(module)/\(file.lastPathComponent)")
                }
            }
        }
        for (category, files) in used {
            #expect(declared.contains(category), "\(category) is used by \(files) but not declared")
        }
        #expect(declared.isSubset(of: Set(used.keys)), "declared but unused: \(declared.subtracting(used.keys))")
    }
}
