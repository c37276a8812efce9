import LatchkeyAPI
import LatchkeyShared

/// The dialog's HTML: a plain, accessible page that a person (or a headless browser) can use.
enum DialogPage {
    private static let style = """
        body{font-family:Helvetica,Arial,sans-serif;background:#f0f2f5;margin:0;color:#1c1e21}
        .card{max-width:420px;margin:40px auto;background:#fff;border-radius:8px;box-shadow:0 2px 4px rgba(0,0,0,.1);padding:24px}
        h1{font-size:20px;margin:0 0 4px}p.sub{color:#606770;margin:0 0 16px}.banner{background:#1877f2;color:#fff;padding:12px 24px;font-weight:bold}
        fieldset{border:1px solid #dddfe2;border-radius:6px;margin:0 0 16px;padding:8px 12px}legend{font-weight:bold;font-size:14px}
        label{display:block;padding:6px 0}.error{color:#be4b49;font-weight:bold}
        button{font-size:16px;padding:10px 18px;border-radius:6px;border:0;cursor:pointer}
        .primary{background:#1877f2;color:#fff}.secondary{background:#e4e6eb;color:#050505;margin-left:8px}
        """

    static func error(title: String, message: String) -> String {
        page(
            title: title,
            body: "<div class=\"card\"><h1>\(HTML.escape(title))</h1><p>\(HTML.escape(message))</p></div>")
    }

    static func login(_ dialog: DialogRequest, people: [Person], error: String?) -> String {
        var body = "<div class=\"card\"><h1>Log in to \(HTML.escape(dialog.app.name))</h1>"
        body += "<p class=\"sub\">Facebook emulator: choose a test account and what to share.</p>"
        if let error { body += "<p class=\"error\" role=\"alert\">\(HTML.escape(error))</p>" }
        body += "<form method=\"post\" action=\"\"><input type=\"hidden\" name=\"emulator_form\" value=\"1\">"
        for (name, value) in dialog.parameters.sorted(by: { $0.key < $1.key }) {
            body += "<input type=\"hidden\" name=\"\(HTML.escape(name))\" value=\"\(HTML.escape(value))\">"
        }
        body += "<fieldset><legend>Account</legend>"
        for (index, person) in people.enumerated() {
            let checked = index == 0 ? " checked" : ""
            let detail = person.email.map { " &lt;\(HTML.escape($0))&gt;" } ?? " (no email)"
            body +=
                "<label><input type=\"radio\" name=\"emulator_user\" value=\"\(HTML.escape(person.key))\"\(checked)> "
                + "\(HTML.escape(person.name))\(detail)</label>"
        }
        body += "</fieldset><fieldset><legend>\(HTML.escape(dialog.app.name)) will receive</legend>"
        for permission in dialog.permissions {
            let locked = permission == "public_profile" ? " checked disabled" : " checked"
            body +=
                "<label><input type=\"checkbox\" name=\"grant_\(HTML.escape(permission))\"\(locked)> "
                + "\(HTML.escape(permission))</label>"
        }
        body += "</fieldset>"
        body +=
            "<button class=\"primary\" type=\"submit\" name=\"emulator_action\" value=\"continue\">Continue</button>"
        body +=
            "<button class=\"secondary\" type=\"submit\" name=\"emulator_action\" value=\"cancel\">Cancel</button>"
        body += "</form></div>"
        return page(title: "Log in with Facebook", body: body)
    }

    private static func page(title: String, body: String) -> String {
        """
        <!DOCTYPE html><html lang="en"><head><meta charset="utf-8">\
        <meta name="viewport" content="width=device-width, initial-scale=1">\
        <title>\(HTML.escape(title))</title><style>\(style)</style></head>\
        <body><div class="banner">facebook (emulator)</div>\(body)</body></html>
        """
    }
}
