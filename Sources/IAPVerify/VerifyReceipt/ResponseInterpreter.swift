// Interpreting the JSON body a host got back from Apple's /verifyReceipt.
// The status decides what the host does next (`action`); a status-0 body must also pass the
// checks a receipt passes, because a body proves nothing by itself (a fake server says 0).

/// How the response carries its receipt: iOS 7+ (`receipt` with `in_app`) or iOS 6 (one
/// transaction at the top level).
public enum ResponseStyle: String, Sendable, CaseIterable {
    case ios7, ios6
}

/// The receipt fields a response carries (iOS 7 `receipt`, or the iOS 6 top-level transaction).
public struct ResponseReceipt: Sendable {
    public internal(set) var style: ResponseStyle
    public internal(set) var receiptType: String?
    public internal(set) var bundleID: String?
    public internal(set) var appVersion: String?
    public internal(set) var originalAppVersion: String?
    public internal(set) var creationDateMs: Int64?
    public internal(set) var requestDateMs: Int64?
    public internal(set) var originalPurchaseDateMs: Int64?
    public internal(set) var expirationDateMs: Int64?
    public internal(set) var appItemID: String?
    public internal(set) var downloadID: String?
    public internal(set) var versionExternalIdentifier: String?
    public internal(set) var latestReceiptPresent = false
}

/// The checks a /verifyReceipt body must pass before it is valid, in the order they run.
enum ResponseCheck: CaseIterable, Sendable, AppRuleChecks {
    /// A JSON object with a numeric status.
    case document
    /// Apple's status accepts the receipt (0, or 21006 for an expired subscription).
    case status
    /// The receipt object, its transactions and renewal infos read.
    case receipt
    /// The app rules (Policy/AppPolicy.swift).
    case environment, bundle, appAppleID
}

public struct ResponseReport: Sendable {
    /// Undecided until every check passed or one failed; an undecided report is never valid.
    var gate: CheckGate<ResponseCheck>
    public var judgement: Judgement { gate.judgement }
    public internal(set) var status: Int64?
    public internal(set) var action: NextAction
    public internal(set) var retryAfterMs: Int64?
    public internal(set) var environment: PurchaseEnvironment?
    public internal(set) var receipt: Optional<ResponseReceipt>
    public internal(set) var transactions: [Transaction]
    /// The body's renewal infos, then the host's: those the engine weighed.
    public internal(set) var renewals: [RenewalInfo]
    /// Filled only for an accepted, valid body.
    public internal(set) var entitlements: Optional<EntitlementReport>
    /// Old spellings the options used, each with what to write instead.
    public internal(set) var deprecations: [String]

    // Every init sets every field once, and no field has a default value (`Optional<T>` is
    // spelled out because `T?` would default to nil): an init that stored defaults and then
    // overwrote them kept `self` in memory and copied it out (every list and text retained and
    // released).

    public var verdict: Verdict { judgement.verdict }
    public var isValid: Bool { judgement.verdict == .valid }
    /// The decoded fields came from Apple with status 0 or 21006 and passed the checks.
    public var trusted: Bool { isValid }

    /// Refused at `check`: the checks after it stay `not_run`.
    init(_ verdict: Verdict, _ reason: String, at check: ResponseCheck, status: Int64?, action: NextAction, deprecations: [String] = []) {
        var gate = CheckGate<ResponseCheck>()
        gate.fail(check, verdict, reason)
        self.init(gate: gate, status: status, action: action, retryAfterMs: nil, environment: nil,
                  receipt: nil, transactions: [], renewals: [], entitlements: nil, deprecations: deprecations)
    }

    private init(gate: CheckGate<ResponseCheck>, status: Int64?, action: NextAction, retryAfterMs: Int64?, environment: PurchaseEnvironment?,
                 receipt: ResponseReceipt?, transactions: [Transaction], renewals: [RenewalInfo], entitlements: EntitlementReport?,
                 deprecations: [String]) {
        self.gate = gate
        self.status = status
        self.action = action
        self.retryAfterMs = retryAfterMs
        self.environment = environment
        self.receipt = receipt
        self.transactions = transactions
        self.renewals = renewals
        self.entitlements = entitlements
        self.deprecations = deprecations
    }

    /// Undecided and rejecting: a report nobody decided grants nothing. Only
    /// `init(accepted:...)`, with a gate every check passed, makes one valid.
    init(undecidedStatus status: Int64, deprecations: [String] = []) {
        self.init(gate: CheckGate(), status: status, action: .reject, retryAfterMs: nil, environment: nil,
                  receipt: nil, transactions: [], renewals: [], entitlements: nil, deprecations: deprecations)
    }

