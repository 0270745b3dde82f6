// Revocation without I/O: the OCSP request and responder of a verified leaf, and the responses a
// host passes back: good, delegated, revoked, unknown, stale, for another certificate, forged, and
// an unsuccessful answer; `off` and `required`.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class RevocationTests: XCTestCase {
    static let dir = FakeApple.dir.appendingPathComponent("ocsp")
    static let now: Int64 = 1_767_229_200_000  // 2026-01-01T01:00:00Z, an hour after the responses

    static func bytes(_ name: String) -> [UInt8] { (try? [UInt8](Data(contentsOf: dir.appendingPathComponent(name)))) ?? [] }
    static func text(_ name: String) -> String { String(decoding: bytes(name), as: UTF8.self) }

    private func verifier(_ policy: String) throws -> Verifier {
        try XCTUnwrap(makeVerifier(["bundle_id": FakeApple.bundle, "revocation": policy,
                                    "trust": ["include_apple_roots": false, "roots_pem": [Self.text("root.pem")]]]))
    }

    private func verify(_ policy: String, _ responses: [String], now: Int64 = RevocationTests.now) throws -> JWSReport {
        var options = JWSOptions()
        options.ocspResponses = responses.map { Self.bytes($0) }
        let token = Self.text("transaction.jws").trimmingCharacters(in: .whitespacesAndNewlines)
        return try verifier(policy).verifyJWS(Array(token.utf8), options: options, nowMs: now)
    }

    func testTheLeafsRequestAndResponder() throws {
        let r = try verify("off", [])
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        XCTAssertEqual(r.revocation?.status, .unchecked)
        XCTAssertEqual(r.revocation?.responderURL, "http://127.0.0.1:39217/ocsp")
        let der = try XCTUnwrap(Base64.decode(Array(try XCTUnwrap(r.revocation?.request).utf8)))
        XCTAssertEqual(der.first, 0x30, "a DER OCSPRequest")
        let doc = resultDict(r.resultJSON())
        let rev = try XCTUnwrap(doc["revocation"] as? [String: Any])
        XCTAssertEqual(rev["status"] as? String, "unchecked")
        XCTAssertEqual(rev["responder_url"] as? String, "http://127.0.0.1:39217/ocsp")
    }

    func testResponses() throws {
        let cases: [(String, [String], Verdict, String, String)] = [
            ("off", ["good.der"], .valid, "good", "good"),
            ("required", ["good.der"], .valid, "good", "good"),
            ("required", ["delegated_good.der"], .valid, "good", "good"),
            ("off", ["revoked.der"], .revoked, "revoked", "revoked"),
            ("required", ["revoked.der"], .revoked, "revoked", "revoked"),
            ("required", [], .revocationUnknown, "unchecked", "POST revocation.request to http://127.0.0.1:39217/ocsp"),
            ("off", ["unknown.der"], .valid, "unknown", "does not know"),
            ("required", ["unknown.der"], .revocationUnknown, "unknown", "does not know"),
            ("required", ["stale.der"], .revocationUnknown, "unknown", "stale"),
            ("required", ["other_certificate.der"], .revocationUnknown, "unknown", "another certificate"),
            ("off", ["forged.der"], .valid, "unknown", "signature does not verify"),
            ("required", ["forged.der"], .revocationUnknown, "unknown", "signature does not verify"),
            ("required", ["unauthorized_status.der"], .revocationUnknown, "unknown", "not successful"),
            ("required", ["forged.der", "good.der"], .valid, "good", "good"),
            ("required", ["leaf.pem"], .revocationUnknown, "unknown", "not a DER OCSP response"),
        ]
        for (policy, responses, verdict, status, words) in cases {
            let r = try verify(policy, responses)
            XCTAssertEqual(r.verdict, verdict, "\(policy) \(responses): \(r.judgement.reason)")
            XCTAssertEqual(r.revocation?.status.name, status, "\(policy) \(responses)")
            let said = r.judgement.reason + " " + (r.revocation?.reason ?? "")
            XCTAssertTrue(said.contains(words), "\(policy) \(responses): \(said)")
            if verdict != .valid {
                let doc = resultDict(r.resultJSON())
                XCTAssertEqual(doc["trusted"] as? Bool, false)
                XCTAssertEqual((doc["entitlements"] as? [Any])?.count, 0, "a refused token grants nothing")
            }
        }
        // A good answer goes stale when its nextUpdate passes.
        let later = try verify("required", ["good.der"], now: Self.now + 8 * 86_400_000)
        XCTAssertEqual(later.verdict, .revocationUnknown)
        XCTAssertTrue(later.judgement.reason.contains("stale"), later.judgement.reason)
        // An answer dated after now (a responder clock ahead by more than 5 minutes) is not used.
        let early = try verify("required", ["good.der"], now: Self.now - 2 * 3_600_000)
        XCTAssertEqual(early.verdict, .revocationUnknown)
    }

    func testConfigAndOptions() throws {
        XCTAssertEqual(configError(#"{"bundle_id":"a","revocation":"sometimes"}"#)?.status, .config)
        let v = try verifier("off")
        for bad in [#"{"ocsp_responses":"x"}"#, #"{"ocsp_responses":[5]}"#, #"{"ocsp_responses":["@@"]}"#] {
            XCTAssertThrowsError(try Array(bad.utf8).withUnsafeBytes { raw throws(IAPVFailure) in try v.options(json: raw, as: JWSOptions.self) }, bad)
        }
    }

    func testRealReceiptsNameApplesResponder() throws {
        let v = try XCTUnwrap(makeVerifier(["bundle_id": "*", "environments": ["Production", "Sandbox"]]))
        let file = try XCTUnwrap(Fixtures.list("receipts").first)
        let r = try v.verifyReceipt(Fixtures.data("receipts/\(file)"), nowMs: 1_893_456_000_000)
        XCTAssertEqual(r.verdict, .valid)
        XCTAssertEqual(r.revocation?.status, .unchecked)
        XCTAssertNotNil(r.revocation?.request)
    }
}
