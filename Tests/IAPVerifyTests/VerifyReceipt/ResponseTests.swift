// Interpretation of the 14 real /verifyReceipt bodies, the RevenueCat receipt/response pair, and a
// table of status, action and back-off rules.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

func interpret(_ v: Verifier, _ body: [UInt8], now: Int64, _ opts: [String: Any] = [:]) throws -> ResponseReport {
    let o = try options(opts, as: ResponseOptions.self)
    return try body.withUnsafeBytes { raw throws(IAPVFailure) in try v.interpretResponse(raw, options: o, nowMs: now) }
}

func interpret(_ v: Verifier, json: Any, now: Int64, _ opts: [String: Any] = [:]) throws -> ResponseReport {
    try interpret(v, [UInt8](try JSONSerialization.data(withJSONObject: json)), now: now, opts)
}

final class RealResponseTests: XCTestCase {
    struct Expect {
        let file: String
        let status: Int64?
        let action: NextAction
        let verdict: Verdict
        let transactions: Int
        let renewals: Int
    }

    /// Facts read off each body by hand (see fixtures/MANIFEST.md, "verifyreceipt/").
    static let expectations: [Expect] = [
        Expect(file: "alexalok_Invalid_Account_Deleted_Not_Retryable.json", status: 21010, action: .reject, verdict: .rejectedByApple, transactions: 0, renewals: 0),
        Expect(file: "alexalok_Invalid_Bad_App_Password.json", status: 21004, action: .fixConfiguration, verdict: .configurationError, transactions: 0, renewals: 0),
        Expect(file: "alexalok_Invalid_Malformed_Receipt_Data.json", status: 21002, action: .retryLater, verdict: .temporarilyUnavailable, transactions: 0, renewals: 0),
        Expect(file: "alexalok_Invalid_Receipt_Is_From_Production_Environment.json", status: 21008, action: .reject, verdict: .wrongEnvironment, transactions: 0, renewals: 0),
        Expect(file: "alexalok_Invalid_Receipt_Is_From_Test_Environment.json", status: 21007, action: .retrySandbox, verdict: .wrongEnvironment, transactions: 0, renewals: 0),
        Expect(file: "alexalok_Valid_Production_Excluding_Old_Subscriptions.json", status: 0, action: .accept, verdict: .valid, transactions: 2, renewals: 1),
        Expect(file: "alexalok_Valid_Production_Family_Shared.json", status: 0, action: .accept, verdict: .valid, transactions: 2, renewals: 2),
        Expect(file: "alexalok_Valid_Production_Null_Download_Id.json", status: 0, action: .accept, verdict: .valid, transactions: 3, renewals: 1),
        Expect(file: "alexalok_Valid_Sandbox_Consumable_And_Active_Subscription_Excluding_Old_Transactions.json", status: 0, action: .accept, verdict: .valid, transactions: 8, renewals: 1),
        Expect(file: "imdhemy_status0_42inapp_anonymized.json", status: 0, action: .accept, verdict: .valid, transactions: 43, renewals: 1),
        Expect(file: "imdhemy_v1_notification_DID_CHANGE_RENEWAL_STATUS.json", status: nil, action: .reject, verdict: .malformed, transactions: 0, renewals: 0),
        Expect(file: "revenuecat_sandbox_status0_2020-07-22_paired.json", status: 0, action: .accept, verdict: .valid, transactions: 9, renewals: 1),
        Expect(file: "venice_ios6style_status21006_expired.json", status: 21006, action: .accept, verdict: .valid, transactions: 1, renewals: 1),
        Expect(file: "venice_status0_not_expired_edited.json", status: 0, action: .accept, verdict: .valid, transactions: 1, renewals: 1),
    ]