    /// The end of an accepted body: the gate passes only when every check of it ran and none
    /// failed; a gate that does not pass leaves the report undecided, rejecting.
    init(accepted reason: String, gate: CheckGate<ResponseCheck>, status: Int64, environment: PurchaseEnvironment?, receipt: ResponseReceipt,
         transactions: [Transaction], renewals: [RenewalInfo], entitlements: EntitlementReport, deprecations: [String]) {
        var gate = gate
        let valid = gate.pass(reason)
        self.init(gate: gate, status: status, action: valid ? .accept : .reject, retryAfterMs: nil, environment: environment,
                  receipt: receipt, transactions: transactions, renewals: renewals, entitlements: entitlements,
                  deprecations: deprecations)
    }
}

/// Statuses Apple documents as temporary.
private func isRetryableStatus(_ s: Int64) -> Bool {
    s == 21002 || s == 21005 || s == 21009 || (21100...21199).contains(s)
}

/// Interprets /verifyReceipt answers with the verifier's rules.
struct ResponseChecker: Checker {
    let context: CheckContext

    /// "Apple accepted the receipt (status 0) for <bundle> in <environment>", in one allocation
    /// with its bytes copied in (interpolated, it was made and then grown; appended, each part
    /// went through String's append).
    private static func acceptedReason(_ bundle: String, _ environment: PurchaseEnvironment) -> String {
        let head: StaticString = "Apple accepted the receipt (status 0) for ", middle: StaticString = " in "
        var bundle = bundle, env = environment.rawValue
        return bundle.withUTF8 { b in
            env.withUTF8 { e in
                let n = head.utf8CodeUnitCount + b.count + middle.utf8CodeUnitCount + e.count
                return String(unsafeUninitializedCapacity: n) { out in
                    var at = out.baseAddress!
                    func put(_ from: UnsafePointer<UInt8>?, _ count: Int) {
                        if let from, count > 0 { at.initialize(from: from, count: count) }
                        at += count
                    }
                    put(head.utf8Start, head.utf8CodeUnitCount)
                    put(b.baseAddress, b.count)
                    put(middle.utf8Start, middle.utf8CodeUnitCount)
                    put(e.baseAddress, e.count)
                    return n
                }
            }
        }
    }

    func interpret(_ body: UnsafeRawBufferPointer, options: ResponseOptions, nowMs: Int64) throws(IAPVFailure) -> ResponseReport {
        // Every report is made with the options' deprecations: one changed after it was made was
        // copied whole on its way out (every text and list retained, then released).
        interpretBody(body, options: options, nowMs: nowMs)
    }

    /// A temporary status, an HTTP error or no answer: one retry rule (Policy/Retry.swift).
    private static func temporary(_ what: String, isTemporary: String, status: Int64?, options: ResponseOptions) -> ResponseReport {
        let (action, retryAfterMs) = RetryAfter.temporary(attempt: options.attempt)
        var r = ResponseReport(.temporarilyUnavailable, action == .giveUp
            ? "\(what) after \(options.attempt) attempts: give up and store it for later"
            : "\(isTemporary): retry later", at: .status, status: status, action: action, deprecations: options.deprecations)
        r.retryAfterMs = retryAfterMs
        return r
    }

