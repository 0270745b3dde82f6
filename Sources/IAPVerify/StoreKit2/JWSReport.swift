// What verifying a StoreKit 2 JWS gives: its kind, the checks it passed, and the records it carries
// (transaction, renewal info, notification, realtime request). JWSVerification.swift decides it.

public enum JWSKind: String, Sendable, CaseIterable {
    case transaction
    case renewalInfo = "renewal_info"
    case appTransaction = "app_transaction"
    case notification
    /// A Retention Messaging realtime request: Apple asks the app's server what to show a
    /// subscriber who is about to cancel.
    case realtimeRequest = "realtime_request"
    /// Signed by Apple, but of no shape this library models: it grants nothing, and it is valid
    /// only when the app rule could check it (its bundle id or its app id matched).
    case unknown

    /// Kinds whose payload always names its bundle: one without a bundleId fails closed.
    var namesBundle: Bool {
        switch self {
        case .transaction, .appTransaction, .notification: return true
        case .renewalInfo, .realtimeRequest, .unknown: return false
        }
    }

    /// How results and reasons name the kind.
    var described: String {
        switch self {
        case .appTransaction: return "app transaction"
        case .renewalInfo: return "renewal info"
        case .realtimeRequest: return "realtime request"
        case .unknown: return "signed payload of an unknown kind"
        default: return rawValue
        }
    }
}

/// What the host should do with a Retention Messaging realtime request.
public enum RealtimeAction: String, Sendable {
    /// Answer it (see the `realtime_response` signature kind).
    case respond
    /// A requestIdentifier the host already answered.
    case ignoreDuplicate = "ignore_duplicate"
    /// Signed longer ago than the freshness window allows (or in the future): a replay.
    case ignoreStale = "ignore_stale"
    /// The token is not valid.
    case reject
}

/// A verified realtime request's fields (Apple's decodedRealtimeRequest).
public struct RealtimeRequest: Sendable {
    public internal(set) var originalTransactionID: String
    public internal(set) var productID: String
    public internal(set) var userLocale: String
    public internal(set) var requestIdentifier: String
    public internal(set) var appAppleID: Int64?
    public internal(set) var signedDateMs: Int64
    public internal(set) var action: RealtimeAction = .respond

    /// How far in the future a signedDate may be (clocks differ) before the request is a replay.
    static let futureToleranceMs: Int64 = 60_000
    /// Apple waits about a second for the answer: a request signed five minutes ago is a replay.
    public static let defaultMaxAgeMs: Int64 = 300_000
}

/// What the host should do with a notification, given what it already applied.
public enum NotificationAction: String, Sendable {
    case apply
    case ignoreStale = "ignore_stale"
    case ignoreDuplicate = "ignore_duplicate"
    /// The token is not valid: do nothing with it, whatever its stale/duplicate state.
    case reject
    /// Apple asks for consumption data about a refund request (CONSUMPTION_REQUEST): apply it
    /// and answer with the consumption_info endpoint.
    case sendConsumptionInfo = "send_consumption_info"
    /// A type or subtype this library does not know: keep it as data; it changes nothing.
    case recordOnly = "record_only"
}

public struct NotificationInfo: Sendable {
    public internal(set) var type: String
    public internal(set) var subtype: String?
    public internal(set) var uuid: String?
    public internal(set) var signedDateMs: Int64?
    public internal(set) var action: NotificationAction = .apply
    /// What the notification does to the subscriber's state.
    public internal(set) var effect: NotificationEffect = .unknown
    /// The nested signedTransactionInfo and signedRenewalInfo, each verified like the outer token.
    public internal(set) var transaction: Transaction?
    public internal(set) var renewal: RenewalInfo?
    /// A consent change's appData.signedAppTransactionInfo, verified like the outer token: the
    /// payload as Apple signed it.
    public internal(set) var appTransactionJSON: [UInt8]?
    /// EXTERNAL_PURCHASE_TOKEN notifications: the token.
    public internal(set) var externalPurchaseToken: ExternalPurchaseToken?
}

/// An external purchase token as a notification carries it (Apple's externalPurchaseToken).
public struct ExternalPurchaseToken: Sendable, Equatable {
    public internal(set) var externalPurchaseID: String?
    public internal(set) var tokenCreationDateMs: Int64?
    public internal(set) var appAppleID: Int64?
    public internal(set) var bundleID: String?
    /// Apple documents some values; any other is kept as given, never refused.
    public internal(set) var tokenType: String?
    public internal(set) var tokenExpirationDateMs: Int64?
}

/// The checks a JWS must pass before it is valid, in the order they run.
enum JWSCheck: CaseIterable, Sendable, AppRuleChecks {
    /// Compact JWS, an ES256 header with x5c, a JSON object payload.
    case token
    /// The facts read before trust (kind, dates, environment, bundle, app id).
    case facts
    /// The kind the caller (or the outer notification) asked for.
    case kind
    /// The chain at the validation instant, the signature by its leaf, the leaf's revocation.
    case signer
    /// The app rules (Policy/AppPolicy.swift).
    case environment, bundle, appAppleID
    /// A payload that names no app of its own: one of the app rules matched, or its kind was asked for.
    case appNamed
    /// The payload's records, built after the decision.
    case records
    /// A notification's nested signed data (skipped for every other token).
    case nested
}

public struct JWSReport: Sendable {
    /// Undecided until every check passed or one failed; an undecided report is never valid.
    var gate = CheckGate<JWSCheck>()
    public var judgement: Judgement { gate.judgement }
    public internal(set) var kind: JWSKind?
    public internal(set) var environment: PurchaseEnvironment?
    public internal(set) var bundleID: String?
    /// Apple's `appAppleId` when the payload carries one (notifications, app transactions).
    public internal(set) var appAppleID: Int64?
    public internal(set) var signedDateMs: Int64?
    /// The instant the certificate chain was validated at.
    public internal(set) var validatedAtMs: Int64?
    public internal(set) var chain: [CertificateSummary] = []
    /// OCSP facts of the leaf (nil until the chain verified).
    public internal(set) var revocation: RevocationReport?
    /// The decoded payload, as received (valid JSON: Jansson parsed it).
    public internal(set) var payloadJSON: [UInt8]?
    public internal(set) var transaction: Transaction?
    public internal(set) var renewal: RenewalInfo?
    public internal(set) var appAccountToken: String?
    public internal(set) var productType: String?
    public internal(set) var notification: NotificationInfo?
    public internal(set) var realtime: RealtimeRequest?
    public internal(set) var entitlements: EntitlementReport?

    public var verdict: Verdict { judgement.verdict }
    public var isValid: Bool { judgement.verdict == .valid }

    /// Refuses the token at `check`. What was decoded stays for logs, but no action says to use
    /// it: a host that reads only the action is as safe as one that reads the verdict.
    mutating func fail(_ check: JWSCheck, _ verdict: Verdict, _ reason: String) {
        gate.fail(check, verdict, reason)
        notification?.action = .reject
        realtime?.action = .reject
    }
}
