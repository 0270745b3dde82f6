// The description of a receipt's result documents (JSON/Surface.swift): the verification's, the
// inspection's and an iOS 6 transaction receipt's. ReceiptResultJSON.swift and
// TransactionReceipt.swift write through these enums only; the in-app records are written by
// their table (ReceiptRecordTable.swift), described as `receipt_in_app`.

extension ReceiptCheck: SurfaceWords {}
extension CheckState: CaseIterable, SurfaceWords {
    public static var allCases: [CheckState] { [.ok, .failed, .skipped, .notChecked, .notRun] }
}
extension DigestAlgorithm: SurfaceWords {}
extension SignatureScheme: SurfaceWords {}

/// The members a receipt result has between its head and what it grants.
package enum ReceiptResultMember: SurfaceObject {
    case checks, receipt, revocation

    package static let objectName: StaticString = "receipt_result"
    package static let meaning: StaticString = "iapv_verify_receipt (and inspect): the checks, the decoded receipt and its signer's revocation facts"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .checks: MemberSpec("checks", .map(.string),
            "each of the checks, in order (structure, algorithm, payload, chain, signer, signature, environment, bundle_id, bundle_version, device, expiration, age): ok, failed, skipped, not_checked or not_run")
        case .receipt: MemberSpec("receipt", .object(ReceiptMember.self), nullable: true, "the decoded receipt; null when not even its header could be read")
        case .revocation: MemberSpec("revocation", .object(RevocationMember.self), nullable: true, presence: .whenPresent,
            "the signing certificate's revocation facts (as receipt.signing.revocation), kept when the receipt is refused later; not in inspect's documents")
        }
    }
}

package enum ReceiptMember: SurfaceObject {
    case trusted, environment, receiptType, bundleID, appVersion, originalAppVersion, creationDateMs, expirationDateMs
    case originalPurchaseDateMs, attribute8DateMs, appItemID, downloadID, versionExternalIdentifier, opaqueValueBase64
    case sha1HashBase64, signing, inApp, unknownAttributes

    package static let objectName: StaticString = "receipt"
    package static let meaning: StaticString = "the decoded receipt; before its signature was checked only trusted, environment, receipt_type and creation_date_ms"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .trusted: MemberSpec("trusted", .boolean, "true only when the verdict is valid")
        case .environment: MemberSpec("environment", .string, nullable: true, values: .vocabulary(PurchaseEnvironment.self),
            "the environment the receipt type maps to (null: an unknown type)")
        case .receiptType: MemberSpec("receipt_type", .string, nullable: true, "as Apple wrote it (Production, ProductionSandbox, ProductionVPP, ProductionVPPSandbox, Xcode)")
        case .bundleID: MemberSpec("bundle_id", .string, nullable: true, presence: .whenPresent, "attribute 2: the app's bundle id")
        case .appVersion: MemberSpec("app_version", .string, nullable: true, presence: .whenPresent, "attribute 3: CFBundleVersion (iOS) or CFBundleShortVersionString (macOS)")
        case .originalAppVersion: MemberSpec("original_app_version", .string, nullable: true, presence: .whenPresent,
            "attribute 19: the version first installed (recognises users who bought a formerly paid app)")
        case .creationDateMs: MemberSpec("creation_date_ms", .ms, nullable: true, "attribute 12: when Apple made the receipt; the chain is validated at this instant")
        case .expirationDateMs: MemberSpec("expiration_date_ms", .ms, nullable: true, presence: .whenPresent, "attribute 21: Volume Purchase and Xcode receipts only")
        case .originalPurchaseDateMs: MemberSpec("original_purchase_date_ms", .ms, nullable: true, presence: .whenPresent, "attribute 18: when the app was first bought")
        case .attribute8DateMs: MemberSpec("attribute_8_date_ms", .ms, nullable: true, presence: .whenPresent, "attribute 8: an undocumented date; not the creation date")
        case .appItemID: MemberSpec("app_item_id", .string, nullable: true, presence: .whenPresent, "attribute 1: the App Store id of the app; \"0\" in sandbox")
        case .downloadID: MemberSpec("download_id", .string, nullable: true, presence: .whenPresent, "attribute 15")
        case .versionExternalIdentifier: MemberSpec("version_external_identifier", .string, nullable: true, presence: .whenPresent, "attribute 16")
        case .opaqueValueBase64: MemberSpec("opaque_value_base64", .string, nullable: true, presence: .whenPresent, "attribute 4: input to the device hash")
        case .sha1HashBase64: MemberSpec("sha1_hash_base64", .string, nullable: true, presence: .whenPresent, "attribute 5: the device hash")
        case .signing: MemberSpec("signing", .object(SigningMember.self), presence: .whenPresent, "how the receipt was signed, and by whom")
        case .inApp: MemberSpec("in_app", .array(.object(ReceiptInAppDescription.self)), presence: .whenPresent,
            "attribute 17: every in-app purchase record, in receipt order, as a normalised transaction with the receipt-only members")
        case .unknownAttributes: MemberSpec("unknown_attributes", .array(.object(UnknownAttributeMember.self)), presence: .whenPresent,
            "attributes the library does not name")
        }
    }
}

