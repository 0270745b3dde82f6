// Tests/shared/expectations.json is the contract every binding (Swift, Python, Go, Lua) is
// tested against: the same inputs must give the same verdicts, entitlements and deliveries.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class SharedExpectationTests: XCTestCase {
    func testEveryBindingCase() throws {
        let path = URL(fileURLWithPath: Self.repositoryFile("Tests/shared/expectations.json"))
        let doc = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: path)) as? [String: Any])
        let cases = try XCTUnwrap(doc["cases"] as? [[String: Any]])
        XCTAssertGreaterThanOrEqual(cases.count, 15)
        for c in cases {
            let name = c["name"] as? String ?? "?"
            let v = try makeVerifierOrThrow(c["config"] as? [String: Any] ?? [:])
            let input = Fixtures.data(c["input"] as? String ?? "")
            let now = (c["now_ms"] as? NSNumber)?.int64Value ?? 0
            let opts = c["options"] as? [String: Any] ?? [:]
            let json: [UInt8]
            switch c["kind"] as? String {
            case "receipt": json = try v.verify(input, now: now, options: options(opts)).resultJSON()
            case "response": json = try interpret(v, input, now: now, opts).resultJSON()
            default: XCTFail("unknown kind in \(name)"); continue
            }
            let r = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
            XCTAssertEqual(r["verdict"] as? String, c["verdict"] as? String, name)
            let got = (r["entitlements"] as? [[String: Any]] ?? []).map { "\($0["id"] ?? "") \($0["active"] ?? "") \($0["state"] ?? "") \($0["transaction_id"] ?? "")" }
            let want = (c["entitlements"] as? [[String: Any]] ?? []).map { "\($0["id"] ?? "") \($0["active"] ?? "") \($0["state"] ?? "") \($0["transaction_id"] ?? "")" }
            XCTAssertEqual(got, want, name)
            let deliver = ((r["delivery"] as? [String: Any])?["to_deliver"] as? [[String: Any]] ?? []).compactMap { $0["transaction_id"] as? String }
            XCTAssertEqual(deliver, c["to_deliver"] as? [String], name)
            if c["kind"] as? String == "response" {
                XCTAssertEqual(r["action"] as? String, c["action"] as? String, name)
                XCTAssertEqual((r["status"] as? NSNumber)?.int64Value, (c["status"] as? NSNumber)?.int64Value, name)
            }
        }
    }
}
