import Foundation
import LatchkeyAPI

/// A backend's answer to a data-deletion callback, checked as Facebook requires it: a 2xx JSON
/// object with a non-empty `url` (where the person follows their request, so an absolute http(s)
/// URL) and a non-empty `confirmation_code` (§9.3). Each unmet requirement is a problem, in words.
struct DeletionReply: Sendable {
    /// The status page URL the backend answered, when it answered one.
    let statusURL: String?
    /// The confirmation code the backend answered, when it answered one.
    let confirmationCode: String?
    /// What keeps the answer from being one Facebook accepts; empty when it is.
    let problems: [String]

    /// Whether Facebook would accept the answer.
    var isValid: Bool { problems.isEmpty }

    init(status: Int, body: String) {
        var problems: [String] = []
        if !(200..<300).contains(status) { problems.append("status \(status) is not 2xx") }
        let reply = try? JSONValue.decode(Data(body.utf8))
        if reply?.objectValue == nil { problems.append("the body is not a JSON object") }
        let url = reply?["url"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        let code = reply?["confirmation_code"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        if reply?.objectValue != nil {
            if url == nil { problems.append("no 'url'") }
            if code == nil { problems.append("no 'confirmation_code'") }
        }
        if let url, !WebURL.isValid(url) { problems.append("'url' is not an absolute http(s) URL") }
        self.statusURL = url
        self.confirmationCode = code
        self.problems = problems
    }
}
