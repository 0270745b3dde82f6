// The developer's signing identity for the App Store Server API: the P-256 private key from App
// Store Connect (a .p8 file), its key id, the issuer id and the app's bundle id. It signs the
// bearer tokens of §12 and, later, offer signatures. The key stays inside this object: no result,
// message or description ever contains it.

public final class Signer: @unchecked Sendable {
    // @unchecked: `localTestingBaseURL` is set only while the object is made; the key is Sendable.
    /// The private key (Trust signs with it).
    let key: SigningKey
    public let keyID: String
    public let issuerID: String
    public let bundleID: String
    /// Replaces Apple's scheme and host in built URLs (tests only: a fake API on 127.0.0.1),
    /// for both environments or per environment.
    package let testBaseURL: String?
    public let testSandboxBaseURL: String?
    /// Where calls with environment LocalTesting go (a server the developer runs).
    public internal(set) var localTestingBaseURL: String?

    /// Parses the signer config: `private_key_pem`, `key_id`, `issuer_id`, `bundle_id`, and the
    /// test-only `test_base_url` (one URL, or {"production": ..., "sandbox": ...}). Anything missing, unknown or of the wrong type is a config error.
    public convenience init(json: UnsafeRawBufferPointer) throws(IAPVFailure) {
        let s = try Self.settings(json: json)
        try self.init(privateKeyPEM: s.pem, keyID: s.keyID, issuerID: s.issuerID, bundleID: s.bundleID, testBaseURL: s.base,
                      testSandboxBaseURL: s.sandboxBase)
        localTestingBaseURL = s.localBase
    }

    /// What a signer config says, read and checked for presence (the designated init checks values).
    struct Settings {
        var pem: [UInt8], keyID: String, issuerID: String, bundleID: String
        var base: String?, sandboxBase: String?, localBase: String?
    }

    static func settings(json: UnsafeRawBufferPointer) throws(IAPVFailure) -> Settings {
        guard json.count <= 64 * 1024 else {
            throw .config("the signer config is \(json.count) bytes; a .p8 key and three ids fit in far less")
        }
        let doc = try ConfigJSONDocument(bytes: json, what: "signer config", status: .config)
        guard let members = doc.root.members else {
            throw .config("signer config: expected a JSON object, got \(doc.root.typeName)")
        }
        var pem: [UInt8]?, keyID: String?, issuerID: String?, bundleID: String?, base: String?, sandboxBase: String?, localBase: String?
        for (name, value) in members {
            switch SignerConfigMember.member(named: name) {
            case .privateKeyPEM:
                guard let s = value.string else { throw .config("signer config.private_key_pem must be a string") }
                pem = Array(s.utf8)
            case .keyID:
                guard let s = value.string else { throw .config("signer config.key_id must be a string") }
                keyID = s
            case .issuerID:
                guard let s = value.string else { throw .config("signer config.issuer_id must be a string") }
                issuerID = s
            case .bundleID:
                guard let s = value.string else { throw .config("signer config.bundle_id must be a string") }
                bundleID = s
            case .testBaseURL:
                if let s = value.string {
                    base = s
                    sandboxBase = s
                } else if let hosts = value.members {
                    for (env, url) in hosts {
                        guard let u = url.string else { throw .config("signer config.test_base_url.\(env) must be a string") }
                        // A test setting, keyed like every environment (any casing: tests predate the rename).
                        switch ServerEnvironment(anyCase: env) {
                        case .production?: base = u
                        case .sandbox?: sandboxBase = u
                        case .localTesting?, nil: throw .config("signer config.test_base_url: unknown key \"\(env)\" (expected Production, Sandbox)")
                        }
                    }
                } else {
                    throw .config("signer config.test_base_url must be a string or {\"Production\": ..., \"Sandbox\": ...}")
                }
            case .localTestingBaseURL:
                guard let s = value.string, APIURL.isAnyBaseURL(s) else {
                    throw .config("signer config.local_testing_base_url must be http(s)://host[:port] with no path: the server calls with environment LocalTesting go to")
                }
                localBase = s
            case nil:
                throw .config("signer config: unknown key \"\(name)\" (expected private_key_pem, key_id, issuer_id, bundle_id, local_testing_base_url, test_base_url)")
            }
        }
        guard let pem else { throw .config("signer config needs private_key_pem: the .p8 key from App Store Connect, as PEM text") }
        guard let keyID else { throw .config("signer config needs key_id: the 10-character id of the key in App Store Connect") }
        guard let issuerID else { throw .config("signer config needs issuer_id: the issuer UUID shown with your keys in App Store Connect") }
        guard let bundleID else { throw .config("signer config needs bundle_id: your app's bundle identifier") }
        return Settings(pem: pem, keyID: keyID, issuerID: issuerID, bundleID: bundleID, base: base, sandboxBase: sandboxBase,
                        localBase: localBase)
    }