    func testEachRealResponse() throws {
        XCTAssertEqual(Fixtures.list("verifyreceipt", suffix: ".json").count, 14)
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox"]])
        for e in Self.expectations {
            let r = try interpret(v, Fixtures.data("verifyreceipt/\(e.file)"), now: 1_595_500_000_000, ["environment": "Production", "attempt": 1])
            XCTAssertEqual(r.status, e.status, e.file)
            XCTAssertEqual(r.action, e.action, e.file)
            XCTAssertEqual(r.verdict, e.verdict, "\(e.file): \(r.judgement.reason)")
            XCTAssertEqual(r.transactions.count, e.transactions, e.file)
            XCTAssertEqual(r.renewals.count, e.renewals, e.file)
            XCTAssertEqual(r.trusted, e.verdict == .valid, e.file)
            let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.resultJSON())) as? [String: Any], e.file)
            XCTAssertEqual(json["action"] as? String, e.action.rawValue)
        }
    }

    func testFamilySharedResponseSaysSo() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "com.myapp.app"])
        let r = try interpret(v, Fixtures.data("verifyreceipt/alexalok_Valid_Production_Family_Shared.json"), now: 1_595_500_000_000)
        XCTAssertEqual(r.verdict, .valid)
        XCTAssertTrue(r.transactions.contains { $0.ownershipType == "FAMILY_SHARED" })
        // Bundle checks apply to responses too: the receipt inside is for com.myapp.app.
        let other = try makeVerifierOrThrow(["bundle_id": "com.phonetracker.findus"])
        XCTAssertEqual(try interpret(other, Fixtures.data("verifyreceipt/alexalok_Valid_Production_Family_Shared.json"), now: 0).verdict, .bundleMismatch)
    }

    func testIOS6StyleExpiredSubscriptionComesOutExpired() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "com.foo.bar"])
        let r = try interpret(v, Fixtures.data("verifyreceipt/venice_ios6style_status21006_expired.json"), now: 1_600_000_000_000)
        XCTAssertEqual(r.verdict, .valid)
        XCTAssertEqual(r.action, .accept)
        XCTAssertEqual(r.receipt?.style, .ios6)
        let e = try XCTUnwrap(r.entitlements?.entitlement("com.foo.product1"))
        XCTAssertFalse(e.active)
        XCTAssertEqual(e.state, .expired)
        XCTAssertEqual(e.expiresDateMs, 1_550_386_188_000)
        XCTAssertEqual(e.expirationReason, "voluntary")
        XCTAssertEqual(e.willRenew, false)
        XCTAssertEqual(e.period, .trial)
    }

    /// The locally verified receipt and Apple's answer for it must tell the same story.
    func testRevenueCatReceiptAndResponseAgree() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "com.revenuecat.sampleapp", "environments": ["Sandbox"]])
        let body = Fixtures.data("verifyreceipt/revenuecat_sandbox_status0_2020-07-22_paired.json")
        let receipt = Fixtures.data("receipts/sandbox_2020-07-22_com.revenuecat.sampleapp.der")
        for now: Int64 in [1_594_755_500_000, 1_595_440_000_000, 1_595_443_146_000, jan2030] {
            let response = try interpret(v, body, now: now, ["environment": "Sandbox"])
            let local = try v.verify(receipt, now: now)
            XCTAssertEqual(response.verdict, .valid)
            XCTAssertEqual(local.verdict, .valid)
            let localTxns = (local.payload?.inApp ?? []).compactMap(Transaction.init)
            XCTAssertEqual(localTxns.count, 9)
            func key(_ t: Transaction) -> String {
                "\(t.transactionID)|\(t.originalTransactionID ?? "")|\(t.productID)|\(t.purchaseDateMs ?? 0)|\(t.originalPurchaseDateMs ?? 0)|\(t.expiresDateMs ?? 0)|\(t.webOrderLineItemID ?? "")|\(t.isTrialPeriod)|\(t.isInIntroOfferPeriod)"
            }
            XCTAssertEqual(Set(localTxns.map(key)), Set(response.transactions.map(key)))
            let a = try XCTUnwrap(local.entitlements), b = try XCTUnwrap(response.entitlements)
            func strip(_ r: EntitlementReport) -> [String] {
                r.entitlements.map { "\($0.id) \($0.active) \($0.state) \($0.transactionID ?? "") \($0.expiresDateMs ?? 0) \($0.period?.rawValue ?? "")" }
            }
            XCTAssertEqual(strip(a), strip(b), "at \(now)")
            XCTAssertEqual(a.purchases, b.purchases)
        }
    }
}

