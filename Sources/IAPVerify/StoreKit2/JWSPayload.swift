// Decoding JWS payloads (JWSTransactionDecodedPayload, JWSRenewalInfoDecodedPayload,
// AppTransaction, ResponseBodyV2DecodedPayload) in two steps. Before the signature only the facts
// the verdict rests on are read (`JWSFacts`: the kind, the dates, the environment and the app);
// the records the entitlement engine uses (transactions and renewal infos through their field
// tables, camelCase, read strictly; the notification; the realtime request) are built after it.
// Dates are Unix ms, possibly fractional (Xcode): the whole part is kept.

/// What the chain, the signature and the app rule are decided on, read before any of them.
struct JWSFacts {
    /// Nil until the payload's shape is recognised.
    var kind: JWSKind?
    /// The validation instant: signedDate, else (app transactions) receiptCreationDate.
    var signedDateMs: Int64?, creationDateMs: Int64?
    /// What the environment and app rules check.
    var environment: PurchaseEnvironment?, bundleID: String?, appAppleID: Int64?
    /// A notification's type, and whether it carries one of the objects that scope it to an app.
    var notificationType: String?, notificationScoped = false

    /// Reads the facts in the payload's order; on a problem, those read so far stay set.
    mutating func read(_ root: JSONValue) throws(FieldProblem) {
        let f = try FieldReader(root, path: "payload", .strict)   // signed: Apple fixes the types
        signedDateMs = try f.int("signedDate")
        if let type = try f.string("notificationType") {
            kind = .notification
            notificationType = type
            try readNotificationScope(f)
            return
        }
        // AppTransaction says receiptType where the others say environment.
        let environmentName = try f.string("environment")
        let receiptType = try f.string("receiptType")
        environment = PurchaseEnvironment(appleName: environmentName ?? receiptType)
        bundleID = try f.string("bundleId")
        appAppleID = try f.int("appAppleId")
        kind = try Self.shape(f)
        creationDateMs = try? f.int("receiptCreationDate")
    }

    /// What the app rules and the signer check read, before the token is trusted. The validation
    /// time is signedDate, else receiptCreationDate (app transactions), else now: an old
    /// notification without signedDate is checked now, as Apple's verifier checks it (its nested
    /// transaction's date is not the outer token's own).
    func policyFacts(nowMs: Int64) -> PolicyFacts {
        let kind = kind ?? .unknown
        return PolicyFacts(environment: environment.map { .named($0) } ?? .refused(.environmentRejected, "the JWS names no known environment"),
                           bundle: bundleID != nil || kind.namesBundle ? .text(bundleID) : .unnamed,
                           appAppleID: appAppleID, validatedAtMs: signedDateMs ?? creationDateMs ?? nowMs,
                           what: kind.described, environmentWhat: "JWS")
    }

    /// Most notifications carry `data`; bulk renewal extensions carry `summary`, consent changes
    /// `appData`, external purchase tokens `externalPurchaseToken`: each names the bundle, and all
    /// but the last the environment.
    private mutating func readNotificationScope(_ f: FieldReader) throws(FieldProblem) {
        let data = try f.object("data")
        let token = try f.object("externalPurchaseToken")
        let summary = try f.object("summary")
        let appData = try f.object("appData")
        let scope = data ?? summary ?? appData ?? token
        notificationScoped = scope != nil
        environment = PurchaseEnvironment(appleName: try scope?.string("environment"))
        if data == nil, summary == nil, appData == nil, let token, try token.string("environment") == nil {
            // External purchase tokens name no environment: Apple marks a sandbox token by an
            // externalPurchaseId that starts with "SANDBOX".
            let id = try token.string("externalPurchaseId")
            environment = id.map { $0.utf8.starts(with: "SANDBOX".utf8) } == true ? .sandbox : .production
        }
        bundleID = try scope?.string("bundleId")
        appAppleID = try scope?.int("appAppleId")
        creationDateMs = try? f.int("receiptCreationDate")
    }

