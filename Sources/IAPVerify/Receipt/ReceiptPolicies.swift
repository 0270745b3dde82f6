// Receipt checks 8–13 as values: each policy decides one named check from the signed payload,
// the config and the call. ReceiptVerification runs them in order; the first failure decides.

/// What a policy may read: the verifier's config, the call's options and time, and the facts the
/// app rules read from the payload.
struct PolicyContext {
    let config: VerifierConfig
    let options: ReceiptOptions
    let nowMs: Int64
    let facts: PolicyFacts
}

protocol ReceiptPolicy: Sendable {
    var check: ReceiptCheck { get }
    func evaluate(_ payload: ReceiptPayload, _ context: PolicyContext) -> PolicyOutcome
}

extension PolicyFacts {
    /// A receipt's facts: its type (attribute 0) and attribute 2's UTF-8 bytes. Receipts carry no
    /// Apple app id; the chain is checked at their creation date.
    init(receipt payload: ReceiptPayload) {
        self.init(environment: EnvironmentFact(appleName: payload.receiptType, what: "receipt"),
                  bundle: .bytes(payload.bundleIDBytes, display: payload.bundleID),
                  validatedAtMs: payload.creationDateMs, what: "receipt")
    }
}

/// Checks 8 and 9: the app rules every entry point shares (Policy/AppPolicy.swift), as receipt checks.
struct AppRulePolicy: ReceiptPolicy {
    let rule: AppRule
    let check: ReceiptCheck

    /// The receipt check each app rule is; nil for a rule receipts have nothing to check by.
    init?(_ rule: AppRule) {
        switch rule {
        case .environment: check = .environment
        case .bundle: check = .bundleID
        case .appAppleID: return nil
        }
        self.rule = rule
    }

    func evaluate(_ payload: ReceiptPayload, _ context: PolicyContext) -> PolicyOutcome {
        context.config.outcome(of: rule, context.facts)
    }
}

/// Check 10: the app version, when `bundle_versions` lists the accepted ones.
struct VersionPolicy: ReceiptPolicy {
    let check = ReceiptCheck.bundleVersion
    func evaluate(_ payload: ReceiptPayload, _ context: PolicyContext) -> PolicyOutcome {
        guard let versions = context.config.bundleVersions else { return .skipped }
        guard let v = payload.appVersion, versions.contains(v) else {
            return .failed(.versionMismatch, "the app version \(payload.appVersion.map { "\"\($0)\"" } ?? "(absent)") is not in bundle_versions")
        }
        return .ok
    }
}

/// Check 11: the device hash (attribute 5), when the call names the device.
struct DevicePolicy: ReceiptPolicy {
    let check = ReceiptCheck.device
    func evaluate(_ payload: ReceiptPayload, _ context: PolicyContext) -> PolicyOutcome {
        guard context.config.deviceCheck != .off, let device = context.options.deviceID else { return .skipped }
        guard let opaque = payload.opaqueValue, let bundle = payload.bundleIDValue, let expected = payload.sha1Hash,
              Digest.sha1(device + opaque + bundle) == expected else {
            return .failed(.deviceMismatch, "the receipt was not issued to this device (attribute 5 hash differs)")
        }
        return .ok
    }
}

/// Check 12: the receipt's own expiration (attribute 21), when it has one.
struct ExpirationPolicy: ReceiptPolicy {
    let check = ReceiptCheck.expiration
    func evaluate(_ payload: ReceiptPayload, _ context: PolicyContext) -> PolicyOutcome {
        guard let expires = payload.expirationDateMs else { return .skipped }
        guard context.nowMs < expires else { return .failed(.receiptExpired, "the receipt expired at \(RFC3339.format(expires))") }
        return .ok
    }
}

/// Check 13: `max_receipt_age_ms`, when configured.
struct AgePolicy: ReceiptPolicy {
    let check = ReceiptCheck.age
    func evaluate(_ payload: ReceiptPayload, _ context: PolicyContext) -> PolicyOutcome {
        guard let maxAge = context.config.maxReceiptAgeMs, let created = payload.creationDateMs else { return .skipped }
        let (oldest, overflow) = context.nowMs.subtractingReportingOverflow(maxAge)
        guard overflow || created >= oldest else {
            return .failed(.stale, "the receipt was created at \(RFC3339.format(created)), more than max_receipt_age_ms ago")
        }
        return .ok
    }
}

enum ReceiptPolicies {
    /// Checks 8–13, in order: the app rules in their one order, then the receipt's own.
    static let all: [any ReceiptPolicy] = AppRule.allCases.compactMap { AppRulePolicy($0) } as [any ReceiptPolicy]
        + [VersionPolicy(), DevicePolicy(), ExpirationPolicy(), AgePolicy()]
}
