import Testing
@testable import TetherAuth

/// Where credentials may go: the origin of a URL, and the transport rule.
@Suite struct URLOriginTests {
    @Test func originsAreParsedWithTheirDefaultPorts() throws {
        let origin = try #require(URLOrigin("HTTPS://User:pw@API.Example.com/v1/auth?x=1#y"))
        #expect(origin.scheme == "https" && origin.host == "api.example.com" && origin.port == 443)
        #expect(origin.description == "https://api.example.com")
        // Only ASCII is lowercased: a Unicode mapping would turn a Kelvin sign into "k".
        #expect(URLOrigin("http://EXAMPLE.com/path/\u{212A}")?.host == "example.com")
        #expect(URLOrigin("http://[::1]:8080/token")?.description == "http://[::1]:8080")
        #expect(URLOrigin("http://127.0.0.1:80/")?.description == "http://127.0.0.1")
        for bad in ["ftp://x/", "http://", "http:///x", "http://x:0/", "http://x:99999/", "http://[::1/", "http://x:8o/", "x",
                    "http://x:+80/", "http://x: 80/", "http://ex\u{212A}.com/", "http://ex%41.com/", "http://a b/", "http://[::1%eth0]/"] {
            #expect(URLOrigin(bad) == nil, "\(bad)")
        }
    }

    @Test func onlyThisMachineIsLoopback() {
        for url in ["http://localhost:1/", "http://127.0.0.1/", "http://127.255.0.9:8/", "http://[::1]/"] {
            #expect(URLOrigin(url)?.isLoopback == true, "\(url)")
        }
        // A name that merely starts like one, another host, a user part posing as the host.
        for url in ["http://127.0.0.1.evil.example/", "http://localhost.evil.example/", "http://10.0.0.1/",
                    "http://127.0.0.1@evil.example/", "http://[::2]/", "http://127.0.0.1.5/",
                    "http://127.0.0.+1/", "http://127.0.0.256/", "http://127.0.0.0001/", "http://127.0..1/"] {
            #expect(URLOrigin(url)?.isLoopback != true, "\(url)")
        }
    }

    @Test func credentialsGoOverHTTPSOrToThisMachineUnlessAllowed() {
        #expect(TokenEndpoint.transportRefusal("https://auth.example.com/token", allowsInsecureHTTP: false) == nil)
        #expect(TokenEndpoint.transportRefusal("http://127.0.0.1:8080/token", allowsInsecureHTTP: false) == nil)
        let refusal = TokenEndpoint.transportRefusal("http://auth.example.com/token", allowsInsecureHTTP: false)
        #expect(refusal?.contains("http://auth.example.com") == true && refusal?.contains("--insecure-http") == true)
        #expect(TokenEndpoint.transportRefusal("http://auth.example.com/token", allowsInsecureHTTP: true) == nil)
    }

    @Test func theBearerTokenGoesOnlyToAllowedOriginsOverHTTPSOrThisMachine() {
        let byDefault = AuthConfiguration(tokenURL: "https://auth.example.com/token", clientID: "c")
        #expect(byDefault.bearerRefusal(for: "https://auth.example.com/orders?x") == nil)
        #expect(byDefault.bearerRefusal(for: "https://auth.example.com:8443/orders")?.contains("goes only to https://auth.example.com,") == true)
        #expect(byDefault.bearerRefusal(for: "https://api.example.com/orders") != nil)
        #expect(byDefault.bearerRefusal(for: "http://auth.example.com/orders") != nil, "another scheme, another origin")
        let listed = AuthConfiguration(tokenURL: "https://auth.example.com/token", clientID: "c",
                                       apiOrigins: [URLOrigin(origin: "https://api.example.com")!, URLOrigin(origin: "http://api.example.com")!])
        #expect(listed.bearerRefusal(for: "https://api.example.com/v1/orders") == nil)
        #expect(listed.bearerRefusal(for: "https://auth.example.com/orders") != nil, "the list replaces the default")
        #expect(listed.bearerRefusal(for: "http://api.example.com/v1") == "the access token does not go in clear to http://api.example.com")
        #expect(AuthConfiguration(listed.jsonValue) == listed)
        #expect(URLOrigin(origin: "https://api.example.com/v1") == nil && URLOrigin(origin: "https://u@api.example.com") == nil)
    }

    @Test func theStyleAndItsSettingsAreStoredWithTheCredentials() {
        let json = AuthConfiguration(style: .json, tokenURL: "https://a/login", refreshURL: "https://a/refresh",
                                     clientID: "", usernameField: "identifier", allowsInsecureHTTP: true)
        #expect(AuthConfiguration(json.jsonValue) == json)
        #expect(json.refreshEndpoint == "https://a/refresh")
        let oauth2 = AuthConfiguration(tokenURL: "https://a/token", clientID: "id", clientSecret: "s")
        #expect(AuthConfiguration(oauth2.jsonValue) == oauth2)
        #expect(oauth2.jsonValue["style"] == nil, "an older version reads it as before")
        // A style this version does not know is not refreshed some other way.
        #expect(AuthConfiguration(.object(["tokenURL": "https://a", "clientID": "", "style": "saml"])) == nil)
    }
}
