// Concurrency (8 threads share one verifier) and the C boundary called as C would call it.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify
import IAPVerifyC

final class ConcurrencyTests: XCTestCase {
    func testEightThreadsGiveTheSameResultsAsOne() throws {
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox"]])
        var inputs = Fixtures.list("receipts").map { Fixtures.data("receipts/\($0)") }
        var damaged = inputs[0]
        damaged[damaged.count / 2] ^= 0x40
        inputs += [damaged, Array(inputs[1].prefix(100)), [], Array("garbage".utf8)]
        inputs += Fixtures.list("xcode").map { Fixtures.data("xcode/\($0)") }
        let expected = try inputs.map { String(decoding: try v.verify($0, now: jan2030).resultJSON(), as: UTF8.self) }
        let lock = NSLock()
        var mismatches = 0
        var calls = 0
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            var localMismatch = 0
            for round in 0..<12 {
                for (i, input) in inputs.enumerated() where (i + round + t) % 3 != 0 {
                    let got = (try? v.verify(input, now: jan2030).resultJSON()).map { String(decoding: $0, as: UTF8.self) }
                    if got != expected[i] { localMismatch += 1 }
                    lock.lock(); calls += 1; lock.unlock()
                }
            }
            lock.lock(); mismatches += localMismatch; lock.unlock()
        }
        XCTAssertEqual(mismatches, 0)
        XCTAssertGreaterThan(calls, 1500)
    }
}

final class CBoundaryTests: XCTestCase {
    func newVerifier(_ json: String) -> (Int32, OpaquePointer?, String) {
        var out: OpaquePointer?
        var err = [UInt8](repeating: 0xAA, count: 256)
        let status = json.withCString { p in
            err.withUnsafeMutableBytes { iapv_verifier_new(p, strlen(p), &out, $0.baseAddress?.assumingMemoryBound(to: HeaderError.self)) }
        }
        let message = status == 0 ? "" : String(decoding: err[8...].prefix { $0 != 0 }, as: UTF8.self)
        if status != 0 { XCTAssertEqual(err.withUnsafeBytes { $0.load(as: Int32.self) }, status) }
        return (status, out, message)
    }

    func testVerifyThroughTheCABI() throws {
        let (status, v, _) = newVerifier(#"{"bundle_id":"com.dashedspace.analytics"}"#)
        XCTAssertEqual(status, 0)
        defer { iapv_verifier_free(v) }
        let der = Fixtures.data("receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der")
        var result: OpaquePointer?
        let rc = der.withUnsafeBufferPointer { iapv_verify_receipt(v, $0.baseAddress, $0.count, nil, 0, jan2030, &result, nil) }
        XCTAssertEqual(rc, 0)
        XCTAssertEqual(String(cString: try XCTUnwrap(iapv_result_verdict(result))), "valid")
        XCTAssertEqual(iapv_result_is_valid(result), 1)
        var len = 0
        let json = try XCTUnwrap(iapv_result_json(result, &len))
        XCTAssertEqual(strlen(json), len)
        XCTAssertTrue(String(cString: json).hasPrefix(#"{"verdict":"valid""#))
        iapv_result_free(result)
    }

    func testBadArgumentsNeverTrap() {
        var result: OpaquePointer? = OpaquePointer(bitPattern: 0x1234)
        var err = [UInt8](repeating: 0, count: 256)
        let rc = err.withUnsafeMutableBytes { iapv_verify_receipt(nil, nil, 0, nil, 0, 0, &result, $0.baseAddress?.assumingMemoryBound(to: HeaderError.self)) }
        XCTAssertEqual(rc, -1)
        XCTAssertNil(result)
        XCTAssertTrue(String(decoding: err[8...].prefix { $0 != 0 }, as: UTF8.self).contains("verifier"))
        let (_, v, _) = newVerifier(#"{"bundle_id":"*"}"#)
        defer { iapv_verifier_free(v) }
        XCTAssertEqual(iapv_verify_receipt(v, nil, 10, nil, 0, 0, &result, nil), -1)
        XCTAssertEqual(iapv_verify_receipt(v, nil, 0, nil, 5, 0, &result, nil), -1)
        XCTAssertEqual(iapv_verify_receipt(v, nil, 0, nil, 0, 0, nil, nil), -1)
        XCTAssertEqual(iapv_verify_receipt(v, nil, 0, nil, 0, -5, &result, nil), -1)
        XCTAssertEqual(iapv_verify_receipt(v, nil, 0, nil, 0, 0, &result, nil), 0)
        XCTAssertEqual(String(cString: iapv_result_verdict(result)!), "malformed")
        iapv_result_free(result)
        XCTAssertNil(iapv_result_verdict(nil))
        XCTAssertEqual(iapv_result_is_valid(nil), 0)
        var len = 99
        XCTAssertNil(iapv_result_json(nil, &len))
        XCTAssertEqual(len, 0)
        iapv_result_free(nil)
        iapv_verifier_free(nil)
        let opts = #"{"colour":"red"}"#
        let rc2 = opts.withCString { iapv_verify_receipt(v, nil, 0, $0, strlen($0), 0, &result, nil) }
        XCTAssertEqual(rc2, -1)
    }

    func testConfigErrorsComeBackWithAMessage() throws {
        let (status, v, message) = newVerifier(#"{"bundle_id":"a","colour":"red"}"#)
        XCTAssertEqual(status, -2)
        XCTAssertNil(v)
        XCTAssertTrue(message.contains("colour"), message)
        let long = "{\"bundle_id\":\"a\",\"" + String(repeating: "é", count: 400) + "\":1}"
        let (s2, _, m2) = newVerifier(long)
        XCTAssertEqual(s2, -2)
        XCTAssertLessThan(m2.utf8.count, 248)
        XCTAssertEqual(String(cString: iapv_status_name(-2)), "IAPV_E_CONFIG")
        XCTAssertEqual(String(cString: iapv_status_name(42)), "IAPV_E_UNKNOWN")
        XCTAssertEqual(iapv_abi_version(), 1)
        // The version and the error size come from the header's macros, the one place they are written.
        let header = try String(contentsOfFile: Self.repositoryFile("Include/iapverify.h"), encoding: .utf8)
        let quoted = header.components(separatedBy: "#define IAPV_VERSION_STRING \"").dropFirst().first?.prefix { $0 != "\"" }
        XCTAssertEqual(String(cString: iapv_version_string()), quoted.map(String.init))
        XCTAssertTrue(header.contains("#define IAPV_ERROR_MESSAGE_SIZE \(iapv_error_message_size())"))
    }

    func testTooLargeIsAStatus() {
        let (_, v, _) = newVerifier(#"{"bundle_id":"*","max_input_bytes":100}"#)
        defer { iapv_verifier_free(v) }
        let big = [UInt8](repeating: 0x41, count: 101)
        var result: OpaquePointer?
        XCTAssertEqual(big.withUnsafeBufferPointer { iapv_verify_receipt(v, $0.baseAddress, $0.count, nil, 0, 0, &result, nil) }, -3)
        XCTAssertNil(result)
    }
}
