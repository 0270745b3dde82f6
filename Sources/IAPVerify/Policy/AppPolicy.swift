// The app policy every entry point applies, one rule each, for receipts, /verifyReceipt
// responses and StoreKit 2 JWS alike:
// - environment: every name Apple uses maps to one environment, and the config's set decides;
// - bundle: UTF-8 bytes compared exactly, never as Swift strings (whose == treats canonically
//   equivalent spellings as equal), and a payload that should carry a bundle id but does not
//   fails closed, even when the config accepts any app.

import Glibc

/// What one policy check concluded.
enum PolicyOutcome: Equatable {
    case ok
    /// The check does not apply (no `bundle_versions`, no device id given, ...).
    case skipped
    /// Deliberately not performed: `bundle_id` is `"*"`.
    case notChecked
    case failed(Verdict, String)

    /// The report a failed outcome becomes, built by the entry point's own `reject`.
    func rejection<R>(_ reject: (Verdict, String) -> R) -> R {
        if case .failed(let verdict, let why) = self { return reject(verdict, why) }
        return reject(.malformed, "a policy check neither passed nor failed")
    }
}

extension VerifierConfig {
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
    func checkAppAppleID(_ id: Int64?, environment: ReceiptEnvironment?, what: String) -> PolicyOutcome {
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

    /// The environment rule: a name Apple writes, mapped once, then the config's set decides.
    func checkEnvironment(_ name: String?, what: String) -> PolicyOutcome {
        guard let environment = ReceiptEnvironment(appleName: name) else {
            return .failed(.environmentRejected, "the \(what) names \(name.map { "\"\($0)\"" } ?? "no environment"), which is not a known environment")
        }
        return checkEnvironment(environment, what: what)
    }

    func checkEnvironment(_ environment: ReceiptEnvironment, what: String) -> PolicyOutcome {
        guard environments.contains(environment) else {
            return .failed(.environmentRejected, "the \(what) is from \(environment.rawValue), which the config's environments do not accept")
        }
        return .ok
    }
}

extension ReceiptEnvironment {
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
