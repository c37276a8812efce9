import HTTPTypes
import Hummingbird
import LatchkeyShared

/// The page Easy Login shows between Facebook and the app when the person has a second factor:
/// a code from their authenticator (or a recovery code) finishes the sign-in, and only then does
/// the app get its code. Plain HTML forms posting to `POST /v1/oauth/factor`, so it works without
/// JavaScript; served with `HTMLPage`'s headers (never cached or framed, loading nothing).
enum FactorCodePage {
    /// Where the forms post.
    static let path = "/v1/oauth/factor"

    /// The page for `challenge`, saying what went wrong with the last code when `error` is set.
    static func response(challenge: String, error: String?, status: HTTPResponse.Status = .ok) -> Response {
        let hidden = "<input type=\"hidden\" name=\"challenge\" value=\"\(HTML.escape(challenge))\">"
        let problem = error.map { "<p class=\"error\" role=\"alert\">\(HTML.escape($0))</p>" } ?? ""
        let html = """
            <!DOCTYPE html><html lang="en"><head><meta charset="utf-8">\
            <meta name="viewport" content="width=device-width, initial-scale=1"><title>Two-step verification</title>\
            <style>body{font-family:system-ui,sans-serif;max-width:24rem;margin:3rem auto;padding:0 1rem;color:#222}\
            h1{font-size:1.3rem}label{display:block;margin:1rem 0 .3rem}\
            input[type=text]{font-size:1.4rem;letter-spacing:.2rem;width:100%;box-sizing:border-box;padding:.4rem}\
            button{margin-top:.8rem;font-size:1rem;padding:.5rem 1.2rem}.error{color:#a00}\
            details{margin-top:2rem}</style></head><body>\
            <h1>Two-step verification</h1>\(problem)\
            <form method="post" action="\(path)">\(hidden)\
            <label for="code">Enter the 6-digit code from your authenticator app</label>\
            <input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" \
            pattern="[0-9 ]{6,7}" maxlength="7" required autofocus>\
            <button type="submit">Verify</button></form>\
            <details><summary>Lost your authenticator? Use a recovery code</summary>\
            <form method="post" action="\(path)">\(hidden)\
            <label for="recovery_code">Recovery code</label>\
            <input type="text" id="recovery_code" name="recovery_code" autocomplete="off" maxlength="24" required>\
            <button type="submit">Use recovery code</button></form></details>\
            </body></html>
            """
        return HTMLPage.response(status: status, html: html)
    }
}
