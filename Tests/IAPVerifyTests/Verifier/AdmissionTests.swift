import XCTest
@testable import IAPVerify

/// Admission happens once, in the verifier, the same way for every entry point: the clock first,
/// then the size cap, before a byte is read; the signer takes the same clock rule.
final class AdmissionTests: XCTestCase {
    private func entryPoints(_ v: Verifier) -> [(String, ([UInt8], Int64) throws -> Void)] {
        var api = APIResponseOptions()
        api.endpoint = .transactionInfo
        api.httpStatus = 200
        return [
            ("receipt", { b, now in _ = try v.verifyReceipt(b, nowMs: now) }),
            ("response", { b, now in _ = try v.interpretResponse(b, nowMs: now) }),
            ("input", { b, now in _ = try v.computeEntitlements(b, nowMs: now) }),
            ("JWS", { b, now in _ = try v.verifyJWS(b, nowMs: now) }),
            ("API answer", { b, now in _ = try v.interpretAPIResponse(b, options: api, nowMs: now) }),
        ]
    }

    private func failure(_ call: () throws -> Void) -> IAPVFailure? {
        do { try call() } catch let f as IAPVFailure { return f } catch { XCTFail("\(error)") }
        return nil
    }

    func testEveryEntryPointRefusesANegativeClockBeforeTheSize() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "com.example.app", "max_input_bytes": 8])
        let tooBig = [UInt8](repeating: 0x41, count: 9)
        for (what, call) in entryPoints(v) {
            let f = failure { try call(tooBig, -1) }
            XCTAssertEqual(f?.status, .invalidArgument, what)
            XCTAssertEqual(f?.message, "now_ms must be Unix milliseconds >= 0, got -1", what)
        }
    }

    func testEveryEntryPointRefusesInputOverTheCapNamingIt() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "com.example.app", "max_input_bytes": 8])
        let tooBig = [UInt8](repeating: 0x41, count: 9)
        for (what, call) in entryPoints(v) {
            let f = failure { try call(tooBig, 0) }
            XCTAssertEqual(f?.status, .tooLarge, what)
            XCTAssertEqual(f?.message, "the \(what) is 9 bytes; max_input_bytes is 8", what)
        }
    }

    func testTheSizeCapComesBeforeAReceiptCallsOwnArgumentChecks() throws {
        // device_check "required" without a device id is the receipt's own argument check: it
        // runs after admission, so an oversized receipt is refused as too large first.
        let v = try makeVerifierOrThrow(["bundle_id": "com.example.app", "max_input_bytes": 8, "device_check": "required"])
        XCTAssertEqual(failure { _ = try v.verifyReceipt([UInt8](repeating: 0x41, count: 9), nowMs: 0) }?.status, .tooLarge)
        XCTAssertEqual(failure { _ = try v.verifyReceipt([UInt8](repeating: 0x41, count: 8), nowMs: 0) }?.status, .invalidArgument)
    }

    func testTheSignerTakesTheSameClockRule() throws {
        let s = try Signer(json: FakeApple.bytes("signer.json"))
        let token = failure { _ = try s.apiToken(nowMs: -5) }
        let offer = failure { _ = try s.sign(Array(#"{"kind": "realtime_response"}"#.utf8), nowMs: -5) }
        for f in [token, offer] {
            XCTAssertEqual(f?.status, .invalidArgument)
            XCTAssertEqual(f?.message, "now_ms must be Unix milliseconds >= 0, got -5")
        }
    }
}