package enum SigningMember: SurfaceObject {
    case digest, signature, chain, revocation

    package static let objectName: StaticString = "signing"
    package static let meaning: StaticString = "a receipt's signature: its algorithms, the validated chain and the leaf's revocation facts"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .digest: MemberSpec("digest", .string, nullable: true, values: .vocabulary(DigestAlgorithm.self), "the digest algorithm")
        case .signature: MemberSpec("signature", .string, nullable: true, values: .vocabulary(SignatureScheme.self), "the signature scheme")
        case .chain: MemberSpec("chain", .array(.object(CertificateMember.self)), "the validated certificates, leaf first")
        case .revocation: MemberSpec("revocation", .object(RevocationMember.self), nullable: true, "the leaf's revocation facts")
        }
    }
}

package enum UnknownAttributeMember: SurfaceObject {
    case type, version, valueBase64

    package static let objectName: StaticString = "unknown_attribute"
    package static let meaning: StaticString = "a receipt attribute the library does not name"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .type: MemberSpec("type", .integer, "the attribute number")
        case .version: MemberSpec("version", .integer, "the attribute's version")
        case .valueBase64: MemberSpec("value_base64", .string, "the attribute's value bytes, base64")
        }
    }
}

/// An iOS 6 transaction receipt's document (iapv_read_transaction_receipt): read, never verified.
package enum TransactionReceiptMember: SurfaceObject {
    case trusted, kind, transactionID, environment, purchaseInfo

    package static let objectName: StaticString = "transaction_receipt_result"
    package static let meaning: StaticString = "iapv_read_transaction_receipt: an iOS 6 transaction receipt, read and never verified (verdict unverified or malformed)"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .trusted: MemberSpec("trusted", .boolean, "always false: nothing in a transaction receipt is checked")
        case .kind: MemberSpec("kind", .string, values: .words("transaction_receipt"), "the kind of document")
        case .transactionID: MemberSpec("transaction_id", .string, nullable: true, "the transaction id, as read")
        case .environment: MemberSpec("environment", .string, nullable: true, "the outer list's environment (Sandbox; absent in production receipts)")
        case .purchaseInfo: MemberSpec("purchase_info", .map(.string), nullable: true, "every string field of purchase-info, in the receipt's order")
        }
    }
}

/// A receipt's in-app record, as its table writes it (ReceiptRecordTable.swift): the members of a
/// transaction written always, each filled from its attribute, then the attributes the transaction
/// does not name, then the record's unknown attributes.
package enum ReceiptInAppDescription: SurfaceDescribed {
    package static let objectName: StaticString = "receipt_in_app"
    package static let meaning: StaticString = "an in-app purchase record of a receipt (attribute 17): a normalised transaction's members and what only a receipt carries"

    package static var memberSpecs: [MemberSpec] {
        let specs = TransactionRecord.fields.alwaysWrittenSpecs
        var out: [MemberSpec] = []
        for (spec, column) in zip(specs, InAppAttributes.columns) {
            let row = column.attribute < 0 ? nil : InAppAttributes.rows[column.attribute]
            let m = spec.memberSpec
            out.append(MemberSpec(m.name, row?.value.memberType ?? m.type, nullable: m.nullable, attribute: row?.type, m.meaning))
        }
        for i in InAppAttributes.extras {
            let row = InAppAttributes.rows[i]
            out.append(MemberSpec(row.name, row.value.memberType, presence: .whenPresent, attribute: row.type, row.meaning))
        }
        out.append(MemberSpec(InAppAttributes.unknownMember, .array(.object(UnknownAttributeMember.self)), presence: .whenPresent,
                              "the record's attributes the library does not name"))
        return out
    }
}

extension InAppValue {
    var memberType: MemberType {
        switch self {
        case .integer: return .integer
        case .decimal, .text: return .string
        case .flag: return .boolean
        case .date: return .ms
        }
    }
}
