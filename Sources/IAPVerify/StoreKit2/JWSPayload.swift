// Decoding JWS payloads (JWSTransactionDecodedPayload, JWSRenewalInfoDecodedPayload,
// AppTransaction, ResponseBodyV2DecodedPayload) into the normalised model the entitlement
// engine uses. Dates are Unix ms, possibly fractional (Xcode): the whole part is kept.

enum JWSPayloadDecoder {
    static func decode(_ root: JSONValue, into report: inout JWSReport) throws(FieldProblem) {
        let f = try FieldReader(root, path: "payload", .strict)   // signed: Apple fixes the types
        report.signedDateMs = try f.int("signedDate")
        if let type = try f.string("notificationType") {
            report.kind = .notification
            // Most notifications carry `data`; bulk renewal extensions carry `summary`, consent
            // changes `appData`, external purchase tokens `externalPurchaseToken`: each names the
            // bundle, and all but the last the environment.
            let data = try f.object("data")
            let token = try f.object("externalPurchaseToken")
            let summary = try f.object("summary")
            let appData = try f.object("appData")
            let scope = data ?? summary ?? appData ?? token
            report.environment = ReceiptEnvironment(appleName: try scope?.string("environment"))
            if report.environment == nil, let token, try token.string("environment") == nil {
                // External purchase tokens name no environment and carry no purchase: nothing in
                // them can grant access, so they are read as production data.
                report.environment = .production
            }
            report.bundleID = try scope?.string("bundleId")
            report.appAppleID = try scope?.int("appAppleId")
            let subtype = try f.string("subtype")
            report.notification = NotificationInfo(type: type, subtype: subtype,
                                                   uuid: try f.string("notificationUUID"), signedDateMs: report.signedDateMs,
                                                   effect: NotificationEffect.of(type: type, subtype: subtype))
            if scope == nil, type != "TEST", NotificationEffect.of(type: type, subtype: subtype) != .unknown {
                throw FieldProblem(message: "payload.data is missing from a \(type) notification")
            }
            return
        }
        // AppTransaction says receiptType where the others say environment.
        let environmentName = try f.string("environment")
        let receiptType = try f.string("receiptType")
        report.environment = ReceiptEnvironment(appleName: environmentName ?? receiptType)
        report.bundleID = try f.string("bundleId")
        report.appAppleID = try f.int("appAppleId")
        if let id = try f.string("transactionId") {
            guard let product = try f.string("productId") else { throw FieldProblem(message: "payload.productId is missing") }
            var t = Transaction(transactionID: id, productID: product)
            t.originalTransactionID = try f.string("originalTransactionId")
            t.quantity = try f.int("quantity") ?? 1
            t.purchaseDateMs = try f.int("purchaseDate")
            t.originalPurchaseDateMs = try f.int("originalPurchaseDate")
            t.expiresDateMs = try f.int("expiresDate")
            t.cancellationDateMs = try f.int("revocationDate")
            t.cancellationReason = try f.int("revocationReason").map { String($0) }   // Apple signs a number
            t.isUpgraded = try f.bool("isUpgraded") ?? false
            let offerType = try f.int("offerType")
            let discount = try f.string("offerDiscountType")
            t.isTrialPeriod = discount == "FREE_TRIAL"
            t.isInIntroOfferPeriod = offerType == 1 && discount != "FREE_TRIAL"
            t.ownershipType = try f.string("inAppOwnershipType")
            t.webOrderLineItemID = try f.string("webOrderLineItemId")
            t.promotionalOfferID = try f.string("offerIdentifier")
            t.subscriptionGroupIdentifier = try f.string("subscriptionGroupIdentifier")
            t.commerce = try commerce(f)
            report.transaction = t
            report.appAccountToken = try f.string("appAccountToken")
            report.productType = try f.string("type")
            report.kind = .transaction
        } else if try isRenewalInfo(f) {
            var r = RenewalInfo(originalTransactionID: try f.string("originalTransactionId") ?? "")
            r.productID = try f.string("productId")
            r.autoRenewProductID = try f.string("autoRenewProductId")
            r.autoRenewStatus = try f.flag("autoRenewStatus")
            r.expirationIntent = try f.int("expirationIntent")
            r.isInBillingRetryPeriod = try f.bool("isInBillingRetryPeriod")
            r.gracePeriodExpiresDateMs = try f.int("gracePeriodExpiresDate")
            r.priceIncreaseStatus = try f.int("priceIncreaseStatus")
            r.commerce = try renewalCommerce(f)
            report.renewal = r
            report.kind = .renewalInfo
        } else if try isAppTransaction(f) {
            report.kind = .appTransaction
        }
        // Otherwise the kind stays nil: signed data of no known shape, verified but granting nothing.
    }

    /// The commerce fields of a signed transaction (absent ones stay nil; a wrong type is an error).
    private static func commerce(_ f: FieldReader) throws(FieldProblem) -> CommerceFields {
        var c = CommerceFields()
        c.signedDateMs = try f.int("signedDate")
        c.revocationType = try f.string("revocationType")
        c.revocationPercentage = try f.int("revocationPercentage")
        c.offerType = try f.int("offerType")
        c.offerDiscountType = try f.string("offerDiscountType")
        c.offerPeriod = try f.string("offerPeriod")
        c.price = try f.int("price")
        c.currency = try f.string("currency")
        c.storefront = try f.string("storefront")
        c.storefrontID = try f.string("storefrontId")
        c.appAccountToken = try f.string("appAccountToken")
        c.appTransactionID = try f.string("appTransactionId")
        c.transactionReason = try f.string("transactionReason")
        c.type = try f.string("type")
        c.environment = try f.string("environment")
        c.billingPlanType = try f.string("billingPlanType")
        if let m = try f.object("commitmentInfo") {
            c.commitmentBillingPeriodNumber = try m.int("billingPeriodNumber")
            c.commitmentTotalBillingPeriods = try m.int("totalBillingPeriods")
            c.commitmentExpiresDateMs = try m.int("commitmentExpiresDate")
            c.commitmentPrice = try m.int("commitmentPrice")
        }
        return c
    }

    private static func renewalCommerce(_ f: FieldReader) throws(FieldProblem) -> RenewalCommerceFields {
        var c = RenewalCommerceFields()
        c.signedDateMs = try f.int("signedDate")
        c.renewalPrice = try f.int("renewalPrice")
        c.currency = try f.string("currency")
        c.offerType = try f.int("offerType")
        c.offerIdentifier = try f.string("offerIdentifier")
        c.offerDiscountType = try f.string("offerDiscountType")
        c.offerPeriod = try f.string("offerPeriod")
        c.renewalDateMs = try f.int("renewalDate")
        c.recentSubscriptionStartDateMs = try f.int("recentSubscriptionStartDate")
        c.eligibleWinBackOfferIDs = try f.stringArray("eligibleWinBackOfferIds")
        c.appAccountToken = try f.string("appAccountToken")
        c.appTransactionID = try f.string("appTransactionId")
        c.environment = try f.string("environment")
        c.renewalBillingPlanType = try f.string("renewalBillingPlanType")
        if let m = try f.object("commitmentInfo") {
            c.commitmentAutoRenewProductID = try m.string("commitmentAutoRenewProductId")
            c.commitmentAutoRenewStatus = try m.flag("commitmentAutoRenewStatus")
            c.commitmentRenewalBillingPlanType = try m.string("commitmentRenewalBillingPlanType")
            c.commitmentRenewalDateMs = try m.int("commitmentRenewalDate")
            c.commitmentRenewalPrice = try m.int("commitmentRenewalPrice")
        }
        return c
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
