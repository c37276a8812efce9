import Foundation
import LatchkeyAPI

/// Fields of a control-API call, from a JSON body or, for curl convenience, form/query parameters.
struct ControlInput: Sendable {
    let request: EmulatorRequest

    func string(_ name: String) -> String? {
        if let value = request.json?[name] {
            switch value {
            case .string(let text): return text.isEmpty ? nil : text
            case .int(let number): return String(number)
            case .double(let number): return String(number)
            case .bool(let flag): return String(flag)
            default: return nil
            }
        }
        return request[name]
    }

    /// A setting's new value: `.set` with a non-empty string, `.clear` for an empty string (or
    /// JSON `null`), `nil` when the field is absent (leave the setting as it is). `string(_:)`
    /// cannot tell absent from empty, and here the difference matters.
    func update(_ name: String) throws -> SettingUpdate? {
        if let value = request.json?[name] {
            switch value {
            case .null: return .clear
            case .string(let text): return text.isEmpty ? .clear : .set(text)
            default: throw ControlError(code: "invalid_field", "'\(name)' must be a string (empty or null clears it)")
            }
        }
        return request.parameters[name].map { $0.isEmpty ? .clear : .set($0) }
    }

    func requiredString(_ name: String) throws -> String {
        guard let value = string(name) else { throw ControlError.missing(name) }
        return value
    }

    /// An integer within `range` (every numeric control is bounded, so no later date arithmetic can overflow).
    func int(_ name: String, in range: ClosedRange<Int> = -1_000_000_000...1_000_000_000) throws -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text) ?? Double(text).flatMap({ Int(exactly: $0) }) else {
            throw ControlError(code: "invalid_field", "'\(name)' must be an integer")
        }
        guard range.contains(value) else {
            throw ControlError(
                code: "invalid_field", "'\(name)' must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return value
    }

    func bool(_ name: String) -> Bool? {
        string(name).map { ["true", "1", "yes"].contains($0.lowercased()) }
    }

    /// A list given as a JSON array of strings or a comma-separated string.
    func list(_ name: String) -> [String]? {
        if let array = request.json?[name]?.arrayValue { return array.compactMap(\.stringValue) }
        return string(name).map(Permissions.parse)
    }
}

/// What a control call does to a setting it names (`ControlInput.update(_:)`).
enum SettingUpdate: Equatable, Sendable {
    /// Give the setting this value.
    case set(String)
    /// Remove the setting.
    case clear
}