    private func interpretBody(_ body: UnsafeRawBufferPointer, options: ResponseOptions, nowMs: Int64) -> ResponseReport {
        // Not a 200: there is no body to read (a proxy's error page proves nothing); Apple is unavailable.
        if let http = options.httpStatus, http != 200 {
            let what = http == 0 ? "no answer from /verifyReceipt (refused, reset or timed out)" : "HTTP \(http) from /verifyReceipt"
            return Self.temporary(what, isTemporary: http == 0 ? what : "\(what), Apple unavailable", status: nil, options: options)
        }
        let endpoint = options.environment
        let doc: JSONDocument
        switch JSONDocument.parse(body, what: "the response", status: .invalidArgument) {
        case .success(let d): doc = d
        case .failure(let error): return ResponseReport(.malformed, error.message, at: .document, status: nil, action: .reject, deprecations: options.deprecations)
        }
        let root = doc.root
        guard root.kind == .object else {
            return ResponseReport(.malformed, "the response is not a JSON object", at: .document, status: nil, action: .reject,
                                  deprecations: options.deprecations)
        }
        guard let statusValue = root[literal: "status"], let status = statusValue.tolerantInt() else {
            let hint = root[literal: "unified_receipt"] != nil
                ? "; this looks like a server notification (V1): interpret its unified_receipt instead" : ""
            return ResponseReport(.malformed, "the response has no numeric status\(hint)", at: .document, status: nil, action: .reject,
                                  deprecations: options.deprecations)
        }
        switch status {
        case 0, 21006:
            return acceptedBody(root, status: status, endpoint: endpoint, options: options, nowMs: nowMs)
        case 21007:
            let retry = endpoint == .production && config.environments.contains(.sandbox)
            return ResponseReport(.wrongEnvironment, retry
                ? "a sandbox receipt was sent to production: call the sandbox endpoint"
                : endpoint == .production
                    ? "a sandbox receipt was sent to production, and this config does not accept Sandbox"
                    : "21007 from the sandbox endpoint: not retrying (no sandbox/production loop)",
                at: .status, status: status, action: retry ? .retrySandbox : .reject, deprecations: options.deprecations)
        case 21008:
            let retry = endpoint == .sandbox
            return ResponseReport(.wrongEnvironment, retry
                ? "a production receipt was sent to sandbox: call the production endpoint"
                : "21008 from the production endpoint: not retrying (no sandbox/production loop)",
                at: .status, status: status, action: retry ? .retryProduction : .reject, deprecations: options.deprecations)
        case 21004:
            return ResponseReport(.configurationError, "Apple rejected the shared secret (21004): fix the password you send",
                                  at: .status, status: status, action: .fixConfiguration, deprecations: options.deprecations)
        case let s where isRetryableStatus(s):
            let flag = root[literal: "is-retryable"]?.tolerantBool() ?? root[literal: "is_retryable"]?.tolerantBool()
            if flag == false {
                return ResponseReport(.rejectedByApple, "Apple says status \(s) is not retryable", at: .status, status: s, action: .reject,
                                      deprecations: options.deprecations)
            }
            return Self.temporary("status \(s)", isTemporary: "status \(s) is temporary", status: s, options: options)
        default:
            return ResponseReport(.rejectedByApple, "Apple rejected the receipt with status \(status)", at: .status, status: status,
                                  action: .reject,
                                  deprecations: options.deprecations)
        }
    }

    /// Status 0 or 21006: read the body, then the app rules, then the engine.
    private func acceptedBody(_ root: JSONValue, status: Int64, endpoint: ServerEnvironment, options: ResponseOptions,
                              nowMs: Int64) -> ResponseReport {
        var gate = CheckGate<ResponseCheck>()
        gate.mark(.document, .ok)
        gate.mark(.status, .ok)
        let body: AcceptedBody
        switch Self.read(root, status: status) {
        case .success(let b): body = b
        case .failure(let problem):
            return ResponseReport(.malformed, problem.message, at: .receipt, status: status, action: .reject, deprecations: options.deprecations)
        }
        gate.mark(.receipt, .ok)
        // The same app rules, in the same order, as a receipt, a JWS and an API answer.
        let facts = Self.policyFacts(root, body.receipt, endpoint: endpoint)
        if let (check, verdict, why) = config.applyAppRules(facts, marking: &gate) {
            var r = ResponseReport(verdict, why, at: check, status: status, action: .reject, deprecations: options.deprecations)
            r.environment = facts.environment.known
            r.receipt = body.receipt
            return r
        }
        let environment = facts.environment.known
        let grants = entitlements(body.transactions, ownRenewals: body.renewals, host: options.host, nowMs: nowMs)
        return ResponseReport(accepted: status == 21006
                                  ? "Apple answered 21006: the receipt is valid and its subscription has expired"
                                  : Self.acceptedReason(body.receipt.bundleID ?? "any app", environment ?? .production),
                              gate: gate, status: status, environment: environment, receipt: body.receipt, transactions: body.transactions,
                              renewals: body.renewals + options.host.renewalInfo, entitlements: grants, deprecations: options.deprecations)
    }

    /// What an accepted body holds: its receipt, transactions and renewal infos.
    private struct AcceptedBody {
        let receipt: ResponseReceipt
        let transactions: [Transaction]
        let renewals: [RenewalInfo]
    }