final class ResponseRuleTests: XCTestCase {
    let both = try! makeVerifierOrThrow(["bundle_id": "com.example.app", "environments": ["Production", "Sandbox"]])
    let prodOnly = try! makeVerifierOrThrow(["bundle_id": "com.example.app"])

    func testWrongEnvironmentNeverLoops() throws {
        XCTAssertEqual(try interpret(both, json: ["status": 21007], now: 0, ["environment": "Production"]).action, .retrySandbox)
        XCTAssertEqual(try interpret(prodOnly, json: ["status": 21007], now: 0, ["environment": "Production"]).action, .reject)
        XCTAssertEqual(try interpret(both, json: ["status": 21007], now: 0, ["environment": "Sandbox"]).action, .reject)
        XCTAssertEqual(try interpret(both, json: ["status": 21008], now: 0, ["environment": "Sandbox"]).action, .retryProduction)
        XCTAssertEqual(try interpret(both, json: ["status": 21008], now: 0, ["environment": "Production"]).action, .reject)
        XCTAssertEqual(try interpret(both, json: ["status": 21007], now: 0).verdict, .wrongEnvironment)
    }

    /// Release 0.1 named the host `endpoint` and wrote it in lowercase: both still work for one
    /// release, and the result says what to write instead.
    func testOldSpellingsOfTheHostWorkAndSaySo() throws {
        for old: [String: Any] in [["endpoint": "sandbox"], ["endpoint": "Sandbox"], ["environment": "sandbox"]] {
            let r = try interpret(both, json: ["status": 21007], now: 0, old)
            XCTAssertEqual(r.action, .reject, "\(old): the sandbox host answered")
            XCTAssertEqual(r.deprecations.count, 1, "\(old)")
            let json = resultDict(r.resultJSON())
            XCTAssertEqual((json["deprecations"] as? [String])?.count, 1, "\(old)")
        }
        let now = try interpret(both, json: ["status": 21007], now: 0, ["environment": "Sandbox"])
        XCTAssertEqual(now.deprecations, [])
        XCTAssertEqual(resultDict(now.resultJSON())["deprecations"] as? [String], [])
        XCTAssertThrowsError(try interpret(both, json: ["status": 21007], now: 0, ["environment": "staging"]))
    }

