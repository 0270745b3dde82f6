// The app policy every entry point applies, one rule each, for receipts, /verifyReceipt
// responses, StoreKit 2 JWS and App Store Server API answers alike. Each checker reads what the
// rules need into one `PolicyFacts` before it trusts the payload, and `applyAppRules` runs the
// rules over it in the one order (`AppRule.allCases`):
// - environment: every name Apple uses maps to one environment, and the config's set decides;
// - bundle: UTF-8 bytes compared exactly, never as Swift strings (whose == treats canonically
//   equivalent spellings as equal), and a payload that should carry a bundle id but does not
//   fails closed, even when the config accepts any app;
// - app id: Apple's `appAppleId`, where the payload carries one.

import Glibc

/// What one policy check concluded.
enum PolicyOutcome: Equatable {
    case ok
    /// The check does not apply (no `bundle_versions`, no device id given, ...).
    case skipped
    /// Deliberately not performed: `bundle_id` is `"*"`.
    case notChecked
    case failed(Verdict, String)

    /// The state a check with this outcome is in (nil when it failed: the failure records it).
    var checkState: CheckState? {
        switch self {
        case .ok: return .ok
        case .skipped: return .skipped
        case .notChecked: return .notChecked
        case .failed: return nil
        }
    }
}

/// The app rules, in the order every checker applies them.
enum AppRule: CaseIterable, Sendable {
    case environment, bundle, appAppleID
}

/// The environment a payload names, as its checker read it.
enum EnvironmentFact {
    /// A known environment: the config's set decides.
    case named(PurchaseEnvironment)
    /// Already decided when read (an API answer that names its host's environment).
    case matched
    /// Nothing to check (an unsigned answer that names none).
    case unnamed
    /// Refused when read (an unknown name, or another host's environment).
    case refused(Verdict, String)

    /// A name Apple writes, mapped once; `what` names the payload in the refusal.
    init(appleName name: String?, what: String) {
        if let environment = PurchaseEnvironment(appleName: name) {
            self = .named(environment)
        } else {
            self = .refused(.environmentRejected,
                            "the \(what) names \(name.map { "\"\($0)\"" } ?? "no environment"), which is not a known environment")
        }
    }

    var known: PurchaseEnvironment? {
        if case .named(let environment) = self { return environment }
        return nil
    }
}

/// The bundle id a payload carries, as its checker read it.
enum BundleFact {
    /// The UTF-8 bytes as signed (a receipt's attribute 2), shown as `display`.
    case bytes([UInt8]?, display: String?)
    /// A JSON string; nil when a payload that must name its bundle does not.
    case text(String?)
    /// The payload need not name one and does not: nothing to check.
    case unnamed
    /// Present but unreadable: refused as malformed.
    case unreadable(String)
}

/// What the app rules read, taken from a payload before it is trusted: the environment, the
/// bundle id's bytes, Apple's app id and the instant the signer is checked at.
struct PolicyFacts {
    var environment: EnvironmentFact
    var bundle: BundleFact
    var appAppleID: Int64?
    /// The instant the chain is validated at (nil where the checker does not validate one).
    var validatedAtMs: Int64?
    /// How the environment rule's reasons name the payload ("receipt", "JWS", ...).
    var environmentWhat: String
    /// How the bundle and app rules' reasons name it.
    var what: String

    init(environment: EnvironmentFact, bundle: BundleFact, appAppleID: Int64? = nil, validatedAtMs: Int64? = nil,
         what: String, environmentWhat: String? = nil) {
        self.environment = environment
        self.bundle = bundle
        self.appAppleID = appAppleID
        self.validatedAtMs = validatedAtMs
        self.what = what
        self.environmentWhat = environmentWhat ?? what
    }
}

/// A check enum with one case for each app rule, so that every checker marks them alike.
protocol AppRuleChecks: RequiredCheck {
    static var environment: Self { get }
    static var bundle: Self { get }
    static var appAppleID: Self { get }
}

extension AppRuleChecks {
    /// The check each app rule is.
    init(_ rule: AppRule) {
        switch rule {
        case .environment: self = .environment
        case .bundle: self = .bundle
        case .appAppleID: self = .appAppleID
        }
    }
}

extension VerifierConfig {
    /// The app rules over `facts`, each one that passed (or did not apply) marked at its check in
    /// `gate`; the first failure is returned at its check, for the checker to record.
    func applyAppRules<Check: AppRuleChecks>(_ facts: PolicyFacts, marking gate: inout CheckGate<Check>) -> (Check, Verdict, String)? {
        let failure = applyAppRules(facts) { rule, outcome in outcome.checkState.map { gate.mark(Check(rule), $0) } }
        return failure.map { rule, verdict, why in (Check(rule), verdict, why) }
    }

