// Interpreting an App Store Server API answer the host received: HTTP status, Retry-After and
// body. The status decides the `action`, as /verifyReceipt's status does in VerifyReceipt/; a 200
// body is trusted only as a whole: every signed item in it must verify with this verifier's rules.

private let retryableErrorCodes: Set<Int64> = [4040002, 4040004, 4040006, 5000001]
private let transactionIDNotFound: Int64 = 4040010

/// Interprets App Store Server API answers with the verifier's rules.
struct APIResponseChecker: Checker {
    let context: CheckContext

    func interpret(_ body: UnsafeRawBufferPointer, options: APIResponseOptions,
                   nowMs: Int64) throws(IAPVFailure) -> APIResponseReport {
        guard let endpoint = options.endpoint else {
            throw .argument("options.endpoint is required: the API endpoint that answered (e.g. \"transaction_history\")")
        }
        guard let http = options.httpStatus else {
            throw .argument("options.http_status is required: the HTTP status of Apple's answer")
        }
        func report(_ verdict: Verdict, _ reason: String, _ action: NextAction) -> APIResponseReport {
            APIResponseReport(verdict, reason, options: options, endpoint: endpoint, action: action)
        }

        // Error bodies are {"errorCode": n, "errorMessage": "..."}; anything else carries no code.
        var errorCode: Int64?
        var errorMessage: String?
        if !(200...299).contains(http), body.count > 0,
           case .success(let doc) = JSONDocument.parse(body, what: "error body", status: .invalidArgument) {
            errorCode = doc.root[literal: "errorCode"]?.integer
            errorMessage = doc.root[literal: "errorMessage"]?.string.map { String($0.prefix(512)) }
        }
        func failure(_ verdict: Verdict, _ reason: String, _ action: NextAction) -> APIResponseReport {
            var r = report(verdict, reason, action)
            r.errorCode = errorCode
            r.errorMessage = errorMessage
            return r
        }
        let apple = errorCode.map { " (Apple's error \($0)\(errorMessage.map { ": \($0)" } ?? ""))" } ?? ""

        if http == 401 {
            return failure(.configurationError,
                           "Apple refused the bearer token (HTTP 401): check the key id, issuer id, bundle id and private key; Apple also answers 401 before an app's first production release",
                           .fixConfiguration)
        }
        if errorCode == transactionIDNotFound {
            if options.environment == .production, config.environments.contains(.sandbox) {
                return failure(.wrongEnvironment, "the transaction id is not known in production: ask the sandbox host\(apple)", .retrySandbox)
            }
            return failure(.rejectedByApple, options.environment == .sandbox
                ? "the transaction id is not known in sandbox either: not retrying, no sandbox/production loop\(apple)"
                : "the transaction id is not known in production, and this config does not accept Sandbox\(apple)", .reject)
        }
        if http == 429 || http >= 500 || errorCode.map(retryableErrorCodes.contains) == true {
            let what = http == 429 ? "HTTP 429, Apple's rate limit" : "HTTP \(http), a temporary error"
            if options.attempt >= RetryAfter.maxAttempts {
                return failure(.temporarilyUnavailable, "\(what) after \(options.attempt) attempts: give up and store it for later\(apple)", .giveUp)
            }
            var r = failure(.temporarilyUnavailable, "\(what): retry later\(apple)", .retryLater)
            switch RetryAfter.parse(options.retryAfter, nowMs: nowMs) {
            case .instant(let ms):
                r.retryAfterMs = ms
            case .absent:
                r.retryAfterMs = RetryAfter.backoff(attempt: options.attempt)
            case .unreadable(let shown):
                r.retryAfterMs = RetryAfter.backoff(attempt: options.attempt)
                r.gate.fail(.http, .temporarilyUnavailable,
                            "\(what): retry later; Retry-After \(shown) is not a UNIX time in milliseconds, so the backoff applies\(apple)")
            }
            return r
        }
        if (400...499).contains(http) {
            return failure(.rejectedByApple, "Apple rejected the request with HTTP \(http)\(apple)", .reject)
        }
        guard (200...299).contains(http) else {
            return failure(.malformed, "HTTP \(http) is not an answer the App Store Server API gives; nothing is granted", .reject)
        }
        var base = APIResponseReport(options: options, endpoint: endpoint)
        base.gate.mark(.http, .ok)
        return acceptedAPIBody(body, endpoint: endpoint, options: options, nowMs: nowMs, base: base)
    }

