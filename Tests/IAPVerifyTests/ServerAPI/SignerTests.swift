// The developer signer and the requests it builds: config errors, the bearer token (claims and
// ES256 signature, checked with the developer's public key), every endpoint's method and URL,
// parameter validation and escaping.

import Foundation
import XCTest
@_spi(Testing) @testable import IAPVerify

final class SignerTests: XCTestCase {
    private func signerError(_ config: [String: Any]) -> IAPVFailure? {
        let json = FakeApple.json(config)
        do {
            _ = try json.withUnsafeBytes { raw throws(IAPVFailure) in try Signer(json: raw) }
            return nil
        } catch let e as IAPVFailure { return e } catch { return nil }
    }

    private var goodConfig: [String: Any] {
        try! JSONSerialization.jsonObject(with: Data(FakeApple.bytes("signer.json"))) as! [String: Any]
    }

    func testConfigErrorsNameTheKeyAndNeverShowIt() {
        let pem = goodConfig["private_key_pem"] as! String
        let body = pem.split(separator: "\n")[1]
        var cases: [([String: Any], String)] = []
        var c = goodConfig; c.removeValue(forKey: "private_key_pem"); cases.append((c, "private_key_pem"))
        c = goodConfig; c.removeValue(forKey: "key_id"); cases.append((c, "key_id"))
        c = goodConfig; c.removeValue(forKey: "issuer_id"); cases.append((c, "issuer_id"))
        c = goodConfig; c.removeValue(forKey: "bundle_id"); cases.append((c, "bundle_id"))
        c = goodConfig; c["extra"] = 1; cases.append((c, "unknown key \"extra\""))
        c = goodConfig; c["private_key_pem"] = FakeApple.text("p384.p8"); cases.append((c, "P-256"))
        c = goodConfig; c["private_key_pem"] = String(pem.dropLast(40)); cases.append((c, "PEM private key"))
        c = goodConfig; c["private_key_pem"] = FakeApple.text("leaf.pem"); cases.append((c, "PEM private key"))
        c = goodConfig; c["key_id"] = "ab/c"; cases.append((c, "key_id"))
        c = goodConfig; c["bundle_id"] = "a b"; cases.append((c, "bundle_id"))
        c = goodConfig; c["test_base_url"] = "http://127.0.0.1:8080/path"; cases.append((c, "test_base_url"))
        c = goodConfig; c["test_base_url"] = "https://evil.example"; cases.append((c, "test_base_url"))
        c = goodConfig; c["test_base_url"] = "http://127.0.0.1.evil.example"; cases.append((c, "test_base_url"))
        c = goodConfig; c["test_base_url"] = "http://localhost:99999x"; cases.append((c, "test_base_url"))
        c = goodConfig; c["key_id"] = 5; cases.append((c, "key_id"))
        for (config, expected) in cases {
            guard let e = signerError(config) else { XCTFail("accepted: \(expected)"); continue }
            XCTAssertEqual(e.status, .config, expected)
            XCTAssertTrue(e.message.contains(expected), "\(e.message) should name \(expected)")
            XCTAssertFalse(e.message.contains(body), "the key leaked into: \(e.message)")
        }
        XCTAssertNil(signerError(goodConfig))
        let s = try! FakeApple.signer()
        XCTAssertFalse("\(s)".contains(body))
        XCTAssertFalse(String(reflecting: s).contains("PRIVATE"))
    }