    public init(privateKeyPEM: [UInt8], keyID: String, issuerID: String, bundleID: String,
                testBaseURL: String? = nil, testSandboxBaseURL: String? = nil) throws(IAPVFailure) {
        guard Self.isToken(keyID, extra: []), keyID.utf8.count <= 64 else {
            throw .config("signer config.key_id must be 1-64 letters and digits")
        }
        guard Self.isToken(issuerID, extra: [UInt8(ascii: "-")]), issuerID.utf8.count <= 64 else {
            throw .config("signer config.issuer_id must be 1-64 letters, digits and dashes (a UUID)")
        }
        guard !bundleID.isEmpty, bundleID.utf8.count <= 255, bundleID.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7f }) else {
            throw .config("signer config.bundle_id must be 1-255 characters without spaces or control characters")
        }
        for base in [testBaseURL, testSandboxBaseURL].compactMap({ $0 }) {
            guard APIURL.isBaseURL(base) else {
                throw .config("signer config.test_base_url must be http(s)://127.0.0.1[:port], localhost or [::1] with no path: it is for a fake API in tests")
            }
        }
        key = try Self.loadKey(privateKeyPEM)
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
        self.testBaseURL = testBaseURL
        self.testSandboxBaseURL = testSandboxBaseURL
    }

    private static func isToken(_ s: String, extra: [UInt8]) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy { c in
            (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || extra.contains(c)
        }
    }

    /// A PKCS#8 (or SEC1) PEM P-256 private key. Encrypted keys are refused, never prompted for.
    private static func loadKey(_ pem: [UInt8]) throws(IAPVFailure) -> SigningKey {
        guard pem.count > 0, pem.count <= 16 * 1024 else {
            throw .config("signer config.private_key_pem is empty or too long for a P-256 key")
        }
        do {
            return try SigningKey(pem: pem)
        } catch {
            switch error {
            case .unreadable:
                throw .config("signer config.private_key_pem is not a readable, unencrypted PEM private key (paste the whole .p8 file, BEGIN and END lines included)")
            case .notP256:
                throw .config("signer config.private_key_pem must be an EC P-256 key (App Store Connect's .p8 keys are)")
            }
        }
    }

    /// The JOSE header of every token this signer makes: ES256, its key id, JWT.
    var jwtHeader: [UInt8] {
        var h = JSONWriter(capacity: 64)
        h.beginObject()
        h.field("alg", "ES256")
        h.field("kid", keyID)
        h.field("typ", "JWT")
        h.endObject()
        return h.bytes
    }

    /// A compact JWS of `header` and `payload` (JSON objects this library wrote), signed ES256.
    func compactJWS(header: [UInt8], payload: [UInt8]) throws(IAPVFailure) -> String {
        let input = Base64.encodeURL(header) + "." + Base64.encodeURL(payload)
        guard let sig = key.signES256(Array(input.utf8)) else { throw IAPVFailure(.internal, "OpenSSL could not sign with the signer's key") }
        return input + "." + Base64.encodeURL(sig)
    }
}

extension Signer: CustomStringConvertible {
    /// Never the key.
    public var description: String { "Signer(key_id: \(keyID), issuer_id: \(issuerID), bundle_id: \(bundleID))" }
}

/// The bearer token of the App Store Server API.
public struct APIToken: Sendable {
    public var token: String
    public var issuedAtMs: Int64
    public var expiresAtMs: Int64

    /// Apple refuses tokens that live longer than an hour.
    public static let maxLifetimeSeconds: Int64 = 3600
    public static let defaultLifetimeSeconds: Int64 = 300
}

extension Signer {
    /// A token issued at `nowMs` (whole seconds, as JWT wants) living `lifetimeSeconds`.
    public func apiToken(nowMs: Int64, lifetimeSeconds: Int64 = APIToken.defaultLifetimeSeconds) throws(IAPVFailure) -> APIToken {
        try Admission.clock(nowMs)
        guard (1...APIToken.maxLifetimeSeconds).contains(lifetimeSeconds) else {
            throw .argument("the token lifetime must be 1-3600 seconds (Apple refuses longer), got \(lifetimeSeconds)")
        }
        let iat = nowMs / 1000
        var p = JSONWriter(capacity: 160)
        p.beginObject()
        p.field("iss", issuerID)
        p.field("iat", iat)
        p.field("exp", iat + lifetimeSeconds)
        p.field("aud", "appstoreconnect-v1")
        p.field("bid", bundleID)
        p.endObject()
        let jwt = try compactJWS(header: jwtHeader, payload: p.bytes)
        return APIToken(token: jwt, issuedAtMs: iat * 1000, expiresAtMs: (iat + lifetimeSeconds) * 1000)
    }
}

extension APIToken {
    public func resultJSON() -> [UInt8] {
        var w = JSONWriter(capacity: token.utf8.count + 96)
        w.beginObject()
        w.field(APITokenMember.token, token)
        w.field(APITokenMember.issuedAtMs, issuedAtMs)
        w.field(APITokenMember.expiresAtMs, expiresAtMs)
        w.endObject()
        return w.bytes
    }
}