    /// A 2xx answer: its shape, then every signed item, then the engine.
    private func acceptedAPIBody(_ body: UnsafeRawBufferPointer, endpoint: APIEndpoint, options: APIResponseOptions,
                                 nowMs: Int64, base: APIResponseReport) -> APIResponseReport {
        var r = base
        let shape = APIAnswerShape.of(endpoint)
        if shape.isEmpty { return emptyAnswer(body, endpoint: endpoint, options: options, nowMs: nowMs, into: r) }
        guard let doc = answerDocument(body, endpoint: endpoint, shape: shape, into: &r),
              unsignedFactsMatch(doc.root, options: options, into: &r) else { return r }
        var walker = SignedItemWalker(jws: JWSChecker(context: context), expected: options.environment.purchaseEnvironment, nowMs: nowMs,
                                      ocsp: options.ocspResponses)
        do {
            try verifySignedItems(doc.root, endpoint: endpoint, walker: &walker, options: options, nowMs: nowMs, into: &r)
            try readNextPage(doc.root, endpoint: endpoint, into: &r)
        } catch let e as APIShapeError {
            r.refuse(.items, .malformed, e.message)
            return r
        } catch let e as APIItemFailure {
            r.refuse(.items, e.verdict, e.reason)
            r.revocation = e.revocation
            return r
        } catch {
            r.refuse(.items, .malformed, "the answer could not be read")
            return r
        }
        r.gate.mark(.items, .ok)
        r.unsignedJSON = APIAnswerShape.unsignedFields(doc.root, signed: shape.signed)
        if r.orderStatus == 1 {
            r.refuse(.order, .rejectedByApple, "Apple says the order id is invalid (order lookup status 1)")
            return r
        }
        r.gate.mark(.order, r.orderStatus == nil ? .skipped : .ok)
        r.signedItems = walker.verified
        r.revocation = walker.revocation
        r.entitlements = context.engine.evaluate(r.transactions, ownRenewals: r.renewals, host: options.host, nowMs: nowMs)
        r.accept("\(walker.verified) signed item\(walker.verified == 1 ? "" : "s") verified in the \(endpoint.rawValue) answer from \(options.environment.rawValue)"
            + (r.nextPage == nil ? "" : "; Apple has more: call again with next_page"))
        return r
    }

    /// An endpoint that answers with no body (or an empty object): accepted when it did.
    private func emptyAnswer(_ body: UnsafeRawBufferPointer, endpoint: APIEndpoint, options: APIResponseOptions,
                             nowMs: Int64, into base: APIResponseReport) -> APIResponseReport {
        var r = base
        if body.count > 0 {
            guard case .success(let doc) = JSONDocument.parse(body, what: "answer", status: .invalidArgument),
                  let members = doc.root.members, members.isEmpty else {
                r.refuse(.shape, .malformed, "\(endpoint.rawValue) answers with an empty body; this one has content of another shape")
                return r
            }
        }
        // No body: nothing names an environment or an app, and nothing is signed.
        r.gate.mark(.shape, .ok)
        for check in [APICheck.environment, .bundle, .appAppleID, .items, .order] { r.gate.mark(check, .skipped) }
        r.entitlements = context.engine.evaluate([], ownRenewals: [], host: options.host, nowMs: nowMs)
        r.accept("Apple accepted the \(endpoint.rawValue) request (HTTP \(r.httpStatus))")
        return r
    }

