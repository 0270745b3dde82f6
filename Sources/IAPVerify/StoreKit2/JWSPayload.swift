// Decoding JWS payloads (JWSTransactionDecodedPayload, JWSRenewalInfoDecodedPayload,
// AppTransaction, ResponseBodyV2DecodedPayload) into the normalised model the entitlement
// engine uses. Dates are Unix ms, possibly fractional (Xcode): the whole part is kept.

enum JWSPayloadDecoder {
    static func decode(_ root: JSONValue, into report: inout JWSReport) throws(FieldProblem) {
        let f = try FieldReader(root, path: "payload")
        report.signedDateMs = try f.int("signedDate")
        if let type = try f.string("notificationType") {
            report.kind = .notification
            let data = try f.object("data")
            // Most notifications carry `data`; summary notifications (bulk renewal extensions)
            // carry `summary` with the same environment and bundle fields.
            var scope = data
            if scope == nil { scope = try f.object("summary") }
            report.environment = ReceiptEnvironment(appleName: try scope?.string("environment"))
            report.bundleID = try scope?.string("bundleId")
            report.notification = NotificationInfo(type: type, subtype: try f.string("subtype"),
                                                   uuid: try f.string("notificationUUID"), signedDateMs: report.signedDateMs)
            if type != "TEST", data == nil, try f.object("summary") == nil {
                throw FieldProblem(message: "payload.data is missing from a \(type) notification")
            }
            return
        }
        // AppTransaction says receiptType where the others say environment.
        let environmentName = try f.string("environment")
        let receiptType = try f.string("receiptType")
        report.environment = ReceiptEnvironment(appleName: environmentName ?? receiptType)
        report.bundleID = try f.string("bundleId")
        if let id = try f.string("transactionId") {
            guard let product = try f.string("productId") else { throw FieldProblem(message: "payload.productId is missing") }
            var t = Transaction(transactionID: id, productID: product)
            t.originalTransactionID = try f.string("originalTransactionId")
            t.quantity = try f.int("quantity") ?? 1
            t.purchaseDateMs = try f.int("purchaseDate")
            t.originalPurchaseDateMs = try f.int("originalPurchaseDate")
            t.expiresDateMs = try f.int("expiresDate")
            t.cancellationDateMs = try f.int("revocationDate")
            t.cancellationReason = try f.string("revocationReason")
            t.isUpgraded = try f.bool("isUpgraded") ?? false
            let offerType = try f.int("offerType")
            let discount = try f.string("offerDiscountType")
            t.isTrialPeriod = discount == "FREE_TRIAL"
            t.isInIntroOfferPeriod = offerType == 1 && discount != "FREE_TRIAL"
            t.ownershipType = try f.string("inAppOwnershipType")
            t.webOrderLineItemID = try f.string("webOrderLineItemId")
            t.promotionalOfferID = try f.string("offerIdentifier")
            t.subscriptionGroupIdentifier = try f.string("subscriptionGroupIdentifier")
            report.transaction = t
            report.appAccountToken = try f.string("appAccountToken")
            report.productType = try f.string("type")
            report.kind = .transaction
        } else if try isRenewalInfo(f) {
            var r = RenewalInfo(originalTransactionID: try f.string("originalTransactionId") ?? "")
            r.productID = try f.string("productId")
            r.autoRenewProductID = try f.string("autoRenewProductId")
            r.autoRenewStatus = try f.bool("autoRenewStatus")
            r.expirationIntent = try f.int("expirationIntent")
            r.isInBillingRetryPeriod = try f.bool("isInBillingRetryPeriod")
            r.gracePeriodExpiresDateMs = try f.int("gracePeriodExpiresDate")
            report.renewal = r
            report.kind = .renewalInfo
        } else if try isAppTransaction(f) {
            report.kind = .appTransaction
        }
        // Otherwise the kind stays nil: signed data of no known shape, verified but granting nothing.
    }

    private static func isRenewalInfo(_ f: FieldReader) throws(FieldProblem) -> Bool {
        guard try f.string("originalTransactionId") != nil else { return false }
        if try f.string("autoRenewProductId") != nil { return true }
        return try f.int("autoRenewStatus") != nil
    }

    private static func isAppTransaction(_ f: FieldReader) throws(FieldProblem) -> Bool {
        if try f.string("applicationVersion") != nil { return true }
        return try f.string("originalApplicationVersion") != nil
    }
}
