// The words for where a purchase comes from and how a call is asked to treat it, shared by every
// folder: environments, the /verifyReceipt host, the config's policy choices, the crypto path.

/// Where a purchase was made, for every entry point (a receipt's type, a /verifyReceipt body's
/// environment, a signed payload's), as the config's `environments` names it.
public enum PurchaseEnvironment: String, Sendable, CaseIterable {
    case production = "Production"
    case sandbox = "Sandbox"
    case xcode = "Xcode"
    /// Signed data of Apple's local testing environment: like Xcode's, signed by a local
    /// certificate, so it takes the same opt-in (`xcode.accept` and `xcode.roots_pem`).
    case localTesting = "LocalTesting"

    /// Signed by a local certificate rather than by Apple.
    var isLocal: Bool { self == .xcode || self == .localTesting }
}

@available(*, deprecated, renamed: "PurchaseEnvironment", message: "every entry point's environment is PurchaseEnvironment")
public typealias ReceiptEnvironment = PurchaseEnvironment

/// When to check the receipt's device hash (attribute 5).
public enum DeviceCheckPolicy: String, Sendable {
    case ifGiven = "if_given"
    case required
    case off
}

public enum GracePeriodPolicy: String, Sendable {
    case honor
    case ignore
}

/// Which of Apple's servers a call goes to or an answer came from, for /verifyReceipt and the App
/// Store Server API alike, spelled as Apple spells environments. `LocalTesting` is a server the
/// developer runs (the signer's `local_testing_base_url`), for the App Store Server API only.
public enum ServerEnvironment: String, Sendable, CaseIterable {
    case production = "Production"
    case sandbox = "Sandbox"
    case localTesting = "LocalTesting"

    /// The environment a receipt or signed item from this server must name.
    @available(*, deprecated, renamed: "purchaseEnvironment")
    public var receiptEnvironment: PurchaseEnvironment { purchaseEnvironment }

    /// The environment a receipt or signed item from this server must name.
    public var purchaseEnvironment: PurchaseEnvironment {
        switch self {
        case .production: return .production
        case .sandbox: return .sandbox
        case .localTesting: return .localTesting
        }
    }

    /// Reads a value the host wrote. Another casing (release 0.1 wrote "production" and
    /// "sandbox") still works for one release; the note saying so goes to `deprecations`.
    static func parse(_ text: String, path: String, deprecations: inout [String]) -> ServerEnvironment? {
        if let e = ServerEnvironment(rawValue: text) { return e }
        guard let e = ServerEnvironment(anyCase: text) else { return nil }
        deprecations.append("\(path) \"\(text)\" is deprecated: write \"\(e.rawValue)\" (Apple's spelling); the lowercase form goes in the next release")
        return e
    }

    /// The environment whatever the casing (no deprecation note: callers that need one use `parse`).
    public init?(anyCase text: String) {
        guard let e = Self.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) else { return nil }
        self = e
    }

    static let expected = "\"Production\" or \"Sandbox\""
    static let expectedForAPI = "\"Production\", \"Sandbox\" or \"LocalTesting\""
}

/// How checks 2–7 are carried out. `.reference` exists so that the fast path can always be
/// checked against OpenSSL's own PKCS7_verify; hosts never choose it.
@_spi(Testing)
public enum CryptoPath: Sendable {
    /// Own DER walk, verified-chain cache, one signature verification per call.
    case cached
    /// d2i_PKCS7 + PKCS7_verify with a per-call store, then the same marker policy.
    case reference
}
