// The description of the verifier config (JSON/Surface.swift): every key, its type, default and
// meaning. VerifierConfig.swift reads keys by these enums, so a key the description lacks is
// refused ("unknown key", with the nearest known key as a hint).

package enum ConfigMember: SurfaceObject {
    case bundleID, appAppleID, bundleVersions, environments, trust, xcode, deviceCheck, maxInputBytes, maxReceiptAgeMs
    case gracePeriod, revocation, products

    package static let objectName: StaticString = "config"
    package static let meaning: StaticString = "the verifier config, given once to iapv_verifier_new (docs/config.md)"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .bundleID: MemberSpec("bundle_id", .string, "the app whose purchases this verifier accepts (required); \"*\" accepts any app, and valid results say the bundle was not checked")
        case .appAppleID: MemberSpec("app_apple_id", .integer, presence: .whenPresent,
            "the app's Apple ID (App Store Connect, App Information); required to accept Production notifications and app transactions")
        case .bundleVersions: MemberSpec("bundle_versions", .array(.string), presence: .whenPresent, "the app versions (CFBundleVersion) a receipt may carry; absent: not checked")
        case .environments: MemberSpec("environments", .array(.string), values: .vocabulary(PurchaseEnvironment.self), default: "[\"Production\"]",
            "the accept-set: where a purchase may come from")
        case .trust: MemberSpec("trust", .object(TrustConfigMember.self), default: "{}", "the trust anchors")
        case .xcode: MemberSpec("xcode", .object(XcodeConfigMember.self), default: "{}", "Xcode's local StoreKit testing")
        case .deviceCheck: MemberSpec("device_check", .string, values: .words("if_given required off"), default: "\"if_given\"", "when to check a receipt's device hash")
        case .maxInputBytes: MemberSpec("max_input_bytes", .integer, default: "3145728", "the largest input (and options document) a call accepts, 1 to 67108864")
        case .maxReceiptAgeMs: MemberSpec("max_receipt_age_ms", .integer, nullable: true, default: "null", "refuse receipts created longer ago than this")
        case .gracePeriod: MemberSpec("grace_period", .string, values: .words("honor ignore"), default: "\"honor\"", "whether Apple's billing grace period keeps access")
        case .revocation: MemberSpec("revocation", .string, values: .words("off required"), default: "\"off\"",
            "whether a good OCSP answer for the signing certificate is required (docs/revocation.md)")
        case .products: MemberSpec("products", .map(.object(ProductConfigMember.self)), presence: .whenPresent, "the product catalog: product id to rule")
        }
    }
}

package enum TrustConfigMember: SurfaceObject {
    case rootsPEM, includeAppleRoots

    package static let objectName: StaticString = "config_trust"
    package static let meaning: StaticString = "the config's trust anchors"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .rootsPEM: MemberSpec("roots_pem", .array(.string), default: "[]", "extra trust anchors, each a self-signed CA certificate in PEM")
        case .includeAppleRoots: MemberSpec("include_apple_roots", .boolean, default: "true", "trust Apple's three built-in roots")
        }
    }
}

package enum XcodeConfigMember: SurfaceObject {
    case accept, rootsPEM

    package static let objectName: StaticString = "config_xcode"
    package static let meaning: StaticString = "the config's Xcode StoreKit testing keys"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .accept: MemberSpec("accept", .boolean, default: "false", "accept receipts and tokens signed by Xcode's local StoreKit testing")
        case .rootsPEM: MemberSpec("roots_pem", .array(.string), default: "[]", "the Xcode StoreKit certificate(s) to trust; required when accept is true")
        }
    }
}

package enum ProductConfigMember: SurfaceObject {
    case type, group, level, entitlements, durationMs

    package static let objectName: StaticString = "config_product"
    package static let meaning: StaticString = "one product of the catalog: how it grants entitlements"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .type: MemberSpec("type", .string, values: .vocabulary(ProductType.self), "the product's type (required)")
        case .group: MemberSpec("group", .string, presence: .whenPresent, "auto_renewable: its subscription group")
        case .level: MemberSpec("level", .integer, presence: .whenPresent, "auto_renewable: its tier in the group, 1 the highest")
        case .entitlements: MemberSpec("entitlements", .array(.string), presence: .whenPresent, "the entitlement ids it grants; default: the product id; none for consumables")
        case .durationMs: MemberSpec("duration_ms", .integer, presence: .whenPresent, "non_renewing: how long one purchase grants access")
        }
    }
}
