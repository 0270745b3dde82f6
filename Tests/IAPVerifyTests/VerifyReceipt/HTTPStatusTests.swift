// options.http_status for /verifyReceipt: a host that got no 200 (or no answer at all) passes the
// status instead of faking a body; the library applies the retry rule of a temporary status.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class ResponseHTTPStatusTests: XCTestCase {
    let both = try! makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox"]])

    /// Every attempt gives the action and wait a 21005 body gives at the same attempt.
    func testNoAnswerAndHTTPErrorsBackOffLikeATemporaryStatus() throws {
        for http in [0, 301, 404, 429, 500, 502, 503, 504] {
            for attempt in 1...7 {
                let reference = try interpret(both, json: ["status": 21005], now: 0, ["attempt": attempt])
                let r = try interpret(both, [], now: 0, ["attempt": attempt, "http_status": http])
                XCTAssertEqual(r.action, reference.action, "HTTP \(http) attempt \(attempt)")
                XCTAssertEqual(r.retryAfterMs, reference.retryAfterMs, "HTTP \(http) attempt \(attempt)")
                XCTAssertEqual(r.verdict, .temporarilyUnavailable)
                XCTAssertNil(r.status)
                XCTAssertFalse(r.trusted)
                XCTAssertTrue(r.judgement.reason.contains(http == 0 ? "no answer" : "HTTP \(http)"), r.judgement.reason)
            }
        }
        XCTAssertEqual(try interpret(both, [], now: 0, ["attempt": 5, "http_status": 503]).action, .giveUp)
    }

    /// The body of a non-200 answer is never read: a proxy's page saying status 0 grants nothing.
    func testTheBodyOfAnErrorIsNotRead() throws {
        let body = Fixtures.data("verifyreceipt/alexalok_Valid_Production_Family_Shared.json")
        let accepted = try interpret(both, body, now: 1_595_500_000_000, ["http_status": 200])
        XCTAssertEqual(accepted.verdict, .valid)
        let refused = try interpret(both, body, now: 1_595_500_000_000, ["http_status": 502])
        XCTAssertEqual(refused.action, .retryLater)
        XCTAssertTrue(refused.transactions.isEmpty)
        XCTAssertNil(refused.entitlements)
    }

    /// 200 and null are what no http_status was.
    func testA200OrNullChangesNothing() throws {
        let body = Fixtures.data("verifyreceipt/alexalok_Valid_Production_Family_Shared.json")
        let plain = try interpret(both, body, now: 1_595_500_000_000)
        for opts: [String: Any] in [["http_status": 200], ["http_status": NSNull()]] {
            let r = try interpret(both, body, now: 1_595_500_000_000, opts)
            XCTAssertEqual(r.resultJSON(), plain.resultJSON(), "\(opts)")
        }
        let empty = try interpret(both, [], now: 0, ["http_status": 200])
        XCTAssertEqual(empty.verdict, .malformed)
    }

    func testInvalidStatusesAreRefused() throws {
        for bad: Any in [-1, 1, 99, 600, 1000, "503", 503.5, true] {
            XCTAssertThrowsError(try options(["http_status": bad], as: ResponseOptions.self), "\(bad)") {
                let failure = $0 as? IAPVFailure
                XCTAssertEqual(failure?.status, .invalidArgument, "\(bad)")
                XCTAssertTrue(failure?.message.contains("options.http_status") == true, failure?.message ?? "")
            }
        }
        // 0 means "no answer" only for /verifyReceipt; the API call still needs a real status.
        XCTAssertThrowsError(try options(["endpoint": "transaction_info", "http_status": 0], as: APIResponseOptions.self))
        XCTAssertEqual(try options(["http_status": 0], as: ResponseOptions.self).httpStatus, 0)
        // retry_after stays the API call's.
        XCTAssertThrowsError(try options(["retry_after": "1"], as: ResponseOptions.self))
    }
}