    /// Each entry point reads only its own keys, and says which entry points read a key it refuses.
    func testAKeyForAnotherEntryPointIsRefusedByName() throws {
        let bad = Array(#"{"device_id":"5B6E1A2C-0000-4000-8000-000000000001"}"#.utf8)
        XCTAssertThrowsError(try bad.withUnsafeBytes { raw throws(IAPVFailure) in try both.options(json: raw, as: ResponseOptions.self) }) {
            let message = ($0 as? IAPVFailure)?.message ?? ""
            XCTAssertTrue(message.contains("does not apply to iapv_interpret_response") && message.contains("iapv_verify_receipt"), message)
        }
        XCTAssertNoThrow(try bad.withUnsafeBytes { raw throws(IAPVFailure) in try both.options(json: raw, as: ReceiptOptions.self) })
    }

    func testBackoffUpToGiveUp() throws {
        let expected: [(Int64, NextAction, Int64?)] = [(1, .retryLater, 1000), (2, .retryLater, 2000), (3, .retryLater, 4000),
                                                             (4, .retryLater, 8000), (5, .giveUp, nil), (9, .giveUp, nil)]
        for status in [21002, 21005, 21009, 21100, 21199] {
            for (attempt, action, after) in expected {
                let r = try interpret(both, json: ["status": status], now: 0, ["attempt": attempt])
                XCTAssertEqual(r.action, action, "\(status) attempt \(attempt)")
                XCTAssertEqual(r.retryAfterMs, after, "\(status) attempt \(attempt)")
                XCTAssertEqual(r.verdict, .temporarilyUnavailable)
            }
        }
    }

    func testRetryFlagInBothSpellingsAndTypes() throws {
        XCTAssertEqual(try interpret(both, json: ["status": 21100, "is-retryable": false], now: 0).action, .reject)
        XCTAssertEqual(try interpret(both, json: ["status": 21100, "is-retryable": false], now: 0).verdict, .rejectedByApple)
        XCTAssertEqual(try interpret(both, json: ["status": 21100, "is_retryable": "false"], now: 0).action, .reject)
        XCTAssertEqual(try interpret(both, json: ["status": 21100, "is_retryable": true], now: 0).action, .retryLater)
        XCTAssertEqual(try interpret(both, json: ["status": 21199, "is-retryable": 1], now: 0).action, .retryLater)
    }

    func testOtherStatuses() throws {
        XCTAssertEqual(try interpret(both, json: ["status": 21004], now: 0).action, .fixConfiguration)
        XCTAssertEqual(try interpret(both, json: ["status": 21004], now: 0).verdict, .configurationError)
        for s in [21000, 21003, 21010, 21200, 1, -1] {
            let r = try interpret(both, json: ["status": s], now: 0)
            XCTAssertEqual(r.action, .reject, "\(s)")
            XCTAssertEqual(r.verdict, .rejectedByApple, "\(s)")
        }
    }

    func testAStatusZeroBodyMustStillPassTheReceiptChecks() throws {
        XCTAssertEqual(try interpret(both, json: ["status": 0], now: 0).verdict, .malformed)
        XCTAssertEqual(try interpret(both, json: ["status": 0], now: 0).action, .reject)
        XCTAssertEqual(try interpret(both, json: ["status": 0, "receipt": ["bundle_id": "com.other"]], now: 0).verdict, .bundleMismatch)
        XCTAssertEqual(try interpret(prodOnly, json: ["status": 0, "environment": "Sandbox", "receipt": ["bundle_id": "com.example.app"]], now: 0).verdict, .environmentRejected)
        XCTAssertEqual(try interpret(prodOnly, json: ["status": 0, "receipt": ["bundle_id": "com.example.app", "receipt_type": "ProductionSandbox"]], now: 0).verdict, .environmentRejected)
        // No environment or receipt_type: the endpoint decides.
        XCTAssertEqual(try interpret(prodOnly, json: ["status": 0, "receipt": ["bundle_id": "com.example.app"]], now: 0, ["environment": "Sandbox"]).verdict, .environmentRejected)
        XCTAssertEqual(try interpret(prodOnly, json: ["status": "0", "receipt": ["bundle_id": "com.example.app"]], now: 0).verdict, .valid)
        XCTAssertEqual(try interpret(both, json: ["status": 0, "environment": "Staging", "receipt": ["bundle_id": "com.example.app"]], now: 0).verdict, .environmentRejected)
        // A fake server's favourite: status 0 and nothing else grants nothing.
        let fake = try interpret(both, json: ["status": 0, "receipt": ["bundle_id": "com.example.app"]], now: 0)
        XCTAssertEqual(fake.verdict, .valid)
        XCTAssertEqual(fake.entitlements?.entitlements.count, 0)
    }

    func testMalformedBodies() throws {
        for body in ["", "not json", "[]", "{\"status\":\"zero\"}", "{\"status\":0,\"receipt\":[]}", "{\"status\":0,\"status\":1}",
                     "{\"status\":0,\"receipt\":{\"bundle_id\":\"com.example.app\",\"in_app\":[{\"product_id\":\"p\"}]}}",
                     "{\"status\":0,\"receipt\":{\"bundle_id\":\"com.example.app\",\"in_app\":[{\"product_id\":\"p\",\"transaction_id\":\"1\",\"purchase_date_ms\":\"soon\"}]}}"] {
            let r = try interpret(both, Array(body.utf8), now: 0)
            XCTAssertEqual(r.verdict, .malformed, body)
            XCTAssertEqual(r.action, .reject, body)
            XCTAssertFalse(r.judgement.reason.isEmpty)
        }
    }

    func testUnionOfInAppAndLatestInfoWithLatestWinning() throws {
        let body: [String: Any] = [
            "status": 0, "environment": "Production",
            "receipt": ["bundle_id": "com.example.app", "in_app": [
                ["transaction_id": "1", "original_transaction_id": "1", "product_id": "sub", "purchase_date_ms": "1000", "expires_date_ms": "5000"],
                ["transaction_id": "2", "original_transaction_id": "1", "product_id": "sub", "purchase_date_ms": "5000", "expires_date_ms": "9000"],
            ]],
            // As an object (iOS 6 habit) and with a refund the receipt did not know about yet.
            "latest_receipt_info": ["transaction_id": "2", "original_transaction_id": "1", "product_id": "sub", "purchase_date_ms": 5000,
                                    "expires_date_ms": 9000, "cancellation_date_ms": "6000", "cancellation_reason": "1"],
            "latest_receipt": "MIIT...",
        ]
        let r = try interpret(both, json: body, now: 7000)
        XCTAssertEqual(r.verdict, .valid)
        XCTAssertEqual(r.transactions.count, 2)
        XCTAssertEqual(r.receipt?.latestReceiptPresent, true)
        let e = try XCTUnwrap(r.entitlements?.entitlement("sub"))
        XCTAssertEqual(e.state, .refunded)
        XCTAssertEqual(e.cancellationReason, "1")
        XCTAssertFalse(e.active)
    }

    func testFormattedDatesWhenMillisecondsAreMissing() throws {
        let body: [String: Any] = ["status": 0, "receipt": ["bundle_id": "com.example.app", "in_app": [
            ["transaction_id": "1", "product_id": "sub", "purchase_date": "2020-11-25 08:26:02 Etc/GMT", "expires_date": "2020-11-25 08:31:02 Etc/GMT",
             "is_trial_period": "true"]]]]
        let r = try interpret(both, json: body, now: 0)
        XCTAssertEqual(r.transactions.first?.purchaseDateMs, 1_606_292_762_000)
        XCTAssertEqual(r.transactions.first?.expiresDateMs, 1_606_293_062_000)
        XCTAssertEqual(r.transactions.first?.isTrialPeriod, true)
    }

    func testTooLargeIsAStatus() throws {
        let small = try makeVerifierOrThrow(["bundle_id": "*", "max_input_bytes": 10])
        XCTAssertThrowsError(try interpret(small, json: ["status": 0, "receipt": [:]], now: 0)) {
            XCTAssertEqual(($0 as? IAPVFailure)?.status, .tooLarge)
        }
    }
}

/// latest_receipt (a base64 copy of the receipt, often most of a body) is never decoded: only
/// whether it is there is reported.
final class LatestReceiptTests: XCTestCase {
    func testABodyInterpretsAlikeWithAndWithoutLatestReceipt() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox"]])
        for file in Fixtures.list("verifyreceipt", suffix: ".json") {
            let body = Fixtures.data("verifyreceipt/\(file)")
            let withReceipt = try interpret(v, body, now: 1_595_500_000_000)
            var stripped = (try JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
            let had = stripped.removeValue(forKey: "latest_receipt") != nil
            let without = try interpret(v, json: stripped, now: 1_595_500_000_000)
            XCTAssertEqual(withReceipt.verdict, without.verdict, file)
            XCTAssertEqual(withReceipt.transactions, without.transactions, file)
            XCTAssertEqual(withReceipt.receipt?.latestReceiptPresent ?? false, had && withReceipt.receipt != nil, file)
        }
    }
}

/// Numbers Apple sends as text are read from the bytes; the reading must be Int64(String)'s.
final class DecimalTextTests: XCTestCase {
    func testReadsWhatInt64OfStringReads() {
        let samples = ["", "+", "-", "0", "-0", "+0", "+5", "-5", "00012", "1600000000000", "9223372036854775807",
                       "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "99999999999999999999",
                       " 1", "1 ", "0x10", "1e3", "1.0", "--1", "+-1", "١٢", "12a", "a12",
                       // Around the edge of 64 bits, with and without leading zeros.
                       "999999999999999999", "-999999999999999999", "+999999999999999999", "99999999999999999a",
                       "1000000000000000000", "-1000000000000000000", "0000000000000000001", "-0000000000000000009",
                       "000000000000000000000000000042", "-922337203685477580", "9223372036854775806"]
        for s in samples {
            let bytes = Array(s.utf8)
            let ours = bytes.withUnsafeBufferPointer { Int64(decimal: $0) }
            XCTAssertEqual(ours, Int64(s), "\"\(s)\"")
        }
    }
    func testEveryByteAtEveryPositionOfEveryLength() {
        // Eight digits are read at a time: a byte that is not a digit must be refused wherever it
        // falls in a word or the tail, including bytes a carry could hide (0xFA...0xFF, ':' and '/').
        for length in 1...20 {
            let digits = (0..<length).map { UInt8(ascii: "0") + UInt8(($0 * 7 + 3) % 10) }
            XCTAssertEqual(digits.withUnsafeBufferPointer { Int64(decimal: $0) }, Int64(String(decoding: digits, as: UTF8.self)))
            for position in 0..<length {
                for byte in 0...255 {
                    var bytes = digits
                    bytes[position] = UInt8(byte)
                    let ours = bytes.withUnsafeBufferPointer { Int64(decimal: $0) }
                    let theirs = String(validating: bytes, as: UTF8.self).flatMap { Int64($0) }
                    XCTAssertEqual(ours, theirs, "byte \(byte) at \(position) of \(length)")
                }
            }
        }
    }
}

/// The union of in_app and latest_receipt_info reads only the record each id ends with and checks
/// the rest: it must give what reading every record and keeping the last one per id gives, the
/// same first error included, whatever the lists hold.
final class TransactionUnionTests: XCTestCase {
    /// The plain rule, written out: read every record in order, key by the decoded id.
    private func everyRecordRead(_ lists: [(value: JSONValue?, path: String)]) -> Result<[Transaction], FieldProblem> {
        do throws(FieldProblem) {
            var slot: [String: Int] = [:]
            var out: [Transaction] = []
            for list in lists {
                for t in try TransactionJSON.transactions(list.value, path: list.path) {
                    if let i = slot[t.transactionID] { out[i] = t } else { slot[t.transactionID] = out.count; out.append(t) }
                }
            }
            return .success(out)
        } catch {
            return .failure(error)
        }
    }

