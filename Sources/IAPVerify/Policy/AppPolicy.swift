// The app policy every entry point applies, one rule each, for receipts, /verifyReceipt
// responses and StoreKit 2 JWS alike:
// - environment: every name Apple uses maps to one environment, and the config's set decides;
// - bundle: UTF-8 bytes compared exactly, never as Swift strings (whose == treats canonically
//   equivalent spellings as equal), and a payload that should carry a bundle id but does not
//   fails closed, even when the config accepts any app.

enum BundleCheck: Equatable {
    /// The config's `bundle_id` is `"*"` and the payload names an app.
    case notChecked
    case matches
    /// The verdict is `bundle_mismatch`; the reason is ready to show.
    case mismatch(String)
}

extension VerifierConfig {
    /// Checks the UTF-8 bytes of the payload's bundle id; `what` names the payload in the reason.
    func checkBundle<Bytes: Sequence<UInt8>>(_ bundle: Bytes?, display: String?, what: String) -> BundleCheck {
        guard let bundle else {
            return .mismatch("the \(what) carries no bundle id, so it cannot be for \(bundleID == "*" ? "any configured app" : "\"\(bundleID)\"")")
        }
        if bundleID == "*" { return .notChecked }
        guard bundle.elementsEqual(bundleID.utf8) else {
            return .mismatch("the \(what) is for \"\(display ?? "?")\", not \"\(bundleID)\"")
        }
        return .matches
    }

    func checkBundle(_ bundle: String?, what: String) -> BundleCheck {
        checkBundle(bundle?.utf8, display: bundle, what: what)
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
        case "Xcode", "LocalTesting": self = .xcode
        default: return nil
        }
    }
}
