// The hostile-input suite on a fake Apple-shaped PKI (scripts/generate-fake-pki.py):
// Apple's names, other keys. Each case asserts its exact verdict on both crypto paths.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class FakePKITests: XCTestCase {
    struct Case {
        let file: String
        let verdict: String?
        let status: String?
        let note: String
        let config: [String: Any]
        let nowMs: Int64
        let options: [String: Any]
    }

    static func cases() -> [Case] {
        let manifest = Fixtures.json("fakepki/cases.json")
        return (manifest["cases"] as? [[String: Any]] ?? []).map {
            Case(file: $0["file"] as? String ?? "", verdict: $0["verdict"] as? String, status: $0["status"] as? String,
                 note: $0["note"] as? String ?? "", config: $0["config"] as? [String: Any] ?? [:],
                 nowMs: ($0["now_ms"] as? NSNumber)?.int64Value ?? 0, options: $0["options"] as? [String: Any] ?? [:])
        }
    }

    /// The fake root is trusted and Apple's roots are not, unless a case says otherwise.
    static func config(for c: Case) -> [String: Any] {
        var config: [String: Any] = ["bundle_id": "com.example.fake",
                                     "trust": ["roots_pem": [Fixtures.fakeRootPEM], "include_apple_roots": false]]
        for (k, v) in c.config {
            if k == "trust", let t = v as? [String: Any] {
                var trust = t
                if let roots = t["roots_pem"] as? [String] {
                    trust["roots_pem"] = roots.map { $0.hasPrefix("@") ? Fixtures.text("fakepki/\($0.dropFirst())") : $0 }
                }
                if trust["roots_pem"] == nil { trust["roots_pem"] = [String]() }
                config[k] = trust
            } else {
                config[k] = v
            }
        }
        return config
    }

    func testEveryCaseGivesItsExactVerdictOnBothPaths() throws {
        let cases = Self.cases()
        XCTAssertGreaterThanOrEqual(cases.count, 50)
        for c in cases {
            let v = try makeVerifierOrThrow(Self.config(for: c))
            let bytes = Fixtures.data("fakepki/\(c.file)")
            for path in [CryptoPath.cached, .reference] {
                do {
                    let r = try v.verify(bytes, now: c.nowMs, options: options(c.options), path: path)
                    XCTAssertEqual(r.verdict.rawValue, c.verdict, "\(c.file) via \(path) (\(c.note)): \(r.judgement.reason)")
                    XCTAssertEqual(r.trusted, c.verdict == "valid", c.file)
                    if r.verdict != .valid { XCTAssertFalse(r.judgement.reason.isEmpty) }
                } catch let failure as IAPVFailure {
                    XCTAssertEqual(failure.status.name, c.status, "\(c.file) via \(path): \(failure.message)")
                }
            }
        }
    }

    /// A well-formed CMS signed with an algorithm App Store receipts never use is
    /// unsupported_algorithm, not malformed: here the SignerInfo's rsaEncryption becomes
    /// RSASSA-PSS with its parameters SEQUENCE (the same length, so nothing else moves).
    func testAnRSASSAPSSSignerInfoIsUnsupportedNotMalformed() throws {
        var bytes = Fixtures.data("fakepki/valid_rsa_sha256.der")
        let rsa: [UInt8] = [0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00]
        let pss: [UInt8] = [0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0A, 0x30, 0x00]
        let at = try XCTUnwrap((0...(bytes.count - rsa.count)).last { bytes[$0..<($0 + rsa.count)].elementsEqual(rsa) },
                               "the SignerInfo's algorithm is the last rsaEncryption in the receipt")
        bytes.replaceSubrange(at..<(at + rsa.count), with: pss)
        let c = Self.cases().first { $0.file == "valid_rsa_sha256.der" }!
        let v = try makeVerifierOrThrow(Self.config(for: c))
        for path in [CryptoPath.cached, .reference] {
            let r = try v.verify(bytes, now: c.nowMs, path: path)
            XCTAssertEqual(r.verdict, .unsupportedAlgorithm, "via \(path): \(r.judgement.reason)")
        }
    }

    func testCacheChecksValidityAgainstEachReceiptCreationDate() throws {
        let c = try XCTUnwrap(Self.cases().first { $0.file == "cache_same_chain_in_validity.der" })
        let v = try makeVerifierOrThrow(Self.config(for: c))
        XCTAssertEqual(try v.verify(Fixtures.data("fakepki/cache_same_chain_in_validity.der"), now: c.nowMs).verdict, .valid)
        XCTAssertEqual(v.cachedChainCount, 1)
        // Same certificate bytes (a cache hit), created after the leaf's notAfter.
        let later = try v.verify(Fixtures.data("fakepki/cache_same_chain_after_expiry.der"), now: 1_719_878_400_000)
        XCTAssertEqual(later.verdict, .untrustedChain)
        XCTAssertEqual(v.cachedChainCount, 1)
    }

    func testTheTrustStoreNotTheNamesDecides() throws {
        // RA-02: the same receipt is valid under the fake root and untrusted under Apple's real roots.
        let bytes = Fixtures.data("fakepki/valid_rsa_sha256.der")
        let fake = try makeVerifierOrThrow(["bundle_id": "com.example.fake", "trust": ["roots_pem": [Fixtures.fakeRootPEM], "include_apple_roots": false]])
        let apple = try makeVerifierOrThrow(["bundle_id": "com.example.fake"])
        XCTAssertEqual(try fake.verify(bytes, now: jan2030).verdict, .valid)
        XCTAssertEqual(try apple.verify(bytes, now: jan2030).verdict, .untrustedChain)
    }

    func testResultJSONHasTheShapeOfSpec52() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "com.example.fake", "trust": ["roots_pem": [Fixtures.fakeRootPEM], "include_apple_roots": false]])
        let r = try v.verify(Fixtures.data("fakepki/valid_rsa_sha1.der"), now: jan2030)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.resultJSON())) as? [String: Any])
        XCTAssertEqual(json["verdict"] as? String, "valid")
        XCTAssertNotNil(json["reason"] as? String)
        let checks = try XCTUnwrap(json["checks"] as? [String: String])
        XCTAssertEqual(checks["chain"], "ok")
        XCTAssertEqual(checks["device"], "skipped")
        let receipt = try XCTUnwrap(json["receipt"] as? [String: Any])
        XCTAssertEqual(receipt["trusted"] as? Bool, true)
        XCTAssertEqual(receipt["environment"] as? String, "Production")
        XCTAssertEqual(receipt["bundle_id"] as? String, "com.example.fake")
        XCTAssertEqual((receipt["creation_date_ms"] as? NSNumber)?.int64Value, 1_705_312_800_000)
        XCTAssertTrue(receipt["expiration_date_ms"] is NSNull)
        let signing = try XCTUnwrap(receipt["signing"] as? [String: Any])
        XCTAssertEqual(signing["digest"] as? String, "sha1")
        XCTAssertEqual((signing["chain"] as? [Any])?.count, 3)
        let inApp = try XCTUnwrap(receipt["in_app"] as? [[String: Any]])
        XCTAssertEqual(inApp.count, 2)
        XCTAssertTrue(inApp[0]["transaction_id"] is String)
        XCTAssertTrue(inApp[0]["expires_date_ms"] is NSNull)
        XCTAssertEqual(inApp[0]["is_trial_period"] as? Bool, false)
        XCTAssertNotNil(json["entitlements"] as? [Any])
        XCTAssertNotNil(json["purchases"] as? [Any])
        XCTAssertNotNil(json["delivery"] as? [String: Any])

        let bad = try v.verify(Fixtures.data("fakepki/bundle_mismatch.der"), now: jan2030)
        let badJSON = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(bad.resultJSON())) as? [String: Any])
        XCTAssertEqual((badJSON["receipt"] as? [String: Any])?["trusted"] as? Bool, false)
    }
}
