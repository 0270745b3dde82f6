// Every input a fuzzer ever found lands in Fuzz/regressions/<target>/ and is replayed here by
// name, on the same oracle as the fuzz harness (both receipt paths agree; nothing traps).

import Foundation
import XCTest
@testable import IAPVerify

final class FuzzRegressionTests: XCTestCase {
    func testCommittedRegressionInputs() throws {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz/regressions").standardized
        let v = try makeVerifierOrThrow(["bundle_id": "*", "environments": ["Production", "Sandbox", "Xcode"],
                                         "trust": ["roots_pem": [Fixtures.fakeRootPEM]],
                                         "xcode": ["accept": true, "roots_pem": [Fixtures.storeKitPEM]]])
        var replayed = 0
        for target in ["receipt", "response", "entitlements", "config", "options", "jws"] {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent(target).path)) ?? []
            for name in files where !name.hasPrefix(".") {
                let bytes = [UInt8](try Data(contentsOf: dir.appendingPathComponent(target).appendingPathComponent(name)))
                replayed += 1
                bytes.withUnsafeBytes { raw in
                    switch target {
                    case "receipt":
                        let fast = try? v.verifyReceipt(raw, nowMs: jan2030)
                        let reference = try? v.verifyReceipt(raw, nowMs: jan2030, path: .reference)
                        XCTAssertEqual(fast?.isValid, reference?.isValid, "\(target)/\(name)")
                    case "response": _ = try? v.interpretResponse(raw, nowMs: jan2030)
                    case "entitlements": _ = try? v.computeEntitlements(raw, nowMs: jan2030)
                    case "config": _ = try? VerifierConfig(json: raw)
                    case "jws": _ = try? v.verifyJWS(raw, nowMs: jan2030)
                    default: _ = try? CallOptions(json: raw)
                    }
                }
            }
        }
        print("replayed \(replayed) fuzz regression inputs")
    }
}