    func testTokenClaimsAndSignature() throws {
        let s = try FakeApple.signer()
        let t = try s.apiToken(nowMs: 1_767_225_600_999)
        let parts = t.token.split(separator: ".").map(String.init)
        XCTAssertEqual(parts.count, 3)
        let header = try JSONSerialization.jsonObject(with: Data(CompactJWS.base64URL(Array(parts[0].utf8))!)) as! [String: Any]
        let claims = try JSONSerialization.jsonObject(with: Data(CompactJWS.base64URL(Array(parts[1].utf8))!)) as! [String: Any]
        XCTAssertEqual(header as NSDictionary, ["alg": "ES256", "kid": "FAKEKEY123", "typ": "JWT"] as NSDictionary)
        XCTAssertEqual(claims["iss"] as? String, "57246542-96fe-1a63-e053-0824d011072a")
        XCTAssertEqual(claims["iat"] as? Int, 1_767_225_600)
        XCTAssertEqual(claims["exp"] as? Int, 1_767_225_900)
        XCTAssertEqual(claims["aud"] as? String, "appstoreconnect-v1")
        XCTAssertEqual(claims["bid"] as? String, "com.example.fake")
        XCTAssertEqual(t.expiresAtMs, 1_767_225_900_000)
        // The signature verifies with the developer's public key (SubjectPublicKeyInfo from PEM).
        let spki = Base64.decode(Array(FakeApple.text("developer.pub.pem").split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined().utf8))!
        let key = try XCTUnwrap(ES256.publicKey(spki: spki))
        XCTAssertTrue(ES256.verifyCompact(Array(t.token.utf8), key: key))
        var tampered = Array(t.token.utf8)
        tampered[parts[0].utf8.count + 5] ^= 1
        XCTAssertFalse(ES256.verifyCompact(tampered, key: key))
        // Lifetimes: at most an hour.
        XCTAssertNoThrow(try s.apiToken(nowMs: 0, lifetimeSeconds: 3600))
        XCTAssertThrowsError(try s.apiToken(nowMs: 0, lifetimeSeconds: 3601))
        XCTAssertThrowsError(try s.apiToken(nowMs: -1))
    }

    private func build(_ call: [String: Any], signer: Signer? = nil) -> Result<APIRequest, IAPVFailure> {
        let s = signer ?? (try! FakeApple.signer())
        let bytes = FakeApple.json(call)
        return bytes.withUnsafeBytes { raw in
            Result { () throws(IAPVFailure) -> APIRequest in try s.apiRequest(raw, nowMs: FakeApple.now) }
        }
    }

    static let id = "7E3FB20B-4CDB-47CC-936D-99D65F608138"
    static let lowerID = id.lowercased()
    /// A 1x1 PNG.
    static let pngBytes: [UInt8] = Base64.decode(Array("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==".utf8))!
    static let png = Base64.encode(pngBytes)
    static let consumptionV1: [String: Any] = [
        "customerConsented": true, "consumptionStatus": 1, "platform": 1, "sampleContentProvided": false, "deliveryStatus": 0,
        "appAccountToken": "", "accountTenure": 2, "playTime": 3, "lifetimeDollarsRefunded": 0, "lifetimeDollarsPurchased": 4,
        "userStatus": 1]

