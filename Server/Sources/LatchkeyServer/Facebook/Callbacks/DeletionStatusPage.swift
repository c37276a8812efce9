import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyShared
import NIOCore

/// The public status page of a data-deletion request (`GET /v1/facebook/data-deletion/{code}`):
/// what the person whose confirmation code it is reads, with no account. It says where the
/// request is and when, and a refusal's reason; never who the person is or what was held.
package enum DeletionStatusPage {
    /// The page for `request`.
    static func response(_ request: StoredDeletionRequest) -> Response {
        let (heading, explanation): (String, String) =
            switch request.status {
            case .received:
                ("Received", "Your request was received and is waiting for review.")
            case .inProgress:
                ("In progress", "Your request is being carried out.")
            case .done where request.heldData == false:
                ("Done", "No data about you was held, so there was nothing to delete.")
            case .done:
                ("Done", "Your data was deleted.")
            case .refused:
                ("Refused", "Your request was refused.")
            }
        var rows = [
            ("Status", heading), ("Confirmation code", request.code), ("Received", stamp(request.createdAt)),
            ("Last change", stamp(request.updatedAt)),
        ]
        if request.status == .refused { rows.append(("Reason", request.reason ?? "")) }
        let table = rows.map { "<tr><th>\(HTML.escape($0.0))</th><td>\(HTML.escape($0.1))</td></tr>" }.joined()
        return page(
            status: .ok, title: "Data deletion request: \(heading)",
            body: "<p class=\"\(request.status.rawValue)\">\(HTML.escape(explanation))</p><table>\(table)</table>")
    }

    /// The page for a code that names no request.
    static func notFound() -> Response {
        page(
            status: .notFound, title: "Data deletion request not found",
            body: "<p>No data deletion request has this confirmation code.</p>")
    }

    /// A time as the page shows it: UTC, to the minute.
    package static func stamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute)) UTC"
    }

    private static func page(status: HTTPResponse.Status, title: String, body: String) -> Response {
        let html = """
            <!DOCTYPE html><html lang="en"><head><meta charset="utf-8">\
            <meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">\
            <title>\(HTML.escape(title))</title>\
            <style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#222}\
            h1{font-size:1.3rem}th{text-align:left;padding-right:1rem;font-weight:600}td,th{padding:.3rem 1rem .3rem 0}\
            .refused{color:#a00}.done{color:#060}</style></head><body><h1>\(HTML.escape(title))</h1>\(body)</body></html>
            """
        return HTMLPage.response(status: status, html: html)
    }
}