    /// The receipt, in_app ∪ latest_receipt_info (by transaction id, the latest info winning) and
    /// the renewal infos (an iOS 6 body carries its renewal state at the top level).
    private static func read(_ root: JSONValue, status: Int64) -> Result<AcceptedBody, FieldProblem> {
        guard let receiptValue = root[literal: "receipt"], receiptValue.kind == .object else {
            return .failure(FieldProblem(message: "status \(status) without a receipt object grants nothing"))
        }
        let ios6 = receiptValue[literal: "bid"] != nil && receiptValue[literal: "bundle_id"] == nil
        do {
            let receipt = try Self.receipt(receiptValue, root: root, ios6: ios6)
            // A product id repeated in transactions and renewal infos: one String for all.
            var texts = RecentTexts()
            let transactions: [Transaction]
            if ios6 {
                var union = TransactionUnion.ByID()
                union.add([try TransactionJSON.transaction(receiptValue, path: "receipt")])
                union.add(try TransactionJSON.transactions(root[literal: "latest_receipt_info"], path: "latest_receipt_info"))
                union.add(try TransactionJSON.transactions(root[literal: "latest_expired_receipt_info"], path: "latest_expired_receipt_info"))
                transactions = union.transactions
            } else {
                transactions = try TransactionUnion.of([(receiptValue[literal: "in_app"], "receipt.in_app"),
                                                        (root[literal: "latest_receipt_info"], "latest_receipt_info")],
                                                       texts: &texts)
            }
            var renewals = try TransactionJSON.renewalInfos(root[literal: "pending_renewal_info"], path: "pending_renewal_info",
                                                            texts: &texts)
            if ios6, let chain = transactions.last?.chainID, let r = try ios6Renewal(root, chain: chain) { renewals.append(r) }
            return .success(AcceptedBody(receipt: receipt, transactions: transactions, renewals: renewals))
        } catch {
            return .failure(error)
        }
    }

    /// An iOS 6 body's top-level renewal state, when it has one.
    private static func ios6Renewal(_ root: JSONValue, chain: String) throws(FieldProblem) -> RenewalInfo? {
        let top = try FieldReader(root, path: "response", .tolerant)
        var r = RenewalInfo(originalTransactionID: chain)
        r.autoRenewStatus = try top.bool("auto_renew_status")
        r.autoRenewProductID = try top.string("auto_renew_product_id")
        r.expirationIntent = try top.int("expiration_intent")
        r.isInBillingRetryPeriod = try top.bool("is_in_billing_retry_period")
        return r.autoRenewStatus != nil || r.expirationIntent != nil || r.isInBillingRetryPeriod != nil ? r : nil
    }

    /// The app rules' facts: the body's environment (else the receipt type's, else the endpoint's)
    /// and the receipt's bundle id, which a body must carry.
    private static func policyFacts(_ root: JSONValue, _ receipt: ResponseReceipt, endpoint: ServerEnvironment) -> PolicyFacts {
        let environment: PurchaseEnvironment?
        if let env = root[literal: "environment"]?.string {
            environment = PurchaseEnvironment(appleName: env)
        } else if let type = receipt.receiptType {
            environment = PurchaseEnvironment(appleName: type)
        } else {
            environment = endpoint == .sandbox ? .sandbox : .production
        }
        return PolicyFacts(environment: environment.map { .named($0) }
                               ?? .refused(.environmentRejected, "the response is from an unknown environment, which no config accepts"),
                           bundle: .text(receipt.bundleID), what: "response")
    }

    /// The receipt object's own fields (`receipt`, or an iOS 6 body's top-level receipt).
    private static func receipt(_ receiptValue: JSONValue, root: JSONValue, ios6: Bool) throws(FieldProblem) -> ResponseReceipt {
        let f = try FieldReader(receiptValue, path: "receipt", .tolerant)   // an unsigned Apple body
        // Each field read into a local and the receipt made once (one made empty and then filled
        // in was copied on its way out: every text retained and released).
        let receiptType = try f.string("receipt_type")
        let bundleID = try f.string(ios6 ? "bid" : "bundle_id")
        let appVersion = try f.string(ios6 ? "bvrs" : "application_version")
        let originalAppVersion = try f.string("original_application_version")
        let creationDateMs = try f.date("receipt_creation_date", ms: "receipt_creation_date_ms")
        let requestDateMs = try f.date("request_date", ms: "request_date_ms")
        let originalPurchaseDateMs = ios6 ? nil : try f.date("original_purchase_date", ms: "original_purchase_date_ms")
        let expirationDateMs = try f.date("expiration_date", ms: "expiration_date_ms")
        let appItemID = try f.string(ios6 ? "item_id" : "app_item_id")
        let downloadID = try f.string("download_id")
        let versionExternalIdentifier = try f.string("version_external_identifier")
        return ResponseReceipt(style: ios6 ? .ios6 : .ios7, receiptType: receiptType, bundleID: bundleID, appVersion: appVersion,
                               originalAppVersion: originalAppVersion, creationDateMs: creationDateMs, requestDateMs: requestDateMs,
                               originalPurchaseDateMs: originalPurchaseDateMs, expirationDateMs: expirationDateMs,
                               appItemID: appItemID, downloadID: downloadID, versionExternalIdentifier: versionExternalIdentifier,
                               // Only its presence matters: the base64 copy of the receipt is never decoded here.
                               latestReceiptPresent: (root[literal: "latest_receipt"]?.utf8?.count ?? 0) > 0)
    }
}
