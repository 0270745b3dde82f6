// What a Swift host sees: the JSON-taking calls over [UInt8] with their typed errors, a report's
// reason beside its verdict, and a refused notification whose action says reject in the typed
// report too (not only in the JSON).

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class SwiftSurfaceTests: XCTestCase {
    func testByteInputsKeepTheirTypedErrors() throws {
        let v = try Verifier(json: Array(#"{"bundle_id": "com.example.fake"}"#.utf8))
        XCTAssertEqual(v.config.bundleID, "com.example.fake")
        do {
            _ = try Verifier(json: Array(#"{"bundle": "x"}"#.utf8))
            XCTFail("an unknown key was accepted")
        } catch {
            XCTAssertEqual(error.status, .config)   // error is IAPVFailure, no cast needed
        }
        let o: JWSOptions = try v.options(json: Array(#"{"kind": "transaction"}"#.utf8))
        XCTAssertEqual(o.kind, .transaction)
        let s = try Signer(json: FakeApple.bytes("signer.json"))
        let r = try s.apiRequest(Array(#"{"endpoint": "list_images"}"#.utf8), nowMs: FakeApple.now)
        XCTAssertEqual(r.method, "GET")
        let sig = try s.sign(Array(#"{"kind": "realtime_response", "message_identifier": "7e3fb20b-4cdb-47cc-936d-99d65f608138"}"#.utf8),
                             nowMs: FakeApple.now)
        XCTAssertNotNil(sig.body)
    }

    func testARefusedNotificationSaysRejectInTheReport() throws {
        let note = FakeApple.sign(["notificationType": "DID_RENEW", "notificationUUID": "n-foreign", "version": "2.0",
                                   "signedDate": FakeApple.signedDate,
                                   "data": ["bundleId": "com.other.app", "environment": "Production",
                                            "signedTransactionInfo": FakeApple.sign(FakeApple.transaction("1"))]])
        let r = try verifyJWS(try XCTUnwrap(FakeApple.verifier()), note, now: FakeApple.now)
        XCTAssertEqual(r.verdict, .bundleMismatch)
        XCTAssertEqual(r.reason, r.judgement.reason)
        XCTAssertEqual(r.notification?.action, .reject)
    }
}