    func testEveryEndpointHasItsMethodAndPath() throws {
        let p = "https://api.storekit.apple.com/inApps"
        let m = "\(p)/v1/messaging"
        var cases: [([String: Any], String, String)] = [
            (["endpoint": "transaction_info", "transaction_id": "2001"], "GET", "\(p)/v1/transactions/2001"),
            (["endpoint": "transaction_history", "transaction_id": "2001"], "GET", "\(p)/v2/history/2001"),
            (["endpoint": "subscription_statuses", "transaction_id": "2001"], "GET", "\(p)/v1/subscriptions/2001"),
            (["endpoint": "order_lookup", "order_id": "MQ2X9Z"], "GET", "\(p)/v1/lookup/MQ2X9Z"),
            (["endpoint": "refund_history", "transaction_id": "2001"], "GET", "\(p)/v2/refund/lookup/2001"),
            (["endpoint": "app_transaction_info", "transaction_id": "2001"], "GET", "\(p)/v1/transactions/appTransactions/2001"),
            (["endpoint": "consumption_info", "transaction_id": "2001",
              "body": ["customerConsented": true, "sampleContentProvided": false, "deliveryStatus": "DELIVERED"]],
             "PUT", "\(p)/v2/transactions/consumption/2001"),
            (["endpoint": "set_app_account_token", "original_transaction_id": "1000",
              "body": ["appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138"]], "PUT", "\(p)/v1/transactions/1000/appAccountToken"),
            (["endpoint": "extend_renewal_date", "original_transaction_id": "1000",
              "body": ["extendByDays": 7, "extendReasonCode": 3, "requestIdentifier": "r-1"]], "PUT", "\(p)/v1/subscriptions/extend/1000"),
            (["endpoint": "mass_extend_renewal_date",
              "body": ["extendByDays": 7, "extendReasonCode": 1, "requestIdentifier": "r-2", "productId": "pro.monthly"]],
             "POST", "\(p)/v1/subscriptions/extend/mass"),
            (["endpoint": "mass_extend_status", "product_id": "pro.monthly", "request_identifier": "r-2"],
             "GET", "\(p)/v1/subscriptions/extend/mass/pro.monthly/r-2"),
            (["endpoint": "notification_history", "body": ["startDate": 1, "endDate": 2]], "POST", "\(p)/v1/notifications/history"),
            (["endpoint": "test_notification"], "POST", "\(p)/v1/notifications/test"),
            (["endpoint": "test_notification_status", "test_notification_token": "abc_123"], "GET", "\(p)/v1/notifications/test/abc_123"),
            (["endpoint": "finish_transaction", "transaction_id": "2001"], "POST", "\(p)/v1/transactions/2001/finish"),
            (["endpoint": "transaction_history_v1", "transaction_id": "2001"], "GET", "\(p)/v1/history/2001"),
            (["endpoint": "consumption_info_v1", "transaction_id": "2001", "body": Self.consumptionV1], "PUT", "\(p)/v1/transactions/consumption/2001"),
            (["endpoint": "upload_image", "image_identifier": Self.id, "body_base64": Self.png], "PUT", "\(m)/image/\(Self.lowerID)"),
            (["endpoint": "delete_image", "image_identifier": Self.id], "DELETE", "\(m)/image/\(Self.lowerID)"),
            (["endpoint": "list_images"], "GET", "\(m)/image/list"),
            (["endpoint": "upload_message", "message_identifier": Self.id, "body": ["header": "Stay", "body": "Half price"]],
             "PUT", "\(m)/message/\(Self.lowerID)"),
            (["endpoint": "delete_message", "message_identifier": Self.id], "DELETE", "\(m)/message/\(Self.lowerID)"),
            (["endpoint": "list_messages"], "GET", "\(m)/message/list"),
            (["endpoint": "configure_default_message", "product_id": "pro.monthly", "locale": "en-US", "body": ["messageIdentifier": Self.id]],
             "PUT", "\(m)/default/pro.monthly/en-US"),
            (["endpoint": "get_default_message", "product_id": "pro.monthly", "locale": "en-US"], "GET", "\(m)/default/pro.monthly/en-US"),
            (["endpoint": "delete_default_message", "product_id": "pro.monthly", "locale": "en-US"], "DELETE", "\(m)/default/pro.monthly/en-US"),
            (["endpoint": "configure_realtime_url", "body": ["realtimeURL": "https://example.com/retention"]], "PUT", "\(m)/realtime/url"),
            (["endpoint": "get_realtime_url"], "GET", "\(m)/realtime/url"),
            (["endpoint": "delete_realtime_url"], "DELETE", "\(m)/realtime/url"),
            (["endpoint": "initiate_performance_test", "body": ["originalTransactionId": "1000"]], "POST", "\(m)/performanceTest"),
            (["endpoint": "performance_test_result", "request_id": "req-1"], "GET", "\(m)/performanceTest/result/req-1"),
        ]
        let commerce: [([String: Any], String, String)] = AdvancedCommerceCallTests.calls.map { row in
            (row.call, "POST", "https://api.storekit.apple.com/advancedCommerce/v1/" + row.path)
        }
        cases += commerce
        XCTAssertEqual(Set(cases.map { $0.0["endpoint"] as! String }), Set(APIEndpoint.allCases.map(\.rawValue)))
        for (call, method, url) in cases {
            let r = try build(call).get()
            XCTAssertEqual(r.method, method, "\(call)")
            XCTAssertEqual(r.url, url)
            XCTAssertEqual(r.headers.first?.name, "Authorization")
            XCTAssertTrue(r.headers.first!.value.hasPrefix("Bearer ey"))
            XCTAssertEqual(r.body != nil, r.headers.contains { $0.name == "Content-Type" })
            // The result document says the same.
            let doc = resultDict(r.resultJSON())
            XCTAssertEqual(doc["url"] as? String, url)
            XCTAssertEqual(doc["method"] as? String, method)
        }
    }

