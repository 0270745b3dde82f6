// The record field tables: both spellings read into the same model, what the writer writes reads
// back unchanged, and required fields, wrong types and nested objects are named as before.

import XCTest
@testable import IAPVerify

final class RecordFieldTableTests: XCTestCase {
    private func document(_ json: String) throws -> JSONDocument {
        let bytes = Array(json.utf8)
        return try bytes.withUnsafeBytes { raw throws(IAPVFailure) in try JSONDocument(bytes: raw, what: "t", status: .invalidArgument) }
    }

    private func problem(_ json: String, _ casing: FieldCasing, _ flavour: FieldFlavour) throws -> String? {
        let doc = try document(json)
        do {
            _ = try TransactionRecord.read(doc.root, casing, flavour, path: "t")
            return nil
        } catch {
            return error.message
        }
    }

    func testSnakeAndCamelReadTheSameTransaction() throws {
        let snake = try document("""
            {"transaction_id":"7","product_id":"p","original_transaction_id":"6","quantity":"2","purchase_date":"2020-11-25 08:31:02 Etc/GMT",
             "expires_date_ms":"1606296662000","cancellation_date_ms":"1606290000000","cancellation_reason":"1","is_upgraded":"true",
             "in_app_ownership_type":"FAMILY_SHARED","promotional_offer_id":"o","price":"990","currency":"EUR",
             "commitment":{"billing_period_number":"3","commitment_price":"12000"}}
            """)
        let camel = try document("""
            {"transactionId":"7","productId":"p","originalTransactionId":"6","quantity":2,"purchaseDate":1606293062000,
             "expiresDate":1606296662000,"revocationDate":1606290000000,"revocationReason":1,"isUpgraded":true,
             "inAppOwnershipType":"FAMILY_SHARED","offerIdentifier":"o","price":990,"currency":"EUR",
             "commitmentInfo":{"billingPeriodNumber":3,"commitmentPrice":12000}}
            """)
        let a = try TransactionRecord.read(snake.root, .snake, .tolerant, path: "t")
        let b = try TransactionRecord.read(camel.root, .camel, .strict, path: "t")
        XCTAssertEqual(a, b)
        XCTAssertEqual(a.purchaseDateMs, 1_606_293_062_000)
        XCTAssertEqual(a.cancellationReason, "1")
        XCTAssertEqual(a.commerce.commitmentPrice, 12000)
        XCTAssertEqual(a.quantity, 2)

        // What the writer writes, the snake_case reader reads back unchanged.
        var w = JSONWriter()
        TransactionWriter.write(a, into: &w)
        let written = try document(String(decoding: w.bytes, as: UTF8.self))
        XCTAssertEqual(try TransactionRecord.read(written.root, .snake, .tolerant, path: "t"), a)
    }

    func testSignedTrialFlagsComeFromTheOffer() throws {
        let doc = try document(#"{"transactionId":"1","productId":"p","offerType":1,"offerDiscountType":"FREE_TRIAL"}"#)
        let t = try TransactionRecord.read(doc.root, .camel, .strict, path: "payload")
        XCTAssertTrue(t.isTrialPeriod)
        XCTAssertFalse(t.isInIntroOfferPeriod)
        // A signed payload's is_trial_period is not a member it has: a snake_case name is not read.
        let other = try document(#"{"transactionId":"1","productId":"p","is_trial_period":true,"transaction_id":"2"}"#)
        XCTAssertEqual(try TransactionRecord.read(other.root, .camel, .strict, path: "payload").transactionID, "1")
    }

    func testProblemsNameTheField() throws {
        XCTAssertEqual(try problem(#"{"quantity":"x"}"#, .snake, .tolerant), "t.transaction_id is missing")
        XCTAssertEqual(try problem(#"{"transaction_id":"1"}"#, .snake, .tolerant), "t.product_id is missing")
        XCTAssertEqual(try problem(#"{"transactionId":"1"}"#, .camel, .strict), "t.productId is missing")
        XCTAssertEqual(try problem(#"{"transaction_id":"1","product_id":"p","quantity":"x"}"#, .snake, .tolerant),
                       "t.quantity must be an integer, got a string")
        // Strict reading: a signed number is not text, and a signed reason is a number.
        XCTAssertEqual(try problem(#"{"transactionId":"1","productId":"p","quantity":"2"}"#, .camel, .strict),
                       "t.quantity must be an integer, got a string")
        XCTAssertEqual(try problem(#"{"transactionId":"1","productId":"p","revocationReason":"1"}"#, .camel, .strict),
                       "t.revocationReason must be an integer, got a string")
        XCTAssertEqual(try problem(#"{"transaction_id":"1","product_id":"p","purchase_date":"soon"}"#, .snake, .tolerant),
                       #"t.purchase_date is not a date Apple writes (ms, or "YYYY-MM-DD HH:MM:SS Etc/GMT")"#)
        XCTAssertEqual(try problem(#"{"transaction_id":"1","product_id":"p","commitment":5}"#, .snake, .tolerant),
                       "t.commitment must be an object, got an integer")
        XCTAssertEqual(try problem(#"{"transaction_id":"1","product_id":"p","commitment":{"commitment_price":true}}"#, .snake, .tolerant),
                       "t.commitment.commitment_price must be an integer, got a boolean")
        // Null and empty strings are absent.
        XCTAssertNil(try problem(#"{"transaction_id":"1","product_id":"p","quantity":null,"price":"","commitment":null}"#, .snake, .tolerant))
    }

    func testRenewalInfoReadsBothSpellings() throws {
        let snake = try document(#"{"original_transaction_id":"6","auto_renew_status":"1","grace_period_expires_date_ms":"5","eligible_win_back_offer_ids":["a"]}"#)
        let camel = try document(#"{"originalTransactionId":"6","autoRenewStatus":1,"gracePeriodExpiresDate":5,"eligibleWinBackOfferIds":["a"]}"#)
        let a = try RenewalInfo.read(snake.root, .snake, .tolerant, path: "r")
        XCTAssertEqual(a, try RenewalInfo.read(camel.root, .camel, .strict, path: "r"))
        XCTAssertEqual(a.autoRenewStatus, true)
        XCTAssertEqual(a.commerce.eligibleWinBackOfferIDs, ["a"])
    }
}