    /// The app rules over `facts`, in `AppRule` order: `each` sees every outcome, and the first
    /// failure stops the rules and is returned (nil when none failed).
    func applyAppRules(_ facts: PolicyFacts, _ each: (AppRule, PolicyOutcome) -> Void = { _, _ in }) -> (AppRule, Verdict, String)? {
        for rule in AppRule.allCases {
            let outcome = self.outcome(of: rule, facts)
            each(rule, outcome)
            if case .failed(let verdict, let why) = outcome { return (rule, verdict, why) }
        }
        return nil
    }

    /// One app rule's outcome on the facts.
    func outcome(of rule: AppRule, _ facts: PolicyFacts) -> PolicyOutcome {
        switch rule {
        case .environment:
            switch facts.environment {
            case .named(let environment): return checkEnvironment(environment, what: facts.environmentWhat)
            case .matched: return .ok
            case .unnamed: return .skipped
            case .refused(let verdict, let why): return .failed(verdict, why)
            }
        case .bundle:
            switch facts.bundle {
            case .bytes(let bytes, let display): return checkBundle(bytes, display: display, what: facts.what)
            case .text(let text): return checkBundle(text, what: facts.what)
            case .unnamed: return .skipped
            case .unreadable(let why): return .failed(.malformed, why)
            }
        case .appAppleID:
            return checkAppAppleID(facts.appAppleID, environment: facts.environment.known, what: facts.what)
        }
    }

    /// The bundle rule on the UTF-8 bytes of the payload's bundle id; `what` names the payload.
    func checkBundle<Bytes: Sequence<UInt8>>(_ bundle: Bytes?, display: String?, what: String) -> PolicyOutcome {
        guard let bundle else {
            return .failed(.bundleMismatch,
                           "the \(what) carries no bundle id, so it cannot be for \(bundleID == "*" ? "any configured app" : "\"\(bundleID)\"")")
        }
        if bundleID == "*" { return .notChecked }
        guard Self.sameBytes(bundle, bundleID) else {
            return .failed(.bundleMismatch, "the \(what) is for \"\(display ?? "?")\", not \"\(bundleID)\"")
        }
        return .ok
    }

    /// True when `bytes` are the UTF-8 bytes of `text` (compared at once when both are contiguous).
    private static func sameBytes<Bytes: Sequence<UInt8>>(_ bytes: Bytes, _ text: String) -> Bool {
        var text = text
        let compared = bytes.withContiguousStorageIfAvailable { a in
            text.withUTF8 { b in a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0) }
        }
        return compared ?? bytes.elementsEqual(text.utf8)
    }

    func checkBundle(_ bundle: String?, what: String) -> PolicyOutcome {
        checkBundle(bundle?.utf8, display: bundle, what: what)
    }

    /// The app rule, for payloads that carry Apple's `appAppleId` (notifications, app
    /// transactions): the config's `app_apple_id` must match. Production payloads need it
    /// configured (Apple's own verifier requires it there); Sandbox, Xcode and LocalTesting
    /// payloads are checked only when it is.
    func checkAppAppleID(_ id: Int64?, environment: PurchaseEnvironment?, what: String) -> PolicyOutcome {
        if bundleID == "*" { return .notChecked }
        guard let id else { return .skipped }
        guard let expected = appAppleID else {
            if environment == .production {
                return .failed(.bundleMismatch, "the \(what) is for the app with Apple ID \(id); set app_apple_id in the config to accept it")
            }
            return .skipped
        }
        guard id == expected else {
            return .failed(.bundleMismatch, "the \(what) is for the app with Apple ID \(id), not \(expected)")
        }
        return .ok
    }

    /// The environment rule: the config's set decides.
    func checkEnvironment(_ environment: PurchaseEnvironment, what: String) -> PolicyOutcome {
        guard environments.contains(environment) else {
            return .failed(.environmentRejected, "the \(what) is from \(environment.rawValue), which the config's environments do not accept")
        }
        return .ok
    }
}

extension PurchaseEnvironment {
    /// Every environment name Apple writes: receipt types (payload attribute 0, `receipt_type`),
    /// /verifyReceipt's `environment`, and StoreKit 2's `environment` and `receiptType`.
    /// Unknown names map to nil, which no config accepts.
    public init?(appleName: String?) {
        switch appleName {
        case "Production", "ProductionVPP": self = .production
        case "Sandbox", "ProductionSandbox", "ProductionVPPSandbox": self = .sandbox
        case "Xcode": self = .xcode
        case "LocalTesting": self = .localTesting
        default: return nil
        }
    }
}