    private func check(_ inApp: Any?, _ latest: Any?, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        var body: [String: Any] = [:]
        if let inApp { body["in_app"] = inApp }
        if let latest { body["latest"] = latest }
        try check(body: [UInt8](try JSONSerialization.data(withJSONObject: body)), label, file: file, line: line)
    }

    /// The union of a body's `in_app` and `latest` against reading every record.
    private func check(body bytes: [UInt8], _ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let doc = try bytes.withUnsafeBytes { try JSONDocument(bytes: $0, what: "test", status: .invalidArgument) }
        let lists: [(value: JSONValue?, path: String)] = [(doc.root["in_app"], "receipt.in_app"), (doc.root["latest"], "latest_receipt_info")]
        let expected = everyRecordRead(lists)
        let got: Result<[Transaction], FieldProblem>
        do throws(FieldProblem) { got = .success(try TransactionUnion.of(lists)) } catch { got = .failure(error) }
        switch (expected, got) {
        case (.success(let a), .success(let b)): XCTAssertEqual(a, b, label, file: file, line: line)
        case (.failure(let a), .failure(let b)): XCTAssertEqual(a.message, b.message, label, file: file, line: line)
        default: XCTFail("\(label): expected \(expected), got \(got)", file: file, line: line)
        }
    }

    private func record(_ id: Any, _ product: String = "p", expires: Any = "5000", extra: [String: Any] = [:]) -> [String: Any] {
        var r: [String: Any] = ["transaction_id": id, "original_transaction_id": "1", "product_id": product,
                                "purchase_date_ms": "1000", "expires_date_ms": expires, "quantity": "1"]
        for (k, v) in extra { r[k] = v }
        return r
    }

