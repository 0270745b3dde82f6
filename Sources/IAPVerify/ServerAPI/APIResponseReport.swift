// What interpreting an App Store Server API answer gives: the action, the paging token, what was
// verified, and Apple's subscription statuses beside the engine's. APIResponse.swift decides it.

/// The paging token to send with the next call.
public enum APINextPage: Sendable, Equatable {
    case revision(String)
    case paginationToken(String)
}

/// Apple's subscription status (1–5) for one subscription, beside the engine's own state.
public struct SubscriptionStatusCheck: Sendable {
    public var subscriptionGroupIdentifier: String?
    public var originalTransactionID: String
    public var appleStatus: Int64
    public var engineState: EntitlementState?
    public var agrees: Bool
}

public struct NotificationSummary: Sendable {
    public var type: String
    public var subtype: String?
    public var effect: NotificationEffect
    public var uuid: String?
    public var signedDateMs: Int64?
}

/// The checks an App Store Server API answer must pass before it is valid, in the order they run.
enum APICheck: CaseIterable, Sendable, AppRuleChecks {
    /// A 2xx status.
    case http
    /// A JSON object with the endpoint's required members (or the empty answer it gives).
    case shape
    /// The app rules on the answer's unsigned facts (Policy/AppPolicy.swift).
    case environment, bundle, appAppleID
    /// Every signed item verified, and the paging token read.
    case items
    /// An order lookup's status is 0 (valid).
    case order
}

public struct APIResponseReport: Sendable {
    /// Undecided until every check passed or one failed; an undecided report is never valid.
    var gate = CheckGate<APICheck>()
    public var judgement: Judgement { gate.judgement }
    public internal(set) var endpoint: APIEndpoint
    public internal(set) var environment: ServerEnvironment
    public internal(set) var httpStatus: Int64
    public internal(set) var action: NextAction
    public internal(set) var retryAfterMs: Int64?
    public internal(set) var errorCode: Int64?
    public internal(set) var errorMessage: String?
    public internal(set) var nextPage: APINextPage?
    /// Signed items verified in this answer.
    public internal(set) var signedItems = 0
    public internal(set) var transactions: [Transaction] = []
    public internal(set) var renewals: [RenewalInfo] = []
    /// The verified app transaction payload (app_transaction_info), as Apple signed it.
    public internal(set) var appTransactionJSON: [UInt8]?
    public internal(set) var notifications: [NotificationSummary] = []
    public internal(set) var statuses: [SubscriptionStatusCheck] = []
    /// Order lookup: Apple's 0 (valid) or 1 (invalid).
    public internal(set) var orderStatus: Int64?
    /// The answer's unsigned top-level fields (test notification token, extension results...).
    public internal(set) var unsignedJSON: [UInt8]?
    /// OCSP facts of the first signed item's certificate (or of the item that was refused).
    public internal(set) var revocation: RevocationReport?
    public internal(set) var entitlements: EntitlementReport?
    /// Old spellings the options used, each with what to write instead.
    public internal(set) var deprecations: [String] = []

    public var statusDisagreements: [SubscriptionStatusCheck] { statuses.filter { !$0.agrees } }

    /// Refused by its HTTP status (or before it: the answer is not a 2xx one).
    init(_ verdict: Verdict, _ reason: String, options: APIResponseOptions, endpoint: APIEndpoint, action: NextAction) {
        self.init(options: options, endpoint: endpoint)
        gate.fail(.http, verdict, reason)
        self.action = action
    }

    /// Undecided and rejecting: where a 2xx answer starts, so that a path that forgets to decide
    /// grants nothing. Only `accept(_:)`, after every check, makes it valid.
    init(options: APIResponseOptions, endpoint: APIEndpoint) {
        self.endpoint = endpoint
        environment = options.environment
        deprecations = options.deprecations
        httpStatus = options.httpStatus ?? 0
        action = .reject
    }

    /// The explicit pass: valid only through the gate, when every check of the answer ran and
    /// none failed (otherwise the answer stays undecided and rejected).
    mutating func accept(_ reason: String) {
        guard gate.pass(reason) else { return }
        action = nextPage == nil ? .accept : .nextPage
    }

    /// A failed check: the whole answer grants nothing.
    mutating func refuse(_ check: APICheck, _ verdict: Verdict, _ reason: String) {
        gate.fail(check, verdict, reason)
        action = .reject
        nextPage = nil
        transactions = []
        renewals = []
        appTransactionJSON = nil
        notifications = []
        statuses = []
        entitlements = nil
    }
}

/// Apple's error codes that say "try again".
