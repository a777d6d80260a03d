import Testing
@testable import TetherExtension

/// fetchJSON's errors name the URL's path, never its query (which may carry
/// a secret) wherever the '?' is.
@Suite struct FetchErrorTextTests {
    @Test(arguments: [
        ("https://api.example/orders/7?access_token=SECRET", "/orders/7"),
        ("https://api.example/?access_token=SECRET", "/"),
        ("https://api.example?x=SECRET/b", "/"),
        ("https://api.example#SECRET/b", "/"),
        ("https://api.example", "/"),
        ("http://h/a/b#frag", "/a/b"),
    ])
    func theQueryNeverReachesTheErrorText(_ url: String, _ path: String) {
        let text = ExtensionContext.pathForErrors(url)
        #expect(text == path)
        #expect(!text.contains("SECRET"))
    }
}