    /// The answer parsed, an object with the endpoint's required members; nil once `r` is refused.
    private func answerDocument(_ body: UnsafeRawBufferPointer, endpoint: APIEndpoint, shape: APIAnswerShape,
                                into r: inout APIResponseReport) -> JSONDocument? {
        let doc: JSONDocument
        switch JSONDocument.parse(body, what: "the API answer", status: .invalidArgument) {
        case .success(let d): doc = d
        case .failure(let e):
            r.refuse(.shape, .malformed, e.message)
            return nil
        }
        guard let members = doc.root.members else {
            r.refuse(.shape, .malformed, "the \(endpoint.rawValue) answer is not a JSON object")
            return nil
        }
        guard members.contains(where: { shape.required.contains($0.key) }) || shape.required.isEmpty else {
            r.refuse(.shape, .malformed, "the answer has none of \(shape.required.joined(separator: ", ")): it is not a \(endpoint.rawValue) answer")
            return nil
        }
        for name in shape.required where doc.root[name] == nil {
            r.refuse(.shape, .malformed, "the \(endpoint.rawValue) answer has no \(name)")
            return nil
        }
        r.gate.mark(.shape, .ok)
        return doc
    }

    /// The unsigned fields are only data, but the body's environment and bundle must still match:
    /// the app rules, in the order every entry point uses. False once `r` is refused.
    private func unsignedFactsMatch(_ root: JSONValue, options: APIResponseOptions, into r: inout APIResponseReport) -> Bool {
        guard let (check, verdict, why) = config.applyAppRules(Self.policyFacts(root, options: options), marking: &r.gate) else {
            return true
        }
        r.refuse(check, verdict, why)
        return false
    }

    /// The answer's own environment (it must be the answering host's) and bundle id, when it
    /// names them; it carries no Apple app id.
    private static func policyFacts(_ root: JSONValue, options: APIResponseOptions) -> PolicyFacts {
        let environment: EnvironmentFact
        switch root[literal: "environment"].map({ $0.string }) {
        case nil: environment = .unnamed
        case .some(nil): environment = .refused(.malformed, "environment must be a string")
        case .some(let e?):
            environment = PurchaseEnvironment(appleName: e) == options.environment.purchaseEnvironment
                ? .matched
                : .refused(.environmentRejected, "the answer says environment \(e), but it came from the \(options.environment.rawValue) host")
        }
        let bundle: BundleFact
        switch root[literal: "bundleId"].map({ $0.string }) {
        case nil: bundle = .unnamed
        case .some(nil): bundle = .unreadable("bundleId must be a string")
        case .some(let b?): bundle = .text(b)
        }
        return PolicyFacts(environment: environment, bundle: bundle, what: "API answer")
    }

    /// Every signed item the endpoint's answer carries, verified through `walker` into `r`.
    private func verifySignedItems(_ root: JSONValue, endpoint: APIEndpoint, walker: inout SignedItemWalker,
                                   options: APIResponseOptions, nowMs: Int64, into r: inout APIResponseReport) throws {
        switch endpoint {
        case .transactionInfo:
            try walker.transaction(root, "signedTransactionInfo", into: &r)
        case .transactionHistory, .transactionHistoryV1, .refundHistory, .orderLookup:
            let list = try APIAnswerShape.array(root, "signedTransactions")
            for (i, item) in list.enumerated() {
                try walker.transactionText(item, "signedTransactions[\(i)]", into: &r)
            }
            if endpoint == .orderLookup {
                guard let s = root[literal: "status"]?.integer, s == 0 || s == 1 else {
                    throw APIShapeError("order lookup status must be 0 (valid) or 1 (invalid)")
                }
                r.orderStatus = s
            }
        case .subscriptionStatuses:
            try verifyStatuses(root, walker: &walker, options: options, nowMs: nowMs, into: &r)
        case .appTransactionInfo:
            try walker.appTransaction(root, "signedAppTransactionInfo", into: &r)
        case .notificationHistory:
            let list = try APIAnswerShape.array(root, "notificationHistory")
            for (i, item) in list.enumerated() {
                try walker.notification(item, "signedPayload", at: "notificationHistory[\(i)]", into: &r)
            }
        case .testNotificationStatus:
            try walker.notification(root, "signedPayload", at: "answer", into: &r)
        case .advancedCommerceCancelSubscription, .advancedCommerceChangeSubscriptionMetadata, .advancedCommerceChangeSubscriptionPrice,
             .advancedCommerceMigrateSubscription, .advancedCommerceRevokeSubscription, .advancedCommerceRequestRefund:
            try walker.advancedCommerceAnswer(root, into: &r)
        case .testNotification, .extendRenewalDate, .massExtendRenewalDate, .massExtendStatus,
             .consumptionInfo, .consumptionInfoV1, .setAppAccountToken, .finishTransaction,
             .uploadImage, .deleteImage, .listImages, .uploadMessage, .deleteMessage, .listMessages,
             .configureDefaultMessage, .getDefaultMessage, .deleteDefaultMessage,
             .configureRealtimeURL, .getRealtimeURL, .deleteRealtimeURL,
             .initiatePerformanceTest, .performanceTestResult:
            // Unsigned answers: their fields are data (`unsigned`), checked for shape only.
            break
        }
    }