    /// The kind of a payload that is not a notification, by the fields only its shape has.
    private static func shape(_ f: FieldReader) throws(FieldProblem) -> JWSKind {
        if try f.string("transactionId") != nil { return .transaction }
        if try isRenewalInfo(f) { return .renewalInfo }
        if try isAppTransaction(f) { return .appTransaction }
        if try isRealtimeRequest(f) { return .realtimeRequest }
        // Signed data of no known shape: verified, checked by the app rule, granting nothing.
        return .unknown
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

    /// Apple's decodedRealtimeRequest: a request identifier beside the subscriber's locale.
    private static func isRealtimeRequest(_ f: FieldReader) throws(FieldProblem) -> Bool {
        guard try f.string("requestIdentifier") != nil else { return false }
        return try f.string("userLocale") != nil
    }

    /// The facts a report shows, also when the token is refused.
    func show(in report: inout JWSReport) {
        report.signedDateMs = signedDateMs
        report.environment = environment
        report.bundleID = bundleID
        report.appAppleID = appAppleID
    }
}

/// The records of a payload whose facts were read, into the report. The report names the kind once
/// its record is read (a notification's at once).
enum JWSRecords {
    static func build(_ root: JSONValue, _ facts: JWSFacts, into report: inout JWSReport) throws(FieldProblem) {
        let f = try FieldReader(root, path: "payload", .strict)
        switch facts.kind {
        case .notification:
            report.kind = .notification
            let type = facts.notificationType ?? ""
            let subtype = try f.string("subtype")
            let effect = NotificationEffect.of(type: type, subtype: subtype)
            report.notification = NotificationInfo(type: type, subtype: subtype,
                                                   uuid: try f.string("notificationUUID"), signedDateMs: facts.signedDateMs,
                                                   effect: effect)
            if let token = try f.object("externalPurchaseToken") {
                report.notification?.externalPurchaseToken = ExternalPurchaseToken(
                    externalPurchaseID: try token.string("externalPurchaseId"), tokenCreationDateMs: try token.int("tokenCreationDate"),
                    appAppleID: try token.int("appAppleId"), bundleID: try token.string("bundleId"),
                    tokenType: try token.string("tokenType"), tokenExpirationDateMs: try token.int("tokenExpirationDate"))
            }
            if !facts.notificationScoped, type != "TEST", effect != .unknown {
                throw FieldProblem(message: "payload.data is missing from a \(type) notification")
            }
        case .transaction:
            report.transaction = try TransactionRecord.read(root, .camel, .strict, path: "payload")
            if let info = try AdvancedCommerceInfo.read(f) { report.transaction?.commerce.advancedCommerce = info }
            report.appAccountToken = try f.string("appAccountToken")
            report.productType = try f.string("type")
            report.kind = .transaction
        case .renewalInfo:
            report.renewal = try RenewalInfo.read(root, .camel, .strict, path: "payload")
            if let info = try AdvancedCommerceInfo.read(f) { report.renewal?.commerce.advancedCommerce = info }
            report.kind = .renewalInfo
        case .realtimeRequest:
            report.realtime = try realtimeRequest(f, signedDateMs: facts.signedDateMs)
            report.kind = .realtimeRequest
        case .appTransaction, .unknown, nil:
            report.kind = facts.kind
        }
    }

    /// Every field of a realtime request is required once the shape is recognised.
    private static func realtimeRequest(_ f: FieldReader, signedDateMs: Int64?) throws(FieldProblem) -> RealtimeRequest {
        guard let id = try f.string("requestIdentifier"), let original = try f.string("originalTransactionId"),
              let product = try f.string("productId"), let locale = try f.string("userLocale"), let signed = signedDateMs else {
            throw FieldProblem(message: "payload: a realtime request needs originalTransactionId, productId, userLocale and signedDate")
        }
        return RealtimeRequest(originalTransactionID: original, productID: product, userLocale: locale,
                               requestIdentifier: id, appAppleID: try f.int("appAppleId"), signedDateMs: signed)
    }
}
