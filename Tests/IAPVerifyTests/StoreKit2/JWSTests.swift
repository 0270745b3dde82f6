// StoreKit 2 JWS: the 13 real Apple-signed tokens, Apple's library mocks, Xcode tokens,
// Wycheproof ES256 (P1363) vectors, a fake Apple-shaped PKI and a notification scenario.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

func verifyJWS(_ v: Verifier, _ text: String, now: Int64, _ opts: [String: Any] = [:]) throws -> JWSReport {
    let o = try options(opts, as: JWSOptions.self)
    return try Array(text.utf8).withUnsafeBytes { raw throws(IAPVFailure) in try v.verifyJWS(raw, options: o, nowMs: now) }
}

final class JWSTests: XCTestCase {
    let apple = try! makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox"]])

    func token(_ path: String) -> String {
        Fixtures.text(path).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testAll13RealJWSVerifyAtTheirSignedDate() throws {
        let files = Fixtures.list("jws", suffix: ".jws")
        XCTAssertEqual(files.count, 13)
        for file in files {
            // Without a signedDate a token is checked at now: the day after, for the early one.
            let now = file.contains("no_signedDate") ? 1_646_387_008_254 + 86_400_000 : jan2030
            let r = try verifyJWS(apple, token("jws/\(file)"), now: now)
            XCTAssertEqual(r.verdict, .valid, "\(file): \(r.judgement.reason)")
            XCTAssertEqual(r.chain.count, 3, file)
            XCTAssertEqual(r.environment, file.contains("production") ? .production : .sandbox, file)
            if file.hasPrefix("notification_") {
                XCTAssertEqual(r.kind, .notification, file)
                let n = try XCTUnwrap(r.notification, file)
                XCTAssertTrue(file.contains(n.type), "\(file): \(n.type)")
                XCTAssertEqual(n.action, n.type == "CONSUMPTION_REQUEST" ? .sendConsumptionInfo : .apply, file)
                XCTAssertNotEqual(n.effect, .unknown, "\(file): every real notification has a known effect")
                if n.type != "TEST" { XCTAssertNotNil(n.transaction, "\(file): nested transaction") }
            } else if file.hasPrefix("renewalinfo_") {
                XCTAssertEqual(r.kind, .renewalInfo, file)
                XCTAssertEqual(r.renewal?.autoRenewStatus, !file.contains("autorenew_off"), file)
            } else {
                XCTAssertEqual(r.kind, .transaction, file)
            }
        }
    }

    func testDecodedFactsOfRealTransactions() throws {
        let t = try XCTUnwrap(try verifyJWS(apple, token("jws/transaction_autorenew_sandbox_2022-11.jws"), now: jan2030).transaction)
        XCTAssertEqual(t.transactionID, "2000000191896422")
        XCTAssertEqual(t.originalTransactionID, "2000000184445477")
        XCTAssertEqual(t.productID, "Com.VoiceRecording.Telephone.103")
        XCTAssertEqual(t.purchaseDateMs, 1_667_389_704_000)
        XCTAssertEqual(t.expiresDateMs, 1_667_391_504_000)
        let r = try verifyJWS(apple, token("jws/transaction_autorenew_sandbox_2022-11.jws"), now: 1_667_390_000_000)
        XCTAssertEqual(r.appAccountToken, "e4b2c0ab-07a9-4e12-91c9-a76d7d51b72e")
        XCTAssertEqual(r.signedDateMs, 1_667_561_039_251)
        XCTAssertEqual(r.entitlements?.entitlement("Com.VoiceRecording.Telephone.103")?.state, .active)
        let renewal = try XCTUnwrap(try verifyJWS(apple, token("jws/renewalinfo_sandbox_2022-03.jws"), now: jan2030).renewal)
        XCTAssertEqual(renewal.originalTransactionID, "2000000000842607")
        XCTAssertEqual(renewal.productID, "com.audaos.audarecorder.vip.m2")
        // The early notification without a top-level signedDate is checked at now, as Apple's
        // verifier checks it (its nested transaction's date is not its own): valid the day after,
        // refused once its leaf has expired.
        let early = token("jws/notification_DID_RENEW_sandbox_2022-03_no_signedDate.jws")
        let expired = try verifyJWS(apple, early, now: jan2030)
        XCTAssertEqual(expired.verdict, .untrustedChain, expired.judgement.reason)
        let old = try verifyJWS(apple, early, now: 1_646_387_008_254 + 86_400_000)
        XCTAssertEqual(old.verdict, .valid, old.judgement.reason)
        XCTAssertNil(old.signedDateMs)
        XCTAssertEqual(old.notification?.transaction?.transactionID, "2000000004047119")
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(old.resultJSON())) as? [String: Any])
        XCTAssertEqual((json["notification"] as? [String: Any])?["notification_type"] as? String, "DID_RENEW")
        XCTAssertEqual(json["kind"] as? String, "notification")
    }

    func testMocksVerifyOnlyUnderApplesTestCA() throws {
        let testCA = Fixtures.text("jws/apple_library_mock/testCA.pem")
        let mockRoots = try makeVerifierOrThrow(["bundle_id": "com.example", "environments": ["Sandbox"],
                                                 "trust": ["roots_pem": [testCA], "include_apple_roots": false]])
        for file in ["transactionInfo", "renewalInfo", "testNotification"] {
            let r = try verifyJWS(mockRoots, token("jws/apple_library_mock/\(file).jws"), now: 1_700_000_000_000)
            if file == "renewalInfo" {
                // Only environment and signedDate: no field of a renewal info and no app named,
                // so it is a payload of an unknown kind that the app rule cannot check.
                XCTAssertEqual(r.verdict, .malformed, "\(file): \(r.judgement.reason)")
                XCTAssertEqual(r.kind, .unknown)
            } else {
                XCTAssertEqual(r.verdict, .valid, "\(file): \(r.judgement.reason)")
            }
            XCTAssertEqual(try verifyJWS(apple, token("jws/apple_library_mock/\(file).jws"), now: 1_700_000_000_000).verdict, .untrustedChain, file)
        }
        XCTAssertEqual(try verifyJWS(mockRoots, token("jws/apple_library_mock/missingX5CHeaderClaim.jws"), now: 1_700_000_000_000).verdict, .malformed)
        XCTAssertEqual(try verifyJWS(mockRoots, token("jws/apple_library_mock/legacyTransaction.jws"), now: 1_700_000_000_000).verdict, .malformed)
        let wrong = try verifyJWS(mockRoots, token("jws/apple_library_mock/wrongBundleId.jws"), now: 1_700_000_000_000)
        XCTAssertTrue([.bundleMismatch, .environmentRejected].contains(wrong.verdict), wrong.judgement.reason)
    }

    func testXcodeJWSOnlyWithXcodeAccept() throws {
        let xcodePEM = Fixtures.text("xcode/jws/StoreKitTestingInXcode_ES256_2023-10-19.pem")
        let accept = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Xcode"], "xcode": ["accept": true, "roots_pem": [xcodePEM]]])
        let reject = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Xcode"]])
        for (file, kind) in [("xcode-signed-transaction", JWSKind.transaction), ("xcode-signed-renewal-info", .renewalInfo),
                             ("xcode-signed-app-transaction", .appTransaction)] {
            let ok = try verifyJWS(accept, token("xcode/jws/\(file).jws"), now: 1_697_700_000_000)
            XCTAssertEqual(ok.verdict, .valid, "\(file): \(ok.judgement.reason)")
            XCTAssertEqual(ok.kind, kind, file)
            XCTAssertEqual(try verifyJWS(reject, token("xcode/jws/\(file).jws"), now: 1_697_700_000_000).verdict, .environmentRejected, file)
        }
        let t = try verifyJWS(accept, token("xcode/jws/xcode-signed-transaction.jws"), now: 1_697_700_000_000)
        XCTAssertEqual(t.signedDateMs, 1_697_679_936_056)  // fractional milliseconds keep their whole part
    }

    func testWycheproofP1363Vectors() throws {
        let doc = Fixtures.json("wycheproof/ecdsa_secp256r1_sha256_p1363_test.json")
        var total = 0, acceptable = 0
        for group in doc["testGroups"] as? [[String: Any]] ?? [] {
            guard let keyHex = group["publicKeyDer"] as? String, let key = ES256.publicKey(spki: hex(keyHex)) else {
                XCTFail("cannot read a test key"); continue
            }
            for test in group["tests"] as? [[String: Any]] ?? [] {
                let ok = ES256.verify(signature: hex(test["sig"] as? String ?? ""), message: hex(test["msg"] as? String ?? ""), key: key)
                total += 1
                switch test["result"] as? String {
                case "valid": XCTAssertTrue(ok, "tcId \(test["tcId"] ?? "")")
                case "invalid": XCTAssertFalse(ok, "tcId \(test["tcId"] ?? "") \(test["comment"] ?? "")")
                default: acceptable += 1  // none in this file; decided case by case if they appear
                }
            }
        }
        XCTAssertGreaterThanOrEqual(total, 250)
        XCTAssertEqual(acceptable, 0)
    }

    /// Wycheproof's JOSE vectors: every ES256 (P-256) case, and every case with another or no
    /// algorithm (alg none, algorithm confusion) must be rejected by the ES256-only rule.
    func testWycheproofJWSVectors() throws {
        let doc = Fixtures.json("wycheproof/json_web_signature_test.json")
        let groups = doc["testGroups"] as? [[String: Any]] ?? []
        func key(_ jwk: [String: Any]) -> PublicKey? {
            guard jwk["crv"] as? String == "P-256", jwk["kty"] as? String == "EC" else { return nil }
            let x = CompactJWS.base64URL(Array((jwk["x"] as? String ?? "").utf8)) ?? []
            let y = CompactJWS.base64URL(Array((jwk["y"] as? String ?? "").utf8)) ?? []
            return ES256.publicKey(spki: hex("3059301306072a8648ce3d020106082a8648ce3d030107034200") + [0x04] + x + y)
        }
        let anyES256Key = try XCTUnwrap(groups.lazy.compactMap { key($0["public"] as? [String: Any] ?? [:]) }.first)
        var es256 = 0, others = 0, jwkPolicy = 0
        for group in groups {
            let jwk = group["public"] as? [String: Any] ?? [:]
            let groupKey = key(jwk)
            // "use"/"key_ops" restrictions are JWK key-selection policy; App Store JWS never
            // take a key from a JWK (only from the validated x5c chain), so those cases are counted, not run.
            let restricted = (jwk["use"] as? String).map { $0 != "sig" } ?? false
                || (jwk["key_ops"] as? [String]).map { !$0.contains("verify") } ?? false
            for test in group["tests"] as? [[String: Any]] ?? [] {
                guard let jws = test["jws"] as? String else { continue }  // JWE and JSON-serialised cases do not apply
                if restricted { jwkPolicy += 1; continue }
                if let groupKey {
                    es256 += 1
                    XCTAssertEqual(ES256.verifyCompact(Array(jws.utf8), key: groupKey), test["result"] as? String == "valid",
                                   "tcId \(test["tcId"] ?? "") \(test["comment"] ?? "")")
                } else {
                    // Another algorithm, alg none, or algorithm confusion: never passes as ES256.
                    others += 1
                    XCTAssertFalse(ES256.verifyCompact(Array(jws.utf8), key: anyES256Key), "tcId \(test["tcId"] ?? "")")
                }
            }
        }
        XCTAssertGreaterThanOrEqual(es256, 37)
        XCTAssertGreaterThan(others, 100)
        XCTAssertLessThanOrEqual(jwkPolicy, 4)
    }

    func hex(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        var it = s.utf8.makeIterator()
        while let a = it.next(), let b = it.next() {
            func v(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : (c | 0x20) - 87 }
            out.append(v(a) << 4 | v(b))
        }
        return out
    }

    // MARK: fake Apple-shaped PKI

    func fakeVerifier() throws -> Verifier {
        try makeVerifierOrThrow(["bundle_id": "com.example.fake", "environments": ["Sandbox"],
                                 "trust": ["roots_pem": [Fixtures.text("jwsfake/root.pem")], "include_apple_roots": false],
                                 "products": ["pro.monthly": ["type": "auto_renewable", "group": "pro", "entitlements": ["pro"]],
                                              "pro.basic": ["type": "auto_renewable", "group": "pro", "entitlements": ["pro"]]]])
    }

    func testNegativeCasesGiveTheirExactVerdict() throws {
        let v = try fakeVerifier()
        let doc = Fixtures.json("jwsfake/cases.json")
        let cases = try XCTUnwrap(doc["cases"] as? [[String: Any]])
        XCTAssertGreaterThanOrEqual(cases.count, 20)
        for c in cases {
            let file = c["file"] as? String ?? ""
            let r = try verifyJWS(v, token("jwsfake/\(file)"), now: jan2030)
            XCTAssertEqual(r.verdict.rawValue, c["verdict"] as? String, "\(file) (\(c["note"] ?? "")): \(r.judgement.reason)")
        }
        // The same valid token fails against Apple's real roots: the root comes from config.
        XCTAssertEqual(try verifyJWS(apple, token("jwsfake/valid_transaction.jws"), now: jan2030).verdict, .untrustedChain)
    }

    func testNotificationScenarioInOrderAndShuffledWithTheStaleGuard() throws {
        let v = try fakeVerifier()
        let steps = try XCTUnwrap(Fixtures.json("jwsfake/cases.json")["scenario"] as? [[String: Any]])
        XCTAssertEqual(steps.count, 7)
        var inOrder: [String] = []
        for step in steps {
            let file = step["file"] as? String ?? ""
            let now = (step["now_ms"] as? NSNumber)?.int64Value ?? 0
            let r = try verifyJWS(v, token("jwsfake/\(file)"), now: now)
            XCTAssertEqual(r.verdict, .valid, "\(file): \(r.judgement.reason)")
            let e = try XCTUnwrap(r.entitlements?.entitlement("pro"), file)
            XCTAssertEqual(e.state.rawValue, step["state"] as? String, "\(file): \(e.reason)")
            XCTAssertEqual(e.renewsTo, step["renews_to"] as? String, file)
            inOrder.append(e.state.rawValue)
        }
        // Delivered out of order: the host passes its last applied signed date and the UUIDs it saw.
        let finalNow = (steps.last?["now_ms"] as? NSNumber)?.int64Value ?? 0
        for seed in 0..<5 {
            var g = SeededGenerator(seed: UInt64(seed))
            var last: Int64?
            var seen: [String] = []
            var state = "none"
            for step in (steps + [steps[2]]).shuffled(using: &g) {  // one duplicate delivery too
                var opts: [String: Any] = ["seen_notification_uuids": seen]
                if let last { opts["last_signed_date_ms"] = last }
                let r = try verifyJWS(v, token("jwsfake/\(step["file"] as? String ?? "")"), now: finalNow, opts)
                let n = try XCTUnwrap(r.notification)
                if n.action == .apply {
                    state = r.entitlements?.entitlement("pro")?.state.rawValue ?? "none"
                    last = n.signedDateMs
                    seen.append(n.uuid ?? "")
                } else {
                    XCTAssertTrue(n.action == .ignoreStale || n.action == .ignoreDuplicate)
                }
            }
            XCTAssertEqual(state, inOrder.last, "seed \(seed)")
        }
    }

    func testEachOtherNotificationType() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "com.example.fake", "environments": ["Sandbox"],
                                         "trust": ["roots_pem": [Fixtures.text("jwsfake/root.pem")], "include_apple_roots": false],
                                         "products": ["pro.monthly": ["type": "auto_renewable", "group": "pro", "entitlements": ["pro"]],
                                                      "lifetime": ["type": "non_consumable"]]])
        let singles = try XCTUnwrap(Fixtures.json("jwsfake/cases.json")["singles"] as? [[String: Any]])
        XCTAssertEqual(singles.count, 7)
        for step in singles {
            let file = step["file"] as? String ?? ""
            let r = try verifyJWS(v, token("jwsfake/\(file)"), now: (step["now_ms"] as? NSNumber)?.int64Value ?? 0)
            XCTAssertEqual(r.verdict, .valid, "\(file): \(r.judgement.reason)")
            XCTAssertEqual(r.notification?.type, step["type"] as? String)
            guard let state = step["state"] as? String else {
                XCTAssertNil(r.notification?.transaction, file)  // TEST carries no purchase
                continue
            }
            let id = step["type"] as? String == "ONE_TIME_CHARGE" ? "lifetime" : "pro"
            let e = try XCTUnwrap(r.entitlements?.entitlement(id), file)
            XCTAssertEqual(e.state.rawValue, state, "\(file): \(e.reason)")
            XCTAssertEqual(e.willRenew, step["will_renew"] as? Bool, file)
            if step["type"] as? String == "REVOKE" { XCTAssertEqual(e.ownership, .familyShared) }
        }
    }

    func testTheChainCacheServesTheSecondCall() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Sandbox"]])
        let text = token("jws/transaction_autorenew_sandbox_2022-11.jws")
        XCTAssertEqual(try verifyJWS(v, text, now: jan2030).verdict, .valid)
        let count = v.cachedChainCount
        XCTAssertEqual(try verifyJWS(v, text, now: jan2030).verdict, .valid)
        XCTAssertEqual(v.cachedChainCount, count)
    }
}
