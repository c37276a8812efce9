import Foundation
import Latchkey
import LatchkeyAPI
import Testing

@testable import LatchkeyCLI

/// Easy Login in a real headless Chromium: `latchkey login`'s flow opens the URL in the browser,
/// the test clicks through the emulator's dialog, and the browser delivers the redirect to the
/// loopback receiver. Debian's chromium and chromium-driver come from `scripts/test`.
@Suite(
    "Headless browser",
    .enabled(
        if: ChromeDriver.unavailableReason == nil || TestEnvironment.isCI, "\(ChromeDriver.unavailableReason ?? "")"))
struct BrowserTests {
    /// Where the screenshot of the dialog goes; `LATCHKEY_UPDATE_SCREENSHOTS=1` refreshes the docs' copy.
    static var screenshotURL: URL { screenshot("easy-login-dialog") }

    /// Where a screenshot named `name` goes: docs/images with `LATCHKEY_UPDATE_SCREENSHOTS=1`, else
    /// a temporary file.
    static func screenshot(_ name: String) -> URL {
        if ProcessInfo.processInfo.environment["LATCHKEY_UPDATE_SCREENSHOTS"] == "1" {
            return Repository.root.appendingPathComponent("docs/images/\(name).png")
        }
        return FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID()).png")
    }

    /// Whether `data` is a PNG of some size (a real page, not a blank).
    static func isPNG(_ data: Data) -> Bool {
        data.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) && data.count > 5_000
    }

    @Test("a refused data-deletion request's status page, as a person's browser shows it")
    func deletionStatusPage() async throws {
        let driver = try await ChromeDriver.start()
        defer { driver.stop() }
        let browser = try await driver.session()
        do {
            try await Stack.run(browsable: true, { $0.facebook.dataDeletionPolicy = .queue }) { stack in
                _ = try await FacebookCallbackTests.signIn(stack)
                let report = try await FacebookCallbackTests.send(stack, "data-deletion", user: "alice")
                let answer = try JSONValue.decode(Data((report["body"]?.stringValue ?? "").utf8))
                let url = try #require(answer["url"]?.stringValue)
                let request = try #require(try await stack.store.deletionRequests(status: .received, limit: 1).first)
                _ = try await stack.store.decideDeletionRequest(
                    id: request.id,
                    .refuse(
                        reason: "Your purchase records must be kept for 7 years under tax law; we deleted the rest."),
                    now: stack.clock.now, by: .commandLine)
                try await browser.navigate(to: URL(string: url)!)
                let page = try await browser.source()
                #expect(page.contains("Data deletion request: Refused") && page.contains("tax law"))
                #expect(page.contains(request.code))
                let shot = Self.screenshot("data-deletion-status")
                try await browser.screenshot().write(to: shot)
                #expect(Self.isPNG(try Data(contentsOf: shot)))
            }
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    @Test("click through the emulator's dialog to the app's loopback redirect")
    func clickThrough() async throws {
        let driver = try await ChromeDriver.start()
        defer { driver.stop() }
        let browser = try await driver.session()
        do {
            try await Stack.run(browsable: true) { stack in
                let shot = Self.screenshotURL
                let user = try await LoopbackLogin.run(
                    server: stack.serverURL, clientID: Demo.clientID, permissions: ["email", "user_birthday"],
                    fieldsMapping: ["name": "name", "email": "email"], store: InMemoryCredentialStore(),
                    timeout: .seconds(60),
                    openBrowser: { url in
                        do {
                            // Latchkey → Facebook's dialog (the emulator's), through real redirects.
                            try await browser.navigate(to: url)
                            #expect(try await browser.currentURL().hasPrefix(stack.emulatorURL + "/dialog/oauth"))
                            let page = try await browser.source()
                            #expect(page.contains("Log in to Latchkey Demo") && page.contains("user_birthday"))
                            try await browser.screenshot().write(to: shot)
                            try await browser.click("input[name=emulator_user][value=bob]")
                            try await browser.click("input[name=grant_user_birthday]")  // untick it
                            try await browser.click("button[value=continue]")
                        } catch {
                            Issue.record(error)
                        }
                    }, say: { _ in })
                #expect(user.string("name") == "Bob Marley Smith" && user.string("email") == "bob@example.com")
                #expect(user.identities.first?.grantedPermissions == ["email", "public_profile"])
                #expect(Self.isPNG(try Data(contentsOf: shot)))
            }
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    @Test("Easy Login with a second factor: the code page between Facebook's dialog and the app, in Chromium")
    func secondFactorCodePage() async throws {
        let driver = try await ChromeDriver.start()
        defer { driver.stop() }
        let browser = try await driver.session()
        do {
            try await Stack.run(browsable: true) { stack in
                let bearer = try #require(try await SecondFactorTests.signIn(stack)["access_token"]?.stringValue)
                let enrolled = try await SecondFactorTests.enroll(stack, bearer: bearer, name: "iPhone")
                let shot = Self.screenshot("easy-login-second-factor")
                let user = try await LoopbackLogin.run(
                    server: stack.serverURL, clientID: Demo.clientID, permissions: ["email"], fieldsMapping: nil,
                    store: InMemoryCredentialStore(), timeout: .seconds(60),
                    openBrowser: { url in
                        do {
                            try await browser.navigate(to: url)
                            try await browser.click("input[name=emulator_user][value=alice]")
                            try await browser.click("button[value=continue]")
                            // Back at Latchkey: its code page, not yet the app.
                            #expect(try await browser.currentURL().contains("/v1/oauth/facebook/callback"))
                            #expect(try await browser.source().contains("Two-step verification"))
                            try await browser.type("#code", enrolled.authenticator.wrongCode())
                            try await browser.click("form button[type=submit]")
                            #expect(try await browser.source().contains("The code is wrong"))
                            try await browser.type("#code", enrolled.authenticator.code())
                            try await browser.screenshot().write(to: shot)
                            try await browser.click("form button[type=submit]")
                        } catch {
                            Issue.record(error)
                        }
                    }, say: { _ in })
                #expect(user.string("email") == "alice@example.com")
                #expect(Self.isPNG(try Data(contentsOf: shot)))
                let events = try await stack.get("/v1/users/me/events", bearer: bearer).json()["events"]?.arrayValue
                #expect(events?.first?["type"] == "factor.used" && events?.first?["details"]?["purpose"] == "sign_in")
            }
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }
}
