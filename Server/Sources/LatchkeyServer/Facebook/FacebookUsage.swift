import Foundation
import LatchkeyAPI

/// How much of its Graph allowance an app has used, as Facebook reports it in response headers
/// (facebook-protocol.md §6.2; developers.facebook.com/docs/graph-api/overview/rate-limiting):
/// `X-App-Usage: {"call_count":N,"total_cputime":N,"total_time":N}`, whole percentages of the
/// platform limit that may pass 100, and, for business-use-case limits,
/// `X-Business-Use-Case-Usage: {"<business id>":[{"type","call_count","total_cputime","total_time",
/// "estimated_time_to_regain_access"}]}`. Facebook sends them "once enough calls have been made",
/// so an answer without them says nothing new.
struct FacebookUsage: Sendable, Equatable {
    /// `X-App-Usage`'s three figures, when that header came.
    var callCount: Int?
    var totalCPUTime: Int?
    var totalTime: Int?
    /// The highest figure in `X-Business-Use-Case-Usage`, when that header came.
    var businessUseCase: Int?

    /// What `/ready` shows.
    var json: JSONValue {
        var members: [String: JSONValue] = [:]
        if let callCount { members["call_count"] = .int(callCount) }
        if let totalCPUTime { members["total_cputime"] = .int(totalCPUTime) }
        if let totalTime { members["total_time"] = .int(totalTime) }
        if let businessUseCase { members["business_use_case"] = .int(businessUseCase) }
        return .object(members)
    }

    /// The usage in an answer's headers, or `nil` when it has neither header or neither parses.
    /// Facebook's headers are read defensively: at most 8 KiB each, numbers clamped, anything
    /// malformed ignored rather than failing the call it came with.
    init?(appUsage: String?, businessUseCase: String?) {
        if let object = Self.object(appUsage) {
            callCount = Self.percent(object["call_count"])
            totalCPUTime = Self.percent(object["total_cputime"])
            totalTime = Self.percent(object["total_time"])
        }
        if let object = Self.object(businessUseCase) {
            var highest: Int?
            for entries in object.values.prefix(100) {
                for entry in (entries.arrayValue ?? []).prefix(100) {
                    for name in ["call_count", "total_cputime", "total_time"] {
                        if let value = Self.percent(entry[name]) { highest = max(highest ?? 0, value) }
                    }
                }
            }
            self.businessUseCase = highest
        }
        guard callCount != nil || totalCPUTime != nil || totalTime != nil || self.businessUseCase != nil else {
            return nil
        }
    }

    /// Usage made of these figures.
    init(callCount: Int? = nil, totalCPUTime: Int? = nil, totalTime: Int? = nil, businessUseCase: Int? = nil) {
        self.callCount = callCount
        self.totalCPUTime = totalCPUTime
        self.totalTime = totalTime
        self.businessUseCase = businessUseCase
    }

    private static func object(_ header: String?) -> [String: JSONValue]? {
        guard let header, header.utf8.count <= 8192 else { return nil }
        return (try? JSONValue.decode(Data(header.utf8)))?.objectValue
    }

    private static func percent(_ value: JSONValue?) -> Int? {
        guard let value else { return nil }
        let number: Double
        if let integer = value.intValue {
            number = Double(integer)
        } else if case .double(let double) = value, double.isFinite {
            number = double
        } else if let text = value.stringValue, let parsed = Double(text), parsed.isFinite {
            number = parsed
        } else {
            return nil
        }
        return Int(min(max(number, 0), 100_000).rounded(.up))
    }
}
