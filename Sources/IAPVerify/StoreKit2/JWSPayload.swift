// Decoding JWS payloads (JWSTransactionDecodedPayload, JWSRenewalInfoDecodedPayload,
// AppTransaction, ResponseBodyV2DecodedPayload) into the normalised model the entitlement
// engine uses, transactions and renewal infos through their field tables (camelCase, read
// strictly). Dates are Unix ms, possibly fractional (Xcode): the whole part is kept.

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
            if data == nil, summary == nil, appData == nil, let token, try token.string("environment") == nil {
                // External purchase tokens name no environment: Apple marks a sandbox token by an
                // externalPurchaseId that starts with "SANDBOX".
                let id = try token.string("externalPurchaseId")
                report.environment = id.map { $0.utf8.starts(with: "SANDBOX".utf8) } == true ? .sandbox : .production
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
        if try f.string("transactionId") != nil {
            report.transaction = try TransactionRecord.read(root, .camel, .strict, path: "payload")
            if let info = try AdvancedCommerceInfo.read(f) { report.transaction?.commerce.advancedCommerce = info }
            report.appAccountToken = try f.string("appAccountToken")
            report.productType = try f.string("type")
            report.kind = .transaction
        } else if try isRenewalInfo(f) {
            report.renewal = try RenewalInfo.read(root, .camel, .strict, path: "payload")
            if let info = try AdvancedCommerceInfo.read(f) { report.renewal?.commerce.advancedCommerce = info }
            report.kind = .renewalInfo
        } else if try isAppTransaction(f) {
            report.kind = .appTransaction
        } else if let request = try realtimeRequest(f, signedDateMs: report.signedDateMs) {
            report.realtime = request
            report.kind = .realtimeRequest
        } else {
            // Signed data of no known shape: verified, checked by the app rule, granting nothing.
            report.kind = .unknown
        }
    }

    /// Apple's decodedRealtimeRequest: a request identifier and the subscriber's locale beside
    /// the subscription it is about. Every field is required once the shape is recognised.
    private static func realtimeRequest(_ f: FieldReader, signedDateMs: Int64?) throws(FieldProblem) -> RealtimeRequest? {
        guard let id = try f.string("requestIdentifier"), try f.string("userLocale") != nil else { return nil }
        guard let original = try f.string("originalTransactionId"), let product = try f.string("productId"),
              let locale = try f.string("userLocale"), let signed = signedDateMs else {
            throw FieldProblem(message: "payload: a realtime request needs originalTransactionId, productId, userLocale and signedDate")
        }
        return RealtimeRequest(originalTransactionID: original, productID: product, userLocale: locale,
                               requestIdentifier: id, appAppleID: try f.int("appAppleId"), signedDateMs: signed)
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
