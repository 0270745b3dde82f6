// The description of the surface (JSON/Surface.swift, Verifier/SurfaceCatalog.swift): every
// object named once, every member named once in its object and given a meaning, and every member a
// real result writes is one the description has, in the description's order.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class SurfaceDescriptionTests: XCTestCase {
    private var description: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(SurfaceCatalog.json()))) as? [String: Any] ?? [:]
    }

    func testEveryObjectAndMemberIsNamedOnceWithAMeaning() throws {
        let objects = try XCTUnwrap(description["objects"] as? [String: [String: Any]])
        XCTAssertGreaterThan(objects.count, 40)
        for (name, object) in objects {
            let members = try XCTUnwrap(object["members"] as? [[String: Any]], name)
            let names = members.compactMap { $0["name"] as? String }
            XCTAssertEqual(Set(names).count, names.count, "\(name): a member named twice")
            for m in members {
                XCTAssertFalse((m["meaning"] as? String ?? "").isEmpty, "\(name).\(m["name"] ?? "?") has no meaning")
                if ["object"].contains(m["type"] as? String) || m["items"] as? String == "object" {
                    XCTAssertNotNil(objects[m["object"] as? String ?? ""], "\(name).\(m["name"] ?? "?") names an object not described")
                }
            }
        }
        let names = SurfaceCatalog.objects.map { "\($0.objectName)" }
        XCTAssertEqual(Set(names).count, names.count, "two objects share a name")
    }

    /// Walks a result document against its description: every key described, in order.
    private func check(_ value: Any, object: String, _ objects: [String: [String: Any]], path: String) {
        guard let dict = value as? [String: Any], let members = objects[object]?["members"] as? [[String: Any]] else { return }
        let order = members.compactMap { $0["name"] as? String }
        for key in dict.keys { XCTAssertTrue(order.contains(key), "\(path).\(key) is written but not described in \(object)") }
        for m in members {
            guard let name = m["name"] as? String, let v = dict[name] else {
                if m["presence"] as? String == "always" { XCTFail("\(path).\(m["name"] ?? "?") is described as always written") }
                continue
            }
            if let child = m["object"] as? String {
                if let list = v as? [Any] { for (i, e) in list.enumerated() { check(e, object: child, objects, path: "\(path).\(name)[\(i)]") } }
                else if m["type"] as? String == "map", let map = v as? [String: Any] { for (k, e) in map { check(e, object: child, objects, path: "\(path).\(name).\(k)") } }
                else { check(v, object: child, objects, path: "\(path).\(name)") }
            }
        }
    }

    func testARealResultWritesOnlyDescribedMembers() throws {
        let objects = try XCTUnwrap(description["objects"] as? [String: [String: Any]])
        let v = try XCTUnwrap(FakeApple.verifier(["app_apple_id": 1]))
        let t = NotificationEffectTests.txn("9001", purchase: FakeApple.signedDate, expires: FakeApple.signedDate + 86_400_000,
                                            signed: FakeApple.signedDate, extra: ["offerType": 5, "billingPlanType": "MONTHLY"])
        let n = NotificationEffectTests.notification("DID_RENEW", nil, signed: FakeApple.signedDate, transaction: t,
                                                     renewal: NotificationEffectTests.renewal(signed: FakeApple.signedDate), uuid: "u")
        let r = try verifyJWS(v, n, now: FakeApple.now)
        XCTAssertEqual(r.verdict, .valid, r.judgement.reason)
        check(resultDict(r.resultJSON()), object: "jws_result", objects, path: "jws")
        let refused = try verifyJWS(v, "a.b.c", now: FakeApple.now)
        check(resultDict(refused.resultJSON()), object: "jws_result", objects, path: "refused")
    }

    func testOptionsAndConfigKeysAreDescribed() throws {
        let options = try XCTUnwrap(description["options"] as? [String: Any])
        let keys = try XCTUnwrap(options["keys"] as? [[String: Any]]).compactMap { $0["name"] as? String }
        XCTAssertEqual(Set(keys), Set(OptionKey.allCases.map(\.name)))
        XCTAssertTrue(keys.contains("kind") && keys.contains("max_age_ms") && keys.contains("seen_request_identifiers"))
        let config = try XCTUnwrap((description["config"] as? [String: Any])?["keys"] as? [[String: Any]]).compactMap { $0["name"] as? String }
        XCTAssertEqual(config.first, "bundle_id")
        XCTAssertTrue(config.contains("environments"))
    }

    func testTheServerAPIsInputsAreDescribed() throws {
        let calls = try XCTUnwrap(description["calls"] as? [String: [String: Any]])
        let endpoints = try XCTUnwrap(calls["iapv_api_request"]?["endpoints"] as? [[String: Any]])
        XCTAssertEqual(endpoints.compactMap { $0["name"] as? String }, APIEndpoint.allCases.map(\.rawValue))
        let cancel = try XCTUnwrap(endpoints.first { $0["name"] as? String == "advanced_commerce_cancel_subscription" })
        XCTAssertEqual(cancel["path"] as? String, "advancedCommerce/v1/subscription/cancel/{transaction_id}")
        let sign = try XCTUnwrap(calls["iapv_sign"]?["keys"] as? [[String: Any]])
        for kind in SignatureKind.allCases {
            let described = Set(sign.filter { ($0["kinds"] as? [String])?.contains(kind.rawValue) == true }.compactMap { $0["name"] as? String })
            XCTAssertEqual(described, OfferRequest.allowed(kind), kind.rawValue)
        }
        XCTAssertEqual((calls["iapv_signer_new"]?["keys"] as? [[String: Any]])?.count, SignerConfigMember.allCases.count)
    }
}