    /// Retention Messaging: the image goes as its bytes (base64 in the result), messages as JSON in
    /// the table's order with UUIDs lower-cased, and what Apple would refuse is refused here.
    func testRetentionMessagingBodies() throws {
        let image = try build(["endpoint": "upload_image", "image_identifier": Self.id, "body_base64": Self.png,
                               "query": ["imageSize": "BULLET_POINT"]]).get()
        XCTAssertEqual(image.body, Self.pngBytes)
        XCTAssertTrue(image.headers.contains { $0.name == "Content-Type" && $0.value == "image/png" })
        XCTAssertTrue(image.url.hasSuffix("?imageSize=BULLET_POINT"), image.url)
        let doc = resultDict(image.resultJSON())
        XCTAssertTrue(doc["body"] is NSNull)
        XCTAssertEqual(doc["body_base64"] as? String, Self.png)

        let message = try build(["endpoint": "upload_message", "message_identifier": Self.id,
                                 "body": ["bulletPoints": [["altText": "a star", "imageIdentifier": Self.id, "text": "Ünïcode ✓"]],
                                          "body": "Half price for three months", "header": "Before you go",
                                          "image": ["altText": "A gift", "imageIdentifier": Self.id], "headerPosition": "ABOVE_IMAGE"]]).get()
        XCTAssertEqual(String(decoding: message.body!, as: UTF8.self),
                       #"{"header":"Before you go","body":"Half price for three months","image":{"imageIdentifier":"\#(Self.lowerID)","altText":"A gift"},"headerPosition":"ABOVE_IMAGE","bulletPoints":[{"text":"Ünïcode ✓","imageIdentifier":"\#(Self.lowerID)","altText":"a star"}]}"#)
        // 66 characters of header, counted as characters, not bytes.
        XCTAssertNoThrow(try build(["endpoint": "upload_message", "message_identifier": Self.id,
                                    "body": ["header": String(repeating: "é", count: 66), "body": "b"]]).get())

        let refused: [([String: Any], String)] = [
            (["endpoint": "upload_image", "image_identifier": Self.id, "body_base64": Base64.encode(Array("GIF89a....".utf8))], "not a PNG"),
            (["endpoint": "upload_image", "image_identifier": Self.id], "body_base64"),
            (["endpoint": "upload_image", "image_identifier": Self.id, "body": ["x": 1]], "body_base64"),
            (["endpoint": "upload_image", "image_identifier": "img-1", "body_base64": Self.png], "UUID"),
            (["endpoint": "delete_image", "image_identifier": "../x"], "UUID"),
            (["endpoint": "upload_message", "message_identifier": Self.id, "body": ["header": String(repeating: "a", count: 67), "body": "b"]], "66"),
            (["endpoint": "upload_message", "message_identifier": Self.id, "body": ["header": "h", "body": String(repeating: "b", count: 145)]], "144"),
            (["endpoint": "upload_message", "message_identifier": Self.id, "body": ["header": "h", "body": "b", "image": ["imageIdentifier": Self.id]]], "altText"),
            (["endpoint": "upload_message", "message_identifier": Self.id,
              "body": ["header": "h", "body": "b", "bulletPoints": Array(repeating: ["text": "t", "imageIdentifier": Self.id, "altText": "a"], count: 6)]], "at most 5"),
            (["endpoint": "upload_message", "message_identifier": Self.id, "body": ["header": "h", "body": "b", "headerPosition": "BELOW"]], "ABOVE_BODY"),
            (["endpoint": "configure_default_message", "product_id": "p", "locale": "en/US", "body": ["messageIdentifier": Self.id]], "delimiter"),
            (["endpoint": "configure_realtime_url", "body": ["realtimeURL": String(repeating: "u", count: 257)]], "256"),
            (["endpoint": "list_images", "body_base64": Self.png], "takes no body"),
            (["endpoint": "consumption_info_v1", "transaction_id": "1", "body": ["customerConsented": true]], "consumptionStatus"),
        ]
        for (call, words) in refused {
            switch build(call) {
            case .success: XCTFail("built \(call)")
            case .failure(let e):
                XCTAssertEqual(e.status, .invalidArgument)
                XCTAssertTrue(e.message.contains(words), "\(e.message) should say \(words)")
            }
        }
    }

    func testDeprecatedCallsSaySoAndLocalTestingNeedsItsURL() throws {
        let v1 = try build(["endpoint": "transaction_history_v1", "transaction_id": "2001", "query": ["sort": "DESCENDING"]]).get()
        XCTAssertTrue(v1.url.hasSuffix("/inApps/v1/history/2001?sort=DESCENDING"), v1.url)
        XCTAssertEqual(v1.deprecations, ["transaction_history_v1 is deprecated by Apple: call transaction_history instead"])
        switch build(["endpoint": "list_images", "environment": "LocalTesting"]) {
        case .success: XCTFail("LocalTesting without a base URL")
        case .failure(let e): XCTAssertTrue(e.message.contains("local_testing_base_url"), e.message)
        }
        var config = try JSONSerialization.jsonObject(with: Data(FakeApple.bytes("signer.json"))) as! [String: Any]
        config["local_testing_base_url"] = "http://storekit-mock.internal:8080"
        let json = try JSONSerialization.data(withJSONObject: config)
        let local = try json.withUnsafeBytes { raw throws(IAPVFailure) in try Signer(json: raw) }
        let r = try build(["endpoint": "list_images", "environment": "LocalTesting"], signer: local).get()
        XCTAssertEqual(r.url, "http://storekit-mock.internal:8080/inApps/v1/messaging/image/list")
        XCTAssertEqual(r.environment, .localTesting)
        config["local_testing_base_url"] = "http://host/path"
        let bad = try JSONSerialization.data(withJSONObject: config)
        XCTAssertThrowsError(try bad.withUnsafeBytes { raw throws(IAPVFailure) in try Signer(json: raw) })
    }

    func testHostsQueryAndBody() throws {
        var r = try build(["endpoint": "transaction_history", "environment": "Sandbox", "transaction_id": "2001", "revision": "a+b/c=",
                           "query": ["productType": ["AUTO_RENEWABLE", "CONSUMABLE"], "revoked": false, "startDate": 1_700_000_000_000,
                                     "productId": "pro monthly"]]).get()
        XCTAssertEqual(r.url, "https://api.storekit-sandbox.apple.com/inApps/v2/history/2001?revision=a%2Bb%2Fc%3D"
            + "&startDate=1700000000000&productId=pro%20monthly&productType=AUTO_RENEWABLE&productType=CONSUMABLE&revoked=false")
        r = try build(["endpoint": "transaction_info", "transaction_id": "2001"], signer: FakeApple.signer(base: "http://127.0.0.1:9")).get()
        XCTAssertEqual(r.url, "http://127.0.0.1:9/inApps/v1/transactions/2001")
        let split = try { () throws -> Signer in
            var config = goodConfig
            config["test_base_url"] = ["production": "http://127.0.0.1:8001", "sandbox": "http://localhost:8002"]
            let json = FakeApple.json(config)
            return try json.withUnsafeBytes { raw throws(IAPVFailure) in try Signer(json: raw) }
        }()
        XCTAssertEqual(try build(["endpoint": "transaction_info", "transaction_id": "1"], signer: split).get().url,
                       "http://127.0.0.1:8001/inApps/v1/transactions/1")
        XCTAssertEqual(try build(["endpoint": "transaction_info", "transaction_id": "1", "environment": "Sandbox"], signer: split).get().url,
                       "http://localhost:8002/inApps/v1/transactions/1")
        // Release 0.1's lowercase still works for one release, and the result says what to write.
        let old = try build(["endpoint": "transaction_info", "transaction_id": "1", "environment": "sandbox"], signer: split).get()
        XCTAssertEqual(old.environment, .sandbox)
        XCTAssertEqual(old.deprecations.count, 1)
        XCTAssertTrue(old.deprecations.first?.contains("write \"Sandbox\"") ?? false, "\(old.deprecations)")
        XCTAssertEqual(try build(["endpoint": "transaction_info", "transaction_id": "1", "environment": "Sandbox"], signer: split).get().deprecations, [])
        r = try build(["endpoint": "subscription_statuses", "transaction_id": "2001", "query": ["status": [1, 4]]]).get()
        XCTAssertTrue(r.url.hasSuffix("/v1/subscriptions/2001?status=1&status=4"))
        r = try build(["endpoint": "notification_history", "pagination_token": "tok-2",
                       "body": ["onlyFailures": true, "endDate": 2, "startDate": 1, "notificationType": "DID_RENEW"]]).get()
        XCTAssertTrue(r.url.hasSuffix("/v1/notifications/history?paginationToken=tok-2"))
        // The body is rewritten from validated fields in the table's order, never passed through.
        XCTAssertEqual(String(decoding: r.body!, as: UTF8.self),
                       #"{"startDate":1,"endDate":2,"notificationType":"DID_RENEW","onlyFailures":true}"#)
    }

    func testBadCallsAreInvalidArguments() {
        let cases: [([String: Any], String)] = [
            (["endpoint": "nope"], "unknown"),
            ([:], "endpoint"),
            (["endpoint": "transaction_info"], "needs call.transaction_id"),
            (["endpoint": "transaction_info", "transaction_id": "a/b"], "\"/\""),
            (["endpoint": "transaction_info", "transaction_id": "a?b"], "\"?\""),
            (["endpoint": "transaction_info", "transaction_id": "a#b"], "\"#\""),
            (["endpoint": "transaction_info", "transaction_id": ".."], ".."),
            (["endpoint": "transaction_info", "transaction_id": "a%2fb"], "\"%\""),
            (["endpoint": "transaction_info", "transaction_id": "a b"], "space"),
            (["endpoint": "transaction_info", "transaction_id": ""], "1-256"),
            (["endpoint": "transaction_info", "transaction_id": 5], "must be a string"),
            (["endpoint": "transaction_info", "transaction_id": "1", "order_id": "x"], "does not apply"),
            (["endpoint": "transaction_info", "transaction_id": "1", "query": ["sort": "ASCENDING"]], "not a filter"),
            (["endpoint": "transaction_history", "transaction_id": "1", "query": ["sort": "UP"]], "one of ASCENDING"),
            (["endpoint": "transaction_history", "transaction_id": "1", "query": ["revision": "x"]], "call.revision"),
            (["endpoint": "transaction_history", "transaction_id": "1", "query": ["startDate": "1"]], "integer"),
            (["endpoint": "subscription_statuses", "transaction_id": "1", "query": ["status": [6]]], "from 1 to 5"),
            (["endpoint": "transaction_info", "transaction_id": "1", "body": ["x": 1]], "takes no body"),
            (["endpoint": "consumption_info", "transaction_id": "1", "body": ["customerConsented": false, "sampleContentProvided": true,
                                                                              "deliveryStatus": "DELIVERED"]], "customerConsented"),
            (["endpoint": "consumption_info", "transaction_id": "1", "body": ["customerConsented": true]], "needs call.body.sampleContentProvided"),
            (["endpoint": "extend_renewal_date", "original_transaction_id": "1",
              "body": ["extendByDays": 91, "extendReasonCode": 1, "requestIdentifier": "r"]], "extendByDays"),
            (["endpoint": "set_app_account_token", "original_transaction_id": "1", "body": ["appAccountToken": "not-a-uuid"]], "UUID"),
            (["endpoint": "set_app_account_token", "original_transaction_id": "1", "body": ["appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138", "x": 1]], "not a field"),
            (["endpoint": "order_lookup", "order_id": "X", "environment": "Sandbox"], "only in production"),
            (["endpoint": "transaction_info", "transaction_id": "1", "environment": "Staging"], "environment"),
            (["endpoint": "transaction_info", "transaction_id": "1", "token_lifetime_seconds": 7200], "3600"),
        ]
        for (call, expected) in cases {
            switch build(call) {
            case .success(let r): XCTFail("built \(r.url) for \(call)")
            case .failure(let e):
                XCTAssertEqual(e.status, .invalidArgument)
                XCTAssertTrue(e.message.contains(expected), "\(e.message) should say \(expected)")
            }
        }
        for garbage in ["", "[]", "{", "null", String(repeating: "x", count: 300_000)] {
            let bytes = Array(garbage.utf8)
            let s = try! FakeApple.signer()
            XCTAssertThrowsError(try bytes.withUnsafeBytes { raw throws(IAPVFailure) in try s.apiRequest(raw, nowMs: 0) })
        }
    }
}