    func testHandPickedShapes() throws {
        let a = record("1"), b = record("2", expires: "9000"), b2 = record("2", expires: "12000")
        try check([a, b], [b2], "latest replaces in_app")
        try check([a, b, b2], nil, "a repeat inside in_app")
        try check(nil, [b2, a, b], "a repeat inside latest, first position kept")
        try check([a, record("2", expires: "soon")], [b2], "a replaced record that is broken still fails")
        try check([a, record("2", extra: ["quantity": [1]])], [b2], "a replaced record with a wrong type")
        try check([a, b], [record("2", expires: "soon")], "the winning record is broken")
        try check([a, ["product_id": "p"]], [b2], "an id missing")
        try check([a, record("")], [b2], "an empty id")
        try check([a, record(2)], [b2], "a number and the same id as text")
        try check([record("e\u{301}")], [record("\u{e9}", expires: "7000")], "canonically equal ids")
        try check([a, "x"], [b2], "a record that is not an object")
        try check(a, [b2], "in_app as one object")
        try check([a], "x", "latest not an array")
        try check([], [], "both empty")
        try check(NSNull(), [b2], "null in_app")
        // Rows written only when present (the commerce fields), flat and nested, kept and replaced.
        try check([record("3", extra: ["signed_date_ms": "7", "revocation_type": "REFUND_FULL"])], [a], "commerce fields kept")
        try check([a], [record("1", extra: ["commitment": ["billing_period_number": 2]])], "a nested commerce field")
        try check([record("1", extra: ["price": NSNull(), "currency": ""])], [b], "commerce members null or empty")
        try check([record("1", extra: ["commitment": "x"])], [b], "a nested object that is not one")
        // Ids past the inline edge (23 bytes) or not ASCII: the plain rule decides.
        let long = String(repeating: "7", count: 24)
        try check([record(long), a], [record(long, expires: "8000")], "an id of 24 bytes")
        try check([record(String(repeating: "7", count: 23)), a], [record(String(repeating: "7", count: 23), expires: "8000")], "an id of 23 bytes")
        try check([record("\u{212A}1"), a], [record("K1", expires: "8000")], "a Kelvin sign")
        // A failure after positions were built, then one on the first record of many.
        try check([a, b, record("3"), record("4")], [record("4", expires: "x"), b2], "the last record fails after three were built")
        try check([record("1", expires: "x"), b, record("3")], [b2], "the first record fails")
    }

