// Receipt checks 8–13 as values: each policy decides one named check from the signed payload,
// the config and the call. ReceiptVerification runs them in order; the first failure decides.

/// What a policy may read: the verifier's config and the call's options and time.
struct PolicyContext {
    let config: VerifierConfig
    let options: ReceiptOptions
    let nowMs: Int64
}

protocol ReceiptPolicy: Sendable {
    var check: ReceiptCheck { get }
    func evaluate(_ payload: ReceiptPayload, _ context: PolicyContext) -> PolicyOutcome
}

/// Check 8: a known receipt type in the config's environments.
struct EnvironmentPolicy: ReceiptPolicy {
    let check = ReceiptCheck.environment
    func evaluate(_ payload: ReceiptPayload, _ context: PolicyContext) -> PolicyOutcome {
        context.config.checkEnvironment(payload.receiptType, what: "receipt")
    }
}

/// Check 9: the bundle rule, on attribute 2's UTF-8 bytes.
struct BundlePolicy: ReceiptPolicy {
    let check = ReceiptCheck.bundleID
    func evaluate(_ payload: ReceiptPayload, _ context: PolicyContext) -> PolicyOutcome {
        context.config.checkBundle(payload.bundleIDBytes, display: payload.bundleID, what: "receipt")
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
    /// Checks 8–13, in order.
    static let all: [any ReceiptPolicy] = [
        EnvironmentPolicy(), BundlePolicy(), VersionPolicy(), DevicePolicy(), ExpirationPolicy(), AgePolicy(),
    ]
}
