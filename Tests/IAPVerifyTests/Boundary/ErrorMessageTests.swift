// The C error buffer holds 247 bytes of message: a longer one is cut after its last whole word
// with " ..." (never mid-word, never mid-character), and hosts' natural spellings are understood.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify
@testable import IAPVerifyC

final class ErrorMessageTests: XCTestCase {
    func testALongMessageIsCutAfterAWholeWord() {
        let long = String(repeating: "every word here is whole ", count: 20) + "end"
        let cut = fitted(long, capacity: 247)
        XCTAssertLessThanOrEqual(cut.utf8.count, 247)
        XCTAssertTrue(cut.hasSuffix(" ..."), cut)
        let words = cut.dropLast(4).split(separator: " ")
        XCTAssertTrue(words.allSatisfy { ["every", "word", "here", "is", "whole"].contains(String($0)) }, cut)
        XCTAssertEqual(fitted("short enough", capacity: 247), "short enough")
        let accents = String(repeating: "é", count: 200)   // one 400-byte word: whole characters
        let a = fitted(accents, capacity: 247)
        XCTAssertLessThanOrEqual(a.utf8.count, 247)
        XCTAssertTrue(a.hasPrefix("ééé") && a.hasSuffix(" ..."))
    }

    func testCamelCaseKeysGetTheirSnakeCaseName() throws {
        let s = try FakeApple.signer()
        let call = FakeApple.json(["endpoint": "transaction_info", "transactionId": "1"])
        let failure = call.withUnsafeBytes { raw in Result { () throws(IAPVFailure) in try s.apiRequest(raw, nowMs: FakeApple.now) } }
        guard case .failure(let e) = failure else { return XCTFail("built a call with a camelCase key") }
        XCTAssertTrue(e.message.contains("did you mean \"transaction_id\""), e.message)
        XCTAssertThrowsError(try options(["lastSignedDateMs": 5], as: JWSOptions.self)) { error in
            XCTAssertTrue("\(error)".contains("last_signed_date_ms"), "\(error)")
        }
    }

    func testNullMeansAbsent() throws {
        let o = try options(["last_signed_date_ms": NSNull(), "seen_notification_uuids": NSNull(), "kind": NSNull()], as: JWSOptions.self)
        XCTAssertNil(o.lastSignedDateMs)
        XCTAssertNil(o.kind)
        let s = try FakeApple.signer()
        let call = FakeApple.json(["endpoint": "transaction_history", "transaction_id": "1", "revision": NSNull()])
        let r = try call.withUnsafeBytes { raw throws(IAPVFailure) in try s.apiRequest(raw, nowMs: FakeApple.now) }
        XCTAssertFalse(r.url.contains("revision"), r.url)
    }
}
