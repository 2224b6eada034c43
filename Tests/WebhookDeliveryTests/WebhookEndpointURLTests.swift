import Testing
import WebhookDelivery

@Suite("WebhookEndpointURL: https, or http to loopback when allowed; no credentials, no fragment")
struct WebhookEndpointURLTests {
    static let accepted: [(text: String, allowsLoopbackHTTP: Bool, host: String, loopback: Bool)] = [
        ("https://hooks.example.com/seatledger", false, "hooks.example.com", false),
        ("https://hooks.example.com:8443/a/b?x=1&y=2", false, "hooks.example.com", false),
        ("HTTPS://Hooks.Example.COM", false, "hooks.example.com", false),
        ("https://127.0.0.1/in", false, "127.0.0.1", true),
        ("http://127.0.0.1:8080/in", true, "127.0.0.1", true),
        ("http://127.200.3.4/in", true, "127.200.3.4", true),
        ("http://localhost:9000/in", true, "localhost", true),
        ("http://[::1]:8080/in", true, "::1", true),
        ("https://[2001:db8::1]/in", false, "2001:db8::1", false),
    ]

    @Test("accepted", arguments: accepted)
    func accepts(_ example: (text: String, allowsLoopbackHTTP: Bool, host: String, loopback: Bool)) throws {
        let endpoint = try WebhookEndpointURL(validating: example.text, allowsLoopbackHTTP: example.allowsLoopbackHTTP)
        #expect(endpoint.text == example.text)
        #expect(endpoint.description == example.text)
        #expect(endpoint.host == example.host)
        #expect(endpoint.isLoopback == example.loopback)
        #expect(endpoint.isPlainHTTP == example.text.hasPrefix("http:"))
        #expect(endpoint.url.absoluteString == example.text)
    }

    static let plainHTTP = "plain http is allowed only to a loopback address with --allow-http-loopback"
    static let refused: [(text: String, allowsLoopbackHTTP: Bool, reason: WebhookEndpointURLError.Reason, message: String)] = [
        ("http://example.com/x", true, .plainHTTP, "http://example.com/x: " + plainHTTP),
        ("http://example.com/x", false, .plainHTTP, "http://example.com/x: " + plainHTTP),
        ("http://127.0.0.1:8080/in", false, .plainHTTP, "http://127.0.0.1:8080/in: " + plainHTTP),
        ("http://localhost/in", false, .plainHTTP, "http://localhost/in: " + plainHTTP),
        ("http://128.0.0.1/in", true, .plainHTTP, "http://128.0.0.1/in: " + plainHTTP),
        ("http://127.0.0.1.example.com/in", true, .plainHTTP, "http://127.0.0.1.example.com/in: " + plainHTTP),
        ("http://localhost.example.com/in", true, .plainHTTP, "http://localhost.example.com/in: " + plainHTTP),
        ("http://[::2]/in", true, .plainHTTP, "http://[::2]/in: " + plainHTTP),
        ("https://alice:hunter2@example.com/x", false, .userInfo, "https://example.com/x: a user name or password in the URL is not allowed"),
        ("https://alice@example.com/x", false, .userInfo, "https://example.com/x: a user name or password in the URL is not allowed"),
        ("http://admin:s3cr3t@127.0.0.1/x", true, .userInfo, "http://127.0.0.1/x: a user name or password in the URL is not allowed"),
        ("https://example.com/x#top", false, .fragment, "https://example.com/x#top: a fragment (#…) is not allowed"),
        ("ftp://example.com/x", false, .unsupportedScheme("ftp"), "ftp://example.com/x: scheme ftp is not supported: use https"),
        ("wss://example.com/x", true, .unsupportedScheme("wss"), "wss://example.com/x: scheme wss is not supported: use https"),
        ("example.com/hook", false, .missingScheme, "example.com/hook: no scheme: use https://"),
        ("https:///hook", false, .missingHost, "https:///hook: no host"),
        ("https://", false, .missingHost, "https://: no host"),
        ("", false, .notAURL, ": not a URL"),
        ("https://exa mple.com/x", false, .notAURL, "https://exa mple.com/x: not a URL"),
    ]

    @Test("refused, with the URL and the reason named", arguments: refused)
    func refuses(_ example: (text: String, allowsLoopbackHTTP: Bool, reason: WebhookEndpointURLError.Reason, message: String)) {
        #expect {
            try WebhookEndpointURL(validating: example.text, allowsLoopbackHTTP: example.allowsLoopbackHTTP)
        } throws: { error in
            guard let error = error as? WebhookEndpointURLError else { return false }
            #expect(error.reason == example.reason)
            #expect(error.description == example.message)
            for password in ["hunter2", "s3cr3t", "alice", "admin"] {
                #expect(!error.description.contains(password), "\(error.description) shows \(password)")
                #expect(!String(reflecting: error).contains(password), "\(error) shows \(password) when reflected")
            }
            return true
        }
    }

    @Test("redaction cuts the user information only", arguments: [
        ("https://u:p@host/x?q=a@b", "https://host/x?q=a@b"),
        ("https://u:p@w@host:1/x", "https://host:1/x"),
        ("https://host/x@y", "https://host/x@y"),
        ("u:p@host/x", "host/x"),
        ("https://host", "https://host"),
    ])
    func redaction(_ example: (String, String)) {
        #expect(WebhookEndpointURLError.redacted(example.0) == example.1)
    }

    @Test("loopback hosts", arguments: [
        ("127.0.0.1", true), ("127.255.255.254", true), ("127.0.0.0", true), ("::1", true), ("0:0:0:0:0:0:0:1", true),
        ("localhost", true), ("LOCALHOST", true),
        ("128.0.0.1", false), ("126.255.255.255", false), ("0.0.0.0", false), ("::", false), ("::2", false),
        ("127.1", false), ("localhost.example.com", false), ("example.com", false), ("10.0.0.1", false),
    ])
    func loopback(_ example: (String, Bool)) {
        #expect(WebhookEndpointURL.isLoopbackHost(example.0) == example.1, "\(example.0)")
    }
}