    /// A replaced record that is its replacement byte for byte is left to it, and checked only if
    /// something fails: the first error must still be the one reading every record gives.
    func testARecordRepeatedAsItIsFailsWhereItsReplacementFails() throws {
        func rec(_ id: String, expires: String) -> String {
            #"{"transaction_id":"\#(id)","original_transaction_id":"1","product_id":"p","purchase_date_ms":"1000","expires_date_ms":"\#(expires)","quantity":"1"}"#
        }
        let good = rec("1", expires: "5000"), bad = rec("1", expires: "soon")
        let other = rec("2", expires: "6000"), otherBad = rec("2", expires: "later")
        let cases: [(inApp: [String], latest: [String], label: String)] = [
            ([good], [good], "repeated, both fine"),
            ([bad], [bad], "repeated, both broken: in_app's error"),
            ([bad], [otherBad, bad], "a later record fails before the repeat is read: in_app's error"),
            ([good], [otherBad, good], "a later record fails, the repeat is fine: that record's error"),
            ([bad, other], [other, bad], "two repeats, the first broken"),
            ([good, otherBad], [otherBad, good], "two repeats, the second broken"),
            ([good, other], [rec("1", expires: "5001"), other], "a repeat that differs in one digit is checked as it comes"),
            ([bad], [rec("1", expires: "soon2")], "a broken repeat that differs: its own check"),
        ]
        for c in cases {
            let body = #"{"in_app":[\#(c.inApp.joined(separator: ","))],"latest":[\#(c.latest.joined(separator: ","))]}"#
            try check(body: Array(body.utf8), c.label)
        }
        // The comparison itself: the same JSON wherever it is, and nothing else.
        let doc = try Array(#"{"a":[{"x":"1","y":[1,2.5,true,null]},{"x":"1","y":[1,2.5,true,null]},{"x":"1","y":[1,2.5,false,null]},{"x":"1","y":[1,2.5,true]},{"x":"10","y":[1,2.5,true,null]},{"y":[1,2.5,true,null],"x":"1"}]}"#.utf8)
            .withUnsafeBytes { try JSONDocument(bytes: $0, what: "test", status: .invalidArgument) }
        let items = try XCTUnwrap(doc.root["a"]?.array)
        XCTAssertTrue(items[0].sameJSON(as: items[1]))
        for k in 2..<items.count { XCTAssertFalse(items[0].sameJSON(as: items[k]), "item \(k)") }
    }

    func testCommerceFieldsOfASnakeRecordAreKept() throws {
        let body: [String: Any] = ["list": [record("3", extra: ["signed_date_ms": "7", "revocation_type": "REFUND_FULL"]),
                                            record("4", extra: ["commitment": ["billing_period_number": 2]]), record("5")]]
        let bytes = [UInt8](try JSONSerialization.data(withJSONObject: body))
        let doc = try bytes.withUnsafeBytes { try JSONDocument(bytes: $0, what: "test", status: .invalidArgument) }
        let got = try TransactionUnion.of([(doc.root["list"], "list")])
        XCTAssertEqual(got.map(\.commerce.signedDateMs), [7, nil, nil])
        XCTAssertEqual(got.map(\.commerce.revocationType), ["REFUND_FULL", nil, nil])
        XCTAssertEqual(got.map(\.commerce.commitmentBillingPeriodNumber), [nil, 2, nil])
        XCTAssertEqual(got.map(\.hasCommerce), [true, true, false])
    }

    func testGeneratedLists() throws {
        var seed: UInt64 = 0x2545F4914F6CDD1D
        func next(_ n: Int) -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int((seed >> 33) % UInt64(n))
        }
        let breakers: [[String: Any]] = [["expires_date_ms": "x"], ["is_upgraded": "maybe"], ["product_id": 1.5], ["quantity": true],
                                         ["cancellation_reason": [String]()], ["purchase_date": "yesterday", "purchase_date_ms": NSNull()]]
        for round in 0..<300 {
            // Every fourth round past sixteen records a body: the id table, not pairwise compares.
            let most = round % 4 == 0 ? 30 : 6
            func list() -> [Any] {
                (0..<(most == 30 ? 9 + next(most - 9) : next(most))).map { _ in
                    var extra: [String: Any] = [:]
                    if next(12) == 0 { extra = breakers[next(breakers.count)] }
                    let id: Any = next(15) == 0 ? next(4) : "\(1000 + next(most == 30 ? 40 : 5))"
                    return record(id, "p\(next(3))", expires: "\(next(9000))", extra: extra)
                }
            }
            try check(list(), list(), "round \(round)")
        }
    }
}

/// The strict body parser's own rules (what simdjson leaves to its caller): a key twice in one
/// object, and a NUL character, escaped or raw, are refused wherever they are.
final class StrictBodyTests: XCTestCase {
    private func parses(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { (try? JSONDocument(bytes: $0, what: "test", status: .invalidArgument)) != nil }
    }