    /// Each subscription status: its signed transaction and renewal info, which must belong to the
    /// subscription it names, and the engine's state beside Apple's status.
    private func verifyStatuses(_ root: JSONValue, walker: inout SignedItemWalker, options: APIResponseOptions,
                                nowMs: Int64, into r: inout APIResponseReport) throws {
        let groups = try APIAnswerShape.array(root, "data")
        for (g, group) in groups.enumerated() {
            let groupID = group[literal: "subscriptionGroupIdentifier"]?.string
            let last = try APIAnswerShape.array(group, "lastTransactions", at: "data[\(g)]")
            for (i, item) in last.enumerated() {
                let at = "data[\(g)].lastTransactions[\(i)]"
                guard let status = item[literal: "status"]?.integer else { throw APIShapeError("\(at).status must be an integer") }
                guard let original = item[literal: "originalTransactionId"]?.string else {
                    throw APIShapeError("\(at).originalTransactionId must be a string")
                }
                let txn = try walker.transaction(item, "signedTransactionInfo", at: at, into: &r)
                var renewal: RenewalInfo?
                if item[literal: "signedRenewalInfo"] != nil {
                    renewal = try walker.renewal(item, "signedRenewalInfo", at: at, into: &r)
                }
                guard txn.chainID == original, renewal.map({ $0.originalTransactionID == original }) ?? true else {
                    throw APIItemFailure(.malformed, "\(at): the signed items belong to another subscription than originalTransactionId \(original)")
                }
                r.statuses.append(statusCheck(group: groupID, original: original, status: status, transaction: txn,
                                              renewal: renewal, options: options, nowMs: nowMs))
            }
        }
    }

    /// `hasMore`: where the next page starts, by the endpoint's kind of paging.
    private func readNextPage(_ root: JSONValue, endpoint: APIEndpoint, into r: inout APIResponseReport) throws {
        guard let more = root[literal: "hasMore"] else { return }
        guard let hasMore = more.bool else { throw APIShapeError("hasMore must be a boolean") }
        guard hasMore else { return }
        switch endpoint.spec.paging {
        case .revision:
            guard let rev = root[literal: "revision"]?.string, !rev.isEmpty else {
                throw APIShapeError("hasMore is true but the answer has no revision to continue from")
            }
            r.nextPage = .revision(rev)
        case .paginationToken:
            guard let token = root[literal: "paginationToken"]?.string, !token.isEmpty else {
                throw APIShapeError("hasMore is true but the answer has no paginationToken to continue from")
            }
            r.nextPage = .paginationToken(token)
        case .none:
            break
        }
    }

    /// The engine's state for one subscription, beside Apple's status for it.
    private func statusCheck(group: String?, original: String, status: Int64, transaction: Transaction,
                             renewal: RenewalInfo?, options: APIResponseOptions, nowMs: Int64) -> SubscriptionStatusCheck {
        let report = context.engine.evaluate([transaction], renewals: [renewal].compactMap { $0 }, host: EntitlementOptions(), nowMs: nowMs)
        let state = report.entitlements.first { $0.originalTransactionID == original || $0.transactionID == transaction.transactionID }?.state
        let expected: [EntitlementState]
        switch status {
        case 1: expected = [.active]
        case 2: expected = [.expired, .upgraded]
        case 3: expected = [.billingRetry]
        case 4: expected = [.gracePeriod]
        case 5: expected = [.refunded]
        default: expected = []
        }
        return SubscriptionStatusCheck(subscriptionGroupIdentifier: group, originalTransactionID: original, appleStatus: status,
                                       engineState: state, agrees: state.map(expected.contains) ?? false)
    }
}
