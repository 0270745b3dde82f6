// The Advanced Commerce API's six server calls, as rows of the endpoint table: their paths under
// advancedCommerce/v1 and their JSON bodies, field by field as Apple documents them (and as
// Apple's own models check them: SKU at most 128 characters, description 45, display name 30).
// Every answer carries the signed transaction the call changed, and for a subscription its
// signed renewal info: both are verified like any other signed item.

private let base = "advancedCommerce/v1"
private var sku: APIFieldType { .text(maxCharacters: 128) }
private var skuDescription: APIFieldType { .text(maxCharacters: 45) }
private var displayName: APIFieldType { .text(maxCharacters: 30) }
/// A storefront (ISO 3166-1 alpha-3) or a currency (ISO 4217 alpha-3).
private var threeLetters: APIFieldType { .code(letters: 3) }
private var effective: APIFieldType { .oneOf(["IMMEDIATELY", "NEXT_BILL_CYCLE"]) }
private var refundReason: APIFieldType {
    .oneOf(["UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER", "MODIFY_ITEMS_REFUND",
            "SIMULATE_REFUND_DECLINE"])
}
private var refundType: APIFieldType { .oneOf(["FULL", "PRORATED", "CUSTOM"]) }
/// Milliunits of the currency; Apple's libraries hold a requested refund in 32 bits.
private var refundAmount: APIFieldType { .integer(0...Int64(Int32.max)) }
private var price: APIFieldType { .integer(0...Int64.max) }

/// `requestInfo`, which every call carries first: the UUID that makes a retry the same request,
/// the app account token to attach, and the consistency token Apple gave in the renewal info
/// (opaque: passed on as it is).
private var requestInfo: APIBodyField {
    APIBodyField("requestInfo", .object([
        APIBodyField("requestReferenceId", .uuid, true),
        APIBodyField("appAccountToken", .uuid, false),
        APIBodyField("consistencyToken", .string(maxLength: 4096), false),
    ]), true)
}
private var storefront: APIBodyField { APIBodyField("storefront", threeLetters, false) }
private var currency: APIBodyField { APIBodyField("currency", threeLetters, false) }
/// An item with its SKU, description and display name (migrate's items and renewal items).
private var describedItem: APIFieldType {
    .object([APIBodyField("SKU", sku, true), APIBodyField("description", skuDescription, true), APIBodyField("displayName", displayName, true)])
}

/// The rows of the Advanced Commerce calls in the endpoint table (APIEndpoint.spec), made on each
/// use as the other rows are: a stored row would hold the indirect enum's boxes for the process's
/// life, which LeakSanitizer (make fuzz-replay) reports.
enum AdvancedCommerceCalls {
    private static func post(_ path: String, _ fields: [APIBodyField]) -> APIEndpointSpec {
        APIEndpointSpec(method: "POST", path: [.literal("\(base)/\(path)"), .parameter(.transactionID)], body: .json(fields))
    }

    static var cancelSubscription: APIEndpointSpec { post("subscription/cancel", [requestInfo, storefront]) }

    static var changeSubscriptionMetadata: APIEndpointSpec {
        let descriptors = APIFieldType.object([APIBodyField("effective", effective, true),
                                               APIBodyField("description", skuDescription, false),
                                               APIBodyField("displayName", displayName, false)])
        let item = APIFieldType.object([APIBodyField("currentSKU", sku, true), APIBodyField("effective", effective, true),
                                        APIBodyField("SKU", sku, false), APIBodyField("description", skuDescription, false),
                                        APIBodyField("displayName", displayName, false)])
        return post("subscription/changeMetadata", [requestInfo, APIBodyField("descriptors", descriptors, false),
                                                    APIBodyField("items", .nonEmptyList(item), false), storefront,
                                                    APIBodyField("taxCode", .string(maxLength: 128), false)])
    }

    static var changeSubscriptionPrice: APIEndpointSpec {
        let item = APIFieldType.object([APIBodyField("SKU", sku, true), APIBodyField("price", price, true),
                                        APIBodyField("dependentSKUs", .list(sku, maxCount: 1000), false)])
        return post("subscription/changePrice", [requestInfo, APIBodyField("items", .nonEmptyList(item), true), currency, storefront])
    }

    static var migrateSubscription: APIEndpointSpec {
        let descriptors = APIFieldType.object([APIBodyField("description", skuDescription, true),
                                               APIBodyField("displayName", displayName, true)])
        return post("subscription/migrate", [requestInfo, APIBodyField("descriptors", descriptors, true),
                                             APIBodyField("items", .nonEmptyList(describedItem), true),
                                             APIBodyField("renewalItems", .nonEmptyList(describedItem), false),
                                             APIBodyField("targetProductId", .string(maxLength: 128), true),
                                             APIBodyField("taxCode", .string(maxLength: 128), true), storefront])
    }

    static var revokeSubscription: APIEndpointSpec {
        post("subscription/revoke", [requestInfo, APIBodyField("refundRiskingPreference", .bool, true), APIBodyField("refundType", refundType, true),
                                     APIBodyField("refundReason", refundReason, true), storefront])
    }

    static var requestRefund: APIEndpointSpec {
        let item = APIFieldType.object([APIBodyField("SKU", sku, true), APIBodyField("refundReason", refundReason, true),
                                        APIBodyField("refundType", refundType, true), APIBodyField("revoke", .bool, true),
                                        APIBodyField("refundAmount", refundAmount, false)])
        return post("transaction/requestRefund", [requestInfo, APIBodyField("items", .nonEmptyList(item), true),
                                                  APIBodyField("refundRiskingPreference", .bool, true), currency, storefront])
    }
}

extension SignedItemWalker {
    /// An Advanced Commerce answer: its signed transaction (required), and its signed renewal
    /// info when it has one, which must be the same subscription's.
    mutating func advancedCommerceAnswer(_ root: JSONValue, into r: inout APIResponseReport) throws {
        let txn = try transaction(root, "signedTransactionInfo", into: &r)
        guard root[literal: "signedRenewalInfo"] != nil else { return }
        let info = try renewal(root, "signedRenewalInfo", at: "answer", into: &r)
        guard info.originalTransactionID == txn.chainID else {
            throw APIItemFailure(.malformed, "answer.signedRenewalInfo belongs to subscription \(info.originalTransactionID), "
                + "not to the signed transaction's \(txn.chainID)")
        }
    }
}