    func testADuplicateKeyIsFoundInObjectsOfEverySize() {
        // Keys of one length with the same first and last character share the cheap signature the
        // check starts with, so the full comparison is exercised too.
        for count in 1...40 {
            let keys = (0..<count).map { "k\(String(format: "%02d", $0))z" }
            let distinct = "{" + keys.map { "\"\($0)\":1" }.joined(separator: ",") + "}"
            XCTAssertTrue(parses(distinct), "\(count) distinct keys")
            for at in [0, count / 2, count - 1] where count > 1 {
                let repeated = "{" + (keys + [keys[at]]).map { "\"\($0)\":1" }.joined(separator: ",") + "}"
                XCTAssertFalse(parses(repeated), "\(count) keys, key \(at) repeated at the end")
                XCTAssertFalse(parses("{\"outer\":[" + repeated + "]}"), "nested, \(count) keys")
                var inside = keys
                inside.insert(keys[at], at: (at + count) / 2 + 1)
                XCTAssertFalse(parses("{" + inside.map { "\"\($0)\":1" }.joined(separator: ",") + "}"),
                               "\(count) keys, key \(at) repeated inside")
            }
        }
        XCTAssertFalse(parses(#"{"":1,"":2}"#))
        XCTAssertTrue(parses(#"{"":1,"a":2}"#))
    }

    func testANulIsRefusedEscapedOrRaw() {
        XCTAssertTrue(parses(#"{"a":"b\/c","d":"\u0001"}"#))
        XCTAssertFalse(parses(#"{"a":"b\u0000c"}"#))
        XCTAssertFalse(parses(#"{"a\u0000":"b"}"#))
        XCTAssertFalse(parses("{\"a\":\"b\u{0}c\"}"))
        XCTAssertTrue(parses(#"{"a":"\\u0000"}"#))   // an escaped backslash, then the text u0000
    }
}
