import Foundation
import Latchkey
import LatchkeyAPI
import Testing

@testable import LatchkeyServer

/// The console in a real headless Chromium over WebDriver, as an operator uses it: sign in with
/// an admin key, find a person who signed in through the emulator, end their session (the SDK's
/// next refresh fails), approve a data-deletion request; a screenshot of each page for
/// docs/operations.md (`LATCHKEY_UPDATE_SCREENSHOTS=1` refreshes docs/images).
@Suite(
    "Console in a headless browser",
    .enabled(
        if: ChromeDriver.unavailableReason == nil || TestEnvironment.isCI, "\(ChromeDriver.unavailableReason ?? "")"))
struct ConsoleBrowserTests {
    @Test("sign in, find a person, end their session, approve a deletion, every page shot")
    func operatorWalk() async throws {
        let driver = try await ChromeDriver.start()
        defer { driver.stop() }
        let browser = try await driver.session(width: 1200, height: 900)
        do {
            try await Stack.run(browsable: true, { $0.facebook.dataDeletionPolicy = .queue }) { stack in
                try await walk(stack, browser)
            }
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    private func walk(_ stack: Stack, _ browser: WebDriverSession) async throws {
        let app = SDKEndToEndTests.client(stack)
        let alice = try await app.signIn(with: .accessToken(try await stack.facebookToken("alice"))).user
        _ = try await stack.signIn(["accessToken": .string(try await stack.facebookToken("bob"))])
        _ = try await stack.signIn(["accessToken": "not-a-token"])
        _ = try await FacebookCallbackTests.send(stack, "data-deletion", user: "bob")
        let key = try await AdminAPITests.adminKey(stack, name: "ops-laptop")
        let base = stack.serverURL.absoluteString

        // Signed out, the console sends the browser to its sign-in.
        try await browser.navigate(to: URL(string: base + "/admin")!)
        #expect(try await browser.currentURL() == base + "/admin/sign-in")
        try await shoot(browser, "console-sign-in")
        try await browser.type("#key", key)
        try await browser.click("form button[type=submit]")
        try await eventually("the dashboard opens", within: .seconds(20)) {
            try await browser.currentURL() == base + "/admin"
        }
        let dashboard = try await browser.source()
        #expect(dashboard.contains("Sign-ins per hour") && dashboard.contains("ops-laptop"))
        #expect(dashboard.contains("facebook · classic: 2 sign-ins"))
        try await shoot(browser, "console-dashboard")

        // Find Alice by her email, open her page.
        try await browser.click("nav a[href='/admin/users']")
        try await browser.type("input[name=query]", "ALICE@example.com")
        try await browser.click("form.search button[type=submit]")
        try await eventually("the search answers", within: .seconds(20)) {
            try await browser.currentURL().contains("query=")
        }
        let found = try await browser.source()
        #expect(found.contains(alice.id) && !found.contains("bob@example.com"))
        try await shoot(browser, "console-users")
        try await browser.click("a[href='/admin/users/\(alice.id)']")
        let sessionID = try #require(
            try await stack.store.sessions(userID: alice.id, now: stack.clock.now, limit: 10).first?.id)
        #expect(try await browser.source().contains(sessionID))
        try await shoot(browser, "console-user")

        // End her session: the app's next refresh fails, and the app is signed out.
        try await browser.click("form[action='/admin/users/\(alice.id)/sessions/\(sessionID)/end'] button")
        // A form's post navigates after the click returns: the next page is waited for.
        try await eventually("the page says the session ended", within: .seconds(20)) {
            try await browser.source().contains("Session ended.")
        }
        #expect(await SDKLifecycleTests.failure { try await app.refresh() } == .refreshTokenInvalid)
        #expect(await app.authState == .closed)

        // Approve Bob's data-deletion request.
        try await browser.click("nav a[href='/admin/deletions']")
        let queued = try #require(try await stack.store.deletionRequests(status: .received, limit: 5).first)
        #expect(try await browser.source().contains(queued.id))
        try await shoot(browser, "console-deletions")
        try await browser.click("form[action='/admin/deletions/\(queued.id)/approve'] button")
        try await eventually("the page says the request was approved", within: .seconds(20)) {
            try await browser.source().contains("Request approved")
        }
        #expect(try await stack.store.deletionRequest(id: queued.id)?.status == .inProgress)

        try await browser.click("nav a[href='/admin/keys']")
        #expect(try await browser.source().contains("signing"))
        try await shoot(browser, "console-signing-keys")
        try await browser.click("nav a[href='/admin/admin-keys']")
        #expect(try await browser.source().contains("ops-laptop"))
        try await shoot(browser, "console-admin-keys")

        // The calls went into the audit log under the key.
        let calls = try await stack.store.auditEvents(userID: alice.id, limit: 50).filter {
            $0.event.type == .adminCall
        }
        #expect(calls.contains { $0.event.detail["route"] == "/admin/users/{id}/sessions/{sessionId}/end" })
    }

    private func shoot(_ browser: WebDriverSession, _ name: String) async throws {
        let url = BrowserTests.screenshot(name)
        try await browser.screenshot().write(to: url)
        #expect(BrowserTests.isPNG(try Data(contentsOf: url)), "\(name)")
    }
}
