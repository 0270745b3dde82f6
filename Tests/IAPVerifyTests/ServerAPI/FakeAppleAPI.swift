// Test support for the App Store Server API: the fake Apple-shaped PKI of Tests/shared/fakeapple
// (its leaf key signs answers), the developer signer, and answer bodies built like Apple's.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

enum FakeApple {
    /// Tests/shared/fakeapple, found from this file (Tests/IAPVerifyTests/ServerAPI/).
    static let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared").appendingPathComponent("fakeapple")

    static func text(_ name: String) -> String {
        (try? String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)) ?? ""
    }

    static func bytes(_ name: String) -> [UInt8] { Array(text(name).utf8) }

    static let bundle = "com.example.fake"
    static let signedDate: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z
    static let now: Int64 = signedDate + 3_600_000

    /// The developer's signer, as a host configures it.
    static func signer(base: String? = nil) throws -> Signer {
        var config = try JSONSerialization.jsonObject(with: Data(bytes("signer.json"))) as! [String: Any]
        if let base { config["test_base_url"] = base }
        let json = try JSONSerialization.data(withJSONObject: config)
        return try json.withUnsafeBytes { raw throws(IAPVFailure) in try Signer(json: raw) }
    }

    /// A verifier trusting only the fake root; Production and Sandbox.
    static func verifier(_ extra: [String: Any] = [:], environments: [String] = ["Production", "Sandbox"]) -> Verifier? {
        var config: [String: Any] = ["bundle_id": bundle, "environments": environments,
                                     "trust": ["include_apple_roots": false, "roots_pem": [text("root.pem")]]]
        for (k, v) in extra { config[k] = v }
        return makeVerifier(config)
    }

    /// Signs like Apple: ES256 by the leaf, x5c = [leaf, wwdr, root].
    static let appleKey: Signer = try! Signer(privateKeyPEM: bytes("leaf.key.pem"), keyID: "leaf", issuerID: "apple", bundleID: bundle)
    static let x5c: [String] = ["leaf.pem", "wwdr.pem", "root.pem"].map { name in
        text(name).split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
    }

    static func sign(_ payload: [String: Any], key: Signer = appleKey) -> String {
        let header = try! JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": x5c])
        let body = try! JSONSerialization.data(withJSONObject: payload)
        return try! key.compactJWS(header: [UInt8](header), payload: [UInt8](body))
    }

    static func transaction(_ id: String, product: String = "pro.monthly", original: String = "1000",
                            environment: String = "Production", bundleID: String = bundle,
                            expires: Int64? = signedDate + 20 * 86_400_000, extra: [String: Any] = [:]) -> [String: Any] {
        var p: [String: Any] = ["transactionId": id, "originalTransactionId": original, "bundleId": bundleID, "productId": product,
                                "purchaseDate": signedDate - 10 * 86_400_000, "originalPurchaseDate": signedDate - 40 * 86_400_000,
                                "quantity": 1, "type": expires != nil ? "Auto-Renewable Subscription" : product == "coins" ? "Consumable" : "Non-Consumable",
                                "inAppOwnershipType": "PURCHASED", "signedDate": signedDate, "environment": environment]
        if let expires { p["expiresDate"] = expires }
        for (k, v) in extra { p[k] = v }
        return p
    }

    static func renewal(original: String = "1000", product: String = "pro.monthly", environment: String = "Production",
                        autoRenew: Int = 1, extra: [String: Any] = [:]) -> [String: Any] {
        var p: [String: Any] = ["originalTransactionId": original, "productId": product, "autoRenewProductId": product,
                                "autoRenewStatus": autoRenew, "signedDate": signedDate, "environment": environment]
        for (k, v) in extra { p[k] = v }
        return p
    }

    static func json(_ object: Any) -> [UInt8] { [UInt8](try! JSONSerialization.data(withJSONObject: object)) }

    static func history(_ payloads: [[String: Any]], hasMore: Bool = false, revision: String = "rev-1",
                        environment: String = "Production") -> [UInt8] {
        json(["revision": revision, "bundleId": bundle, "appAppleId": 1234, "environment": environment, "hasMore": hasMore,
              "signedTransactions": payloads.map { sign($0) }])
    }
}

/// Options for an API answer, as JSON the way a host passes them.
func apiOptions(_ endpoint: String, status: Int, environment: String = "Production", retryAfter: String? = nil,
                attempt: Int = 1, extra: [String: Any] = [:]) -> APIResponseOptions {
    var o: [String: Any] = ["endpoint": endpoint, "http_status": status, "environment": environment, "attempt": attempt]
    if let retryAfter { o["retry_after"] = retryAfter }
    for (k, v) in extra { o[k] = v }
    let bytes = FakeApple.json(o)
    return try! bytes.withUnsafeBytes { raw throws(IAPVFailure) in try APIResponseOptions(json: raw) }
}

/// The result document as a dictionary.
func resultDict(_ json: [UInt8]) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(json))) as? [String: Any] ?? [:]
}
