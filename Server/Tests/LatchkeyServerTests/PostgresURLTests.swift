import Foundation
import LatchkeyServer
import Testing

@Suite("PostgreSQL URL")
struct PostgresURLTests {
    @Test("parses user, password (percent-decoded, with @ / :), host, port, database and the TLS mode")
    func parses() throws {
        let url = try PostgresURL("postgres://app:p%40ss/w:rd@db.example.com:6543/latchkey?sslmode=require")
        #expect(url.user == "app" && url.password == "p@ss/w:rd")
        #expect(url.host == "db.example.com" && url.port == 6543 && url.database == "latchkey")
        #expect(url.tls == .require)
        let bare = try PostgresURL("postgresql://app@[::1]/x")
        #expect(bare.host == "::1" && bare.port == 5432 && bare.password == nil)
        #expect(try DatabaseLocation("postgres://a:b@h/d") == .postgres(try PostgresURL("postgres://a:b@h/d")))
    }

    @Test(
        "TLS is verify-full unless the host is a literal loopback address; sslrootcert, connect_timeout, options are read"
    )
    func tlsDefaults() throws {
        #expect(try PostgresURL("postgres://a:b@db.internal/d").tls == .verifyFull)
        #expect(try PostgresURL("postgres://a:b@127.0.0.1/d").tls == .disable)
        // The name localhost resolves as the resolver likes: only literal addresses count as loopback.
        #expect(try PostgresURL("postgres://a:b@localhost/d").tls == .verifyFull)
        #expect(try PostgresURL("postgres://a:b@127.0.0.2:5433/d").tls == .disable)
        #expect(try PostgresURL("postgres://a:b@[::1]/d").tls == .disable)
        #expect(try PostgresURL("postgres://a:b@[0:0:0:0:0:0:0:1]/d").tls == .disable)
        #expect(try PostgresURL("postgres://a:b@[::2]/d").tls == .verifyFull)
        #expect(try PostgresURL("postgres://a:b@localhost/d?sslmode=disable").tls == .disable)
        #expect(try PostgresURL("postgres://a:b@127.db.example.com/d").tls == .verifyFull)
        #expect(try PostgresURL("postgres://a:b@127.1.2/d").tls == .verifyFull)
        #expect(try PostgresURL("postgres://a:b@127.0.0.08/d").tls == .verifyFull)
        let url = try PostgresURL(
            "postgres://a:b@h/d?sslmode=verify-full&sslrootcert=/etc/ca.pem&connect_timeout=3"
                + "&options=-c%20search_path%3Dlk&application_name=node1")
        #expect(url.rootCertificatePath == "/etc/ca.pem" && url.connectTimeout == 3)
        #expect(url.options == "-c search_path=lk" && url.applicationName == "node1")
    }

    @Test(
        "refused, without the password in the message",
        arguments: [
            ("postgres://a:hunter2@h/d?sslmode=prefer", "sslmode must be"),
            ("postgres://a:hunter2@h/d?sslmode=verify-ca", "sslmode must be"),
            ("postgres://a:hunter2@h/d?ssl=true", "unknown parameter 'ssl'"),
            ("postgres://a:hunter2@h", "names no database"),
            ("postgres://:hunter2@h/d", "names no user"),
            ("postgres://a:hunter2@h:99999/d", "port"),
            ("postgres://a:hunter2@h/d?sslmode=require&sslrootcert=/x", "only used with sslmode=verify-full"),
            ("postgres://a:hunter2@h/d?connect_timeout=0", "connect_timeout"),
            ("postgres://a:hunter2%zz@h/d", "not an escape"),
        ])
    func refused(url: String, fragment: String) {
        #expect {
            _ = try PostgresURL(url)
        } throws: { "\($0)".contains(fragment) && !"\($0)".contains("hunter2") }
    }

    @Test("the description never shows the password")
    func description() throws {
        let url = try PostgresURL("postgres://app:hunter2@db:5432/x?sslmode=require")
        #expect(url.description == "postgres://app:***@db:5432/x?sslmode=require")
        #expect(DatabaseLocation.postgres(url).displayName == url.description)
    }
}
