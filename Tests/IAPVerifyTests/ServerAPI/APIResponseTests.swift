// Interpreting App Store Server API answers: the action table, Retry-After, paging, every signed
// item verified (one bad item spoils the answer), bundle and environment binding, the
// subscription-status cross-check, and answers of the wrong shape.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class APIResponseTests: XCTestCase {
    private func interpret(_ body: [UInt8], _ options: APIResponseOptions, verifier: Verifier? = nil,
                           now: Int64 = FakeApple.now) throws -> APIResponseReport {
        let v = try XCTUnwrap(verifier ?? FakeApple.verifier())
        return try v.interpretAPIResponse(body, options: options, nowMs: now)
    }

    func testHistoryPageIsVerifiedAndPaged() throws {
        let body = FakeApple.history([FakeApple.transaction("2001"), FakeApple.transaction("2002", product: "coins", original: "2002", expires: nil)],
                                     hasMore: true, revision: "rev-2")
        let r = try interpret(body, apiOptions("transaction_history", status: 200))
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        XCTAssertEqual(r.action, .nextPage)
        XCTAssertEqual(r.nextPage, .revision("rev-2"))
        XCTAssertEqual(r.signedItems, 2)
        XCTAssertEqual(r.transactions.map(\.transactionID), ["2001", "2002"])
        let doc = resultDict(r.resultJSON())
        XCTAssertEqual(doc["action"] as? String, "next_page")
        XCTAssertEqual((doc["next_page"] as? [String: Any])?["revision"] as? String, "rev-2")
        XCTAssertEqual((doc["entitlements"] as? [[String: Any]])?.count, 1)   // the coins are delivered, not owned
        XCTAssertEqual((doc["unsigned"] as? [String: Any])?["appAppleId"] as? Int, 1234)

        let last = try interpret(FakeApple.history([FakeApple.transaction("2003")], hasMore: false), apiOptions("transaction_history", status: 200))
        XCTAssertEqual(last.action, .accept)
        XCTAssertNil(last.nextPage)
        let noRevision = FakeApple.json(["hasMore": true, "signedTransactions": [String]()])
        XCTAssertEqual(try interpret(noRevision, apiOptions("transaction_history", status: 200)).verdict, .malformed)
    }

    func testPagesTogetherEqualPagesOneByOne() throws {
        let v = try XCTUnwrap(FakeApple.verifier())
        let renewals = [FakeApple.transaction("3001", original: "3001", expires: FakeApple.signedDate - 20 * 86_400_000),
                        FakeApple.transaction("3002", original: "3001", expires: FakeApple.signedDate + 10 * 86_400_000),
                        FakeApple.transaction("3003", product: "coins", original: "3003", expires: nil),
                        FakeApple.transaction("3004", product: "lifetime", original: "3004", expires: nil)]
        var collected: [String] = []
        for (i, page) in [[renewals[0], renewals[1]], [renewals[2]], [renewals[3]]].enumerated() {
            let r = try v.interpretAPIResponse(FakeApple.history(page, hasMore: i < 2, revision: "r\(i)"),
                                               options: apiOptions("transaction_history", status: 200), nowMs: FakeApple.now)
            XCTAssertEqual(r.verdict, .valid)
            let doc = try JSONSerialization.jsonObject(with: Data(r.resultJSON())) as! [String: Any]
            for t in doc["transactions"] as! [[String: Any]] {
                collected.append(String(decoding: try JSONSerialization.data(withJSONObject: t), as: UTF8.self))
            }
        }
        let input = Array(("{\"transactions\":[" + collected.joined(separator: ",") + "]}").utf8)
        let all = try v.computeEntitlements(input, nowMs: FakeApple.now)
        let together = try v.interpretAPIResponse(FakeApple.history(renewals), options: apiOptions("transaction_history", status: 200),
                                                  nowMs: FakeApple.now)
        XCTAssertEqual(all.verdict, .valid)
        XCTAssertEqual(all.entitlements?.entitlements, together.entitlements?.entitlements)
        XCTAssertEqual(all.entitlements?.purchases, together.entitlements?.purchases)
        XCTAssertEqual(together.entitlements?.entitlements.filter(\.active).count, 2)   // the subscription and lifetime
        XCTAssertEqual(together.entitlements?.delivery.toDeliver.map(\.productID), ["coins", "lifetime"])
    }

    func testOneBadItemSpoilsTheWholeAnswer() throws {
        let good = FakeApple.sign(FakeApple.transaction("2001"))
        var parts = FakeApple.sign(FakeApple.transaction("2002")).split(separator: ".").map(String.init)
        parts[1] = Base64.encodeURL(FakeApple.json(FakeApple.transaction("2002", product: "lifetime")))
        let tampered = parts.joined(separator: ".")
        let cases: [(Any, Verdict, String)] = [
            ([good, tampered], .signatureInvalid, "signedTransactions[1]"),
            ([good, FakeApple.sign(FakeApple.transaction("2003", bundleID: "com.other"))], .bundleMismatch, "signedTransactions[1]"),
            ([good, FakeApple.sign(FakeApple.transaction("2003", environment: "Sandbox"))], .environmentRejected, "sandbox"),
            ([good, FakeApple.sign(FakeApple.renewal())], .malformed, "not a transaction"),
            ([good, 5], .malformed, "must be a JWS string"),
            ([good, "a.b.c"], .malformed, "signedTransactions[1]"),
        ]
        for (list, verdict, words) in cases {
            let body = FakeApple.json(["hasMore": true, "revision": "r", "signedTransactions": list])
            let r = try interpret(body, apiOptions("transaction_history", status: 200))
            XCTAssertEqual(r.verdict, verdict, r.judgement.reason)
            XCTAssertTrue(r.judgement.reason.lowercased().contains(words.lowercased()), r.judgement.reason)
            XCTAssertEqual(r.action, .reject)
            XCTAssertNil(r.nextPage)
            XCTAssertTrue(r.transactions.isEmpty)
            let doc = resultDict(r.resultJSON())
            XCTAssertEqual(doc["action"] as? String, "reject")
            XCTAssertEqual((doc["entitlements"] as? [Any])?.count, 0)
            XCTAssertEqual(doc["trusted"] as? Bool, false)
        }
        // A chain to another root: the verifier's own roots decide, never the answer.
        let apple = try XCTUnwrap(makeVerifier(["bundle_id": FakeApple.bundle, "environments": ["Production"]]))
        let r = try interpret(FakeApple.history([FakeApple.transaction("2001")]), apiOptions("transaction_history", status: 200), verifier: apple)
        XCTAssertEqual(r.verdict, .untrustedChain)
    }

    func testBodyBundleAndEnvironmentMustMatch() throws {
        var body = FakeApple.json(["bundleId": "com.other", "environment": "Production", "hasMore": false,
                                   "signedTransactions": [FakeApple.sign(FakeApple.transaction("1"))]])
        XCTAssertEqual(try interpret(body, apiOptions("transaction_history", status: 200)).verdict, .bundleMismatch)
        body = FakeApple.history([FakeApple.transaction("1")], environment: "Sandbox")
        XCTAssertEqual(try interpret(body, apiOptions("transaction_history", status: 200)).verdict, .environmentRejected)
        // Sandbox answers from the sandbox host, with sandbox items, are fine when the config accepts Sandbox...
        body = FakeApple.history([FakeApple.transaction("1", environment: "Sandbox")], environment: "Sandbox")
        XCTAssertEqual(try interpret(body, apiOptions("transaction_history", status: 200, environment: "Sandbox")).verdict, .valid)
        // ...and refused when it does not.
        let prodOnly = FakeApple.verifier(environments: ["Production"])
        XCTAssertEqual(try interpret(body, apiOptions("transaction_history", status: 200, environment: "Sandbox"), verifier: prodOnly).verdict,
                       .environmentRejected)
    }

    func testStatusTable() throws {
        let err = { (code: Int, msg: String) in FakeApple.json(["errorCode": code, "errorMessage": msg]) }
        let now = FakeApple.now
        let cases: [([UInt8], APIResponseOptions, Verdict, NextAction, Int64?)] = [
            ([], apiOptions("transaction_info", status: 401), .configurationError, .fixConfiguration, nil),
            (err(4040010, "Transaction id not found."), apiOptions("transaction_info", status: 404), .wrongEnvironment, .retrySandbox, nil),
            (err(4040010, "Transaction id not found."), apiOptions("transaction_info", status: 404, environment: "Sandbox"), .rejectedByApple, .reject, nil),
            (err(4290000, "Rate limit exceeded."), apiOptions("transaction_info", status: 429, retryAfter: String(now + 7_500)),
             .temporarilyUnavailable, .retryLater, 7_500),
            (err(4290000, "Rate limit exceeded."), apiOptions("transaction_info", status: 429, retryAfter: String(now - 7_500)),
             .temporarilyUnavailable, .retryLater, 0),
            (err(4290000, "x"), apiOptions("transaction_info", status: 429, retryAfter: "Wed, 21 Oct 2026 07:28:00 GMT", attempt: 3),
             .temporarilyUnavailable, .retryLater, 4_000),
            (err(4290000, "x"), apiOptions("transaction_info", status: 429, retryAfter: "12.5", attempt: 1), .temporarilyUnavailable, .retryLater, 1_000),
            (err(4290000, "x"), apiOptions("transaction_info", status: 429, retryAfter: String(repeating: "9", count: 40), attempt: 2),
             .temporarilyUnavailable, .retryLater, 2_000),
            (err(4290000, "x"), apiOptions("transaction_info", status: 429, retryAfter: String(now + 1), attempt: 5), .temporarilyUnavailable, .giveUp, nil),
            (Array("<html>busy</html>".utf8), apiOptions("transaction_info", status: 503, attempt: 2), .temporarilyUnavailable, .retryLater, 2_000),
            (err(5000001, "Try again."), apiOptions("transaction_info", status: 500, attempt: 8), .temporarilyUnavailable, .giveUp, nil),
            (err(4040006, "Try again."), apiOptions("subscription_statuses", status: 404, attempt: 7 - 6), .temporarilyUnavailable, .retryLater, 1_000),
            (err(4000006, "Invalid transaction id."), apiOptions("transaction_info", status: 400), .rejectedByApple, .reject, nil),
            (err(4040005, "Not found."), apiOptions("subscription_statuses", status: 404), .rejectedByApple, .reject, nil),
            ([], apiOptions("transaction_info", status: 302), .malformed, .reject, nil),
            ([], apiOptions("consumption_info", status: 202), .valid, .accept, nil),
            (Array("{}".utf8), apiOptions("finish_transaction", status: 200), .valid, .accept, nil),
            (Array("{\"x\":1}".utf8), apiOptions("set_app_account_token", status: 200), .malformed, .reject, nil),
            (FakeApple.json(["testNotificationToken": "t-1"]), apiOptions("test_notification", status: 200), .valid, .accept, nil),
            (FakeApple.json(["signedTransactionInfo": FakeApple.sign(FakeApple.transaction("1"))]),
             apiOptions("transaction_history", status: 200), .malformed, .reject, nil),
            (FakeApple.history([FakeApple.transaction("1")]), apiOptions("transaction_info", status: 200), .malformed, .reject, nil),
            (Array("not json".utf8), apiOptions("transaction_info", status: 200), .malformed, .reject, nil),
            (Array("[]".utf8), apiOptions("transaction_info", status: 200), .malformed, .reject, nil),
            (FakeApple.json(["status": 1, "signedTransactions": [String]()]), apiOptions("order_lookup", status: 200), .rejectedByApple, .reject, nil),
        ]
        for (i, (body, options, verdict, action, retry)) in cases.enumerated() {
            let r = try interpret(body, options)
            XCTAssertEqual(r.verdict, verdict, "case \(i): \(r.judgement.reason)")
            XCTAssertEqual(r.action, action, "case \(i): \(r.judgement.reason)")
            XCTAssertEqual(r.retryAfterMs, retry, "case \(i)")
            XCTAssertFalse(r.judgement.reason.isEmpty)
            let doc = resultDict(r.resultJSON())
            XCTAssertEqual(doc["action"] as? String, action.rawValue)
        }
        let r = try interpret(err(4000006, "Invalid transaction id."), apiOptions("transaction_info", status: 400))
        XCTAssertEqual(r.errorCode, 4000006)
        XCTAssertEqual(r.errorMessage, "Invalid transaction id.")
        XCTAssertTrue(r.judgement.reason.contains("4000006"))
        // Sandbox not accepted: no retry_sandbox.
        let prodOnly = FakeApple.verifier(environments: ["Production"])
        XCTAssertEqual(try interpret(err(4040010, "x"), apiOptions("transaction_info", status: 404), verifier: prodOnly).action, .reject)
        // Far in the future: capped at an hour.
        XCTAssertEqual(try interpret([], apiOptions("transaction_info", status: 429, retryAfter: String(now + 86_400_000))).retryAfterMs, 3_600_000)
        // Seconds, as a proxy might send, are not an instant: the backoff applies, never 0.
        XCTAssertEqual(try interpret([], apiOptions("transaction_info", status: 429, retryAfter: "30", attempt: 2)).retryAfterMs, 2_000)
        // Garbage Retry-After is shown short and printable.
        let g = try interpret([], apiOptions("transaction_info", status: 429, retryAfter: "\u{1}" + String(repeating: "A", count: 5000)))
        XCTAssertLessThan(g.judgement.reason.utf8.count, 300)
        XCTAssertEqual(g.retryAfterMs, 1_000)
    }

    func testSubscriptionStatusesAreCrossChecked() throws {
        let body = FakeApple.json([
            "environment": "Production", "bundleId": FakeApple.bundle,
            "data": [["subscriptionGroupIdentifier": "g1", "lastTransactions": [
                ["status": 1, "originalTransactionId": "1000",
                 "signedTransactionInfo": FakeApple.sign(FakeApple.transaction("1005")),
                 "signedRenewalInfo": FakeApple.sign(FakeApple.renewal())],
                ["status": 2, "originalTransactionId": "4000",
                 "signedTransactionInfo": FakeApple.sign(FakeApple.transaction("4005", product: "pro.yearly", original: "4000")),
                 "signedRenewalInfo": FakeApple.sign(FakeApple.renewal(original: "4000", product: "pro.yearly"))],
            ]]]])
        let r = try interpret(body, apiOptions("subscription_statuses", status: 200))
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        XCTAssertEqual(r.signedItems, 4)
        XCTAssertEqual(r.statuses.map(\.agrees), [true, false])
        XCTAssertEqual(r.statusDisagreements.map(\.originalTransactionID), ["4000"])
        XCTAssertEqual(r.statusDisagreements.first?.engineState, .active)
        let doc = resultDict(r.resultJSON())
        let d = (doc["status_disagreements"] as? [[String: Any]])?.first
        XCTAssertEqual(d?["apple_state"] as? String, "expired")
        XCTAssertEqual(d?["engine_state"] as? String, "active")
        // Items of another subscription than the entry names: refused.
        let swapped = FakeApple.json(["data": [["lastTransactions": [
            ["status": 1, "originalTransactionId": "9999", "signedTransactionInfo": FakeApple.sign(FakeApple.transaction("1005"))]]]]])
        XCTAssertEqual(try interpret(swapped, apiOptions("subscription_statuses", status: 200)).verdict, .malformed)
    }

    func testNotificationHistoryAndAppTransaction() throws {
        let note: [String: Any] = ["notificationType": "DID_RENEW", "notificationUUID": "u-1", "signedDate": FakeApple.signedDate,
                                   "version": "2.0",
                                   "data": ["bundleId": FakeApple.bundle, "environment": "Production",
                                            "signedTransactionInfo": FakeApple.sign(FakeApple.transaction("5001"))]]
        let body = FakeApple.json(["hasMore": true, "paginationToken": "p-2",
                                   "notificationHistory": [["signedPayload": FakeApple.sign(note), "sendAttempts": [["attemptDate": 1, "sendAttemptResult": "SUCCESS"]]]]])
        let r = try interpret(body, apiOptions("notification_history", status: 200))
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        XCTAssertEqual(r.nextPage, .paginationToken("p-2"))
        XCTAssertEqual(r.notifications.map(\.type), ["DID_RENEW"])
        XCTAssertEqual(r.transactions.map(\.transactionID), ["5001"])
        let app: [String: Any] = ["bundleId": FakeApple.bundle, "receiptType": "Production", "applicationVersion": "3",
                                  "originalApplicationVersion": "1", "signedDate": FakeApple.signedDate, "appTransactionId": "7"]
        let a = try interpret(FakeApple.json(["signedAppTransactionInfo": FakeApple.sign(app)]), apiOptions("app_transaction_info", status: 200))
        XCTAssertEqual(a.verdict, .valid, a.judgement.reason)
        XCTAssertEqual((resultDict(a.resultJSON())["app_transaction"] as? [String: Any])?["appTransactionId"] as? String, "7")
    }

    func testOptionsBelongToTheirEntryPoint() throws {
        func parse<Options: EntryOptions>(_ json: String, _ type: Options.Type) -> IAPVFailure? {
            let bytes = Array(json.utf8)
            do { _ = try bytes.withUnsafeBytes { raw throws(IAPVFailure) in try Options(json: raw) }; return nil }
            catch let e as IAPVFailure { return e } catch { return nil }
        }
        XCTAssertNil(parse(#"{"endpoint":"transaction_info","http_status":200,"environment":"Sandbox","retry_after":"1","attempt":2,"delivered_transaction_ids":["1"]}"#, APIResponseOptions.self))
        XCTAssertNotNil(parse(#"{"endpoint":"production"}"#, APIResponseOptions.self))
        XCTAssertNotNil(parse(#"{"device_id":"00000000-0000-0000-0000-000000000000"}"#, APIResponseOptions.self))
        XCTAssertNotNil(parse(#"{"http_status":200}"#, ReceiptOptions.self))
        XCTAssertNotNil(parse(#"{"http_status":99}"#, APIResponseOptions.self))
        XCTAssertNotNil(parse(#"{"retry_after":5}"#, APIResponseOptions.self))
        XCTAssertNil(parse(#"{"endpoint":"sandbox"}"#, ResponseOptions.self))
        let v = try XCTUnwrap(FakeApple.verifier())
        XCTAssertThrowsError(try v.interpretAPIResponse([UInt8](), options: APIResponseOptions(), nowMs: 0))
        var o = APIResponseOptions()
        o.endpoint = .transactionInfo
        XCTAssertThrowsError(try v.interpretAPIResponse([UInt8](), options: o, nowMs: 0))
    }

    /// Retention Messaging answers are unsigned data: their fields come back in `unsigned`, a
    /// delete answers with no body, and an answer of another shape is refused.
    func testRetentionMessagingAnswers() throws {
        let id = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        let list = try interpret(FakeApple.json(["imageIdentifiers": [["imageIdentifier": id, "imageState": "APPROVED"]]]),
                                 apiOptions("list_images", status: 200))
        XCTAssertEqual(list.verdict, .valid, list.judgement.reason)
        let unsigned = resultDict(list.resultJSON())["unsigned"] as? [String: Any]
        XCTAssertEqual(((unsigned?["imageIdentifiers"] as? [[String: Any]])?.first)?["imageState"] as? String, "APPROVED")
        XCTAssertEqual(try interpret(FakeApple.json([String: Any]()), apiOptions("list_messages", status: 200)).verdict, .valid)
        XCTAssertEqual(try interpret([], apiOptions("delete_image", status: 200)).action, .accept)
        let message = try interpret(FakeApple.json(["messageIdentifier": id]), apiOptions("get_default_message", status: 200))
        XCTAssertEqual(message.verdict, .valid)
        XCTAssertEqual(try interpret(FakeApple.json(["realtimeURL": "https://example.com/r"]), apiOptions("get_realtime_url", status: 200)).verdict, .valid)
        XCTAssertEqual(try interpret(FakeApple.json(["other": 1]), apiOptions("get_realtime_url", status: 200)).verdict, .malformed)
        XCTAssertEqual(try interpret(FakeApple.json(["requestId": "r-1"]), apiOptions("initiate_performance_test", status: 200)).verdict, .valid)
        let notFound = try interpret(FakeApple.json(["errorCode": 4040013, "errorMessage": "Image not found"]), apiOptions("delete_image", status: 404))
        XCTAssertEqual(notFound.action, .reject)
        XCTAssertEqual(notFound.errorCode, 4040013)
    }
}
