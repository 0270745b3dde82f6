// The description of what every result grants (JSON/Surface.swift): the members every result
// starts and ends with, the entitlements with their evidence, the purchases and the delivery plan.
// EntitlementJSON.swift writes them through these enums only.

extension Verdict: SurfaceWords {}
extension PurchaseEnvironment: SurfaceWords {}
extension EntitlementState: SurfaceWords {}
extension EntitlementRule: SurfaceWords {}
extension PeriodKind: SurfaceWords {}
extension Ownership: SurfaceWords {}
extension ProductType: SurfaceWords {}

/// The members every verdict document starts with.
package enum ResultHeadMember: SurfaceObject {
    case verdict, reason

    package static let objectName: StaticString = "result_head"
    package static let meaning: StaticString = "the members every verdict document starts with"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .verdict: MemberSpec("verdict", .string, values: .vocabulary(Verdict.self), "the answer (docs/verdicts.md); only valid grants anything")
        case .reason: MemberSpec("reason", .string, "one sentence for logs; its wording may change")
        }
    }
}

/// The members every verdict document ends with: what it grants, empty unless it is valid.
package enum GrantMember: SurfaceObject {
    case entitlements, purchases, delivery, unknownProducts, catalogConflicts, introEligible

    package static let objectName: StaticString = "grants"
    package static let meaning: StaticString = "what a result grants: the members every verdict document ends with, empty unless valid"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .entitlements: MemberSpec("entitlements", .array(.object(EntitlementMember.self)),
            "every entitlement id the catalog defines (or one per product without a catalog), active or not")
        case .purchases: MemberSpec("purchases", .array(.object(PurchaseMember.self)), "every distinct transaction, oldest first")
        case .delivery: MemberSpec("delivery", .object(DeliveryMember.self), "what to deliver, what to take back and which orders are paid")
        case .unknownProducts: MemberSpec("unknown_products", .array(.string),
            "product ids that grant nothing because their type is unknown: with a catalog, the ones it does not name; without one, the ones whose signed type this library does not know or that differs between purchases")
        case .catalogConflicts: MemberSpec("catalog_conflicts", .array(.object(CatalogConflictMember.self)),
            "catalog entries whose type contradicts the type Apple signed for the product's purchases; the catalog's rule is used: fix the catalog")
        case .introEligible: MemberSpec("intro_eligible", .map(.boolean),
            "per subscription group: whether the user may still get an introductory offer (false once a trial or intro period was used)")
        }
    }
}

package enum EntitlementMember: SurfaceObject {
    case id, active, state, productID, originalTransactionID, transactionID, expiresDateMs, willRenew, renewsTo, period
    case ownership, expirationReason, cancellationReason, priceIncrease, revocationType, reason, evidence, items

    package static let objectName: StaticString = "entitlement"
    package static let meaning: StaticString = "one entitlement: whether to grant access now, and why"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .id: MemberSpec("id", .string, "the entitlement id (from the catalog's entitlements, else the product id)")
        case .active: MemberSpec("active", .boolean, "grant access when true: exactly for the states active, grace_period and owned")
        case .state: MemberSpec("state", .string, values: .vocabulary(EntitlementState.self), "the entitlement's state (docs/entitlements.md)")
        case .productID: MemberSpec("product_id", .string, nullable: true, "the product that decided; null for not_purchased")
        case .originalTransactionID: MemberSpec("original_transaction_id", .string, nullable: true, "the subscription chain (or the purchase) that decided")
        case .transactionID: MemberSpec("transaction_id", .string, nullable: true, "the transaction that decided")
        case .expiresDateMs: MemberSpec("expires_date_ms", .ms, nullable: true,
            "end of access: the paid period, the grace period's end for grace_period; null for owned products")
        case .willRenew: MemberSpec("will_renew", .boolean, nullable: true, "auto-renew status from renewal info; null when unknown; false does not end the paid period")
        case .renewsTo: MemberSpec("renews_to", .string, nullable: true, "a different product the subscription will renew to (a pending downgrade or crossgrade)")
        case .period: MemberSpec("period", .string, nullable: true, values: .vocabulary(PeriodKind.self), "the kind of the deciding period (subscriptions only)")
        case .ownership: MemberSpec("ownership", .string, nullable: true, values: .vocabulary(Ownership.self),
            "bought by the user, shared through Family Sharing, or assigned (Advanced Commerce, volume assignment)")
        case .expirationReason: MemberSpec("expiration_reason", .string, nullable: true,
            values: .words("voluntary billing_error price_increase_declined product_unavailable unknown"), "for expired only: why, from renewal info's expiration intent")
        case .cancellationReason: MemberSpec("cancellation_reason", .string, presence: .whenPresent,
            "for a refund that carried one: Apple's code, \"1\" a problem in the app, \"0\" another reason")
        case .priceIncrease: MemberSpec("price_increase", .string, nullable: true, values: .words("pending accepted"),
            "a price increase the user has not answered yet (pending) or has accepted, from renewal info's priceIncreaseStatus or price_consent_status; access is unchanged either way")
        case .revocationType: MemberSpec("revocation_type", .string, presence: .whenPresent,
            values: .open("REFUND_FULL REFUND_PRORATED FAMILY_REVOKE ASSIGNMENT_REVOKE"), "Apple's revocationType, when the deciding purchase was revoked; every type ends access at the revocation date")
        case .reason: MemberSpec("reason", .string, "why, in one sentence, with dates in RFC 3339")
        case .evidence: MemberSpec("evidence", .object(EvidenceMember.self), "which rule of the engine and which transaction decided, how many competed, and the billing plan and offer of the deciding transaction")
        case .items: MemberSpec("items", .array(.object(EntitlementItemMember.self)), presence: .whenPresent,
            "the deciding purchase's Advanced Commerce items: grant an item only while its active is true")
        }
    }
}

package enum EvidenceMember: SurfaceObject {
    case rule, transactionID, candidates, offerType, offer, billing

    package static let objectName: StaticString = "evidence"
    package static let meaning: StaticString = "which rule of the engine decided an entitlement, from which transaction"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .rule: MemberSpec("rule", .string, values: .vocabulary(EntitlementRule.self), "the engine's rule that decided")
        case .transactionID: MemberSpec("transaction_id", .string, nullable: true, "the deciding transaction")
        case .candidates: MemberSpec("candidates", .integer, "how many chains or products competed")
        case .offerType: MemberSpec("offer_type", .integer, presence: .whenPresent,
            "the deciding transaction's offerType as Apple signed it (1 introductory, 2 promotional, 3 offer code, 4 win-back, 5 retention)")
        case .offer: MemberSpec("offer", .string, presence: .whenPresent, values: .words("introductory promotional offer_code win_back retention unknown"),
            "offer_type named; unknown for a number Apple added since")
        case .billing: MemberSpec("billing", .object(BillingMember.self), presence: .whenPresent,
            "the deciding transaction's billing plan, when it states one")
        }
    }
}

package enum BillingMember: SurfaceObject {
    case planType, billingPeriodNumber, totalBillingPeriods, commitmentExpiresDateMs

    package static let objectName: StaticString = "billing"
    package static let meaning: StaticString = "a billing plan as the deciding transaction states it: monthly payments toward a commitment grant one paid month at a time"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .planType: MemberSpec("plan_type", .string, nullable: true, values: .open("BILLED_UPFRONT MONTHLY"), "Apple's billingPlanType")
        case .billingPeriodNumber: MemberSpec("billing_period_number", .integer, nullable: true, "which month of the commitment this is")
        case .totalBillingPeriods: MemberSpec("total_billing_periods", .integer, nullable: true, "how many months the commitment has")
        case .commitmentExpiresDateMs: MemberSpec("commitment_expires_date_ms", .ms, nullable: true, "when the commitment ends")
        }
    }
}

package enum EntitlementItemMember: SurfaceObject {
    case sku, active, revocationDateMs

    package static let objectName: StaticString = "entitlement_item"
    package static let meaning: StaticString = "one Advanced Commerce item of the deciding purchase"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .sku: MemberSpec("sku", .string, "the item's SKU")
        case .active: MemberSpec("active", .boolean, "grant the item: the entitlement is active and the item itself was not revoked")
        case .revocationDateMs: MemberSpec("revocation_date_ms", .ms, nullable: true, "when the item alone was revoked")
        }
    }
}

package enum PurchaseMember: SurfaceObject {
    case transactionID, originalTransactionID, productID, type, quantity, purchaseDateMs, revoked

    package static let objectName: StaticString = "purchase"
    package static let meaning: StaticString = "one distinct transaction"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .transactionID: MemberSpec("transaction_id", .string, "the transaction")
        case .originalTransactionID: MemberSpec("original_transaction_id", .string, nullable: true, "its subscription chain")
        case .productID: MemberSpec("product_id", .string, "the product bought")
        case .type: MemberSpec("type", .string, values: .words("consumable non_consumable auto_renewable non_renewing unknown"),
            "the catalog type, or the inferred one without a catalog; unknown for a product the catalog does not name")
        case .quantity: MemberSpec("quantity", .integer, "1 unless the store sold several")
        case .purchaseDateMs: MemberSpec("purchase_date_ms", .ms, nullable: true, "when it was bought")
        case .revoked: MemberSpec("revoked", .boolean, "refunded, revoked or upgraded away at now_ms")
        }
    }
}

package enum DeliveryMember: SurfaceObject {
    case toDeliver, toRevoke, orders

    package static let objectName: StaticString = "delivery"
    package static let meaning: StaticString = "the delivery plan: what to deliver, what to take back, which orders are paid (docs/entitlements.md)"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .toDeliver: MemberSpec("to_deliver", .array(.object(DeliveryItemMember.self)), "purchases not yet delivered: deliver each once")
        case .toRevoke: MemberSpec("to_revoke", .array(.object(DeliveryItemMember.self)), "delivered purchases since refunded or revoked: take back")
        case .orders: MemberSpec("orders", .array(.object(OrderMatchMember.self)), "each pending order the host passed, with the purchase that pays it")
        }
    }
}

package enum DeliveryItemMember: SurfaceObject {
    case transactionID, originalTransactionID, productID, quantity, purchaseDateMs

    package static let objectName: StaticString = "delivery_item"
    package static let meaning: StaticString = "a purchase to deliver or to take back"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .transactionID: MemberSpec("transaction_id", .string, "the transaction: deliver (or take back) exactly once per id")
        case .originalTransactionID: MemberSpec("original_transaction_id", .string, nullable: true, "its subscription chain")
        case .productID: MemberSpec("product_id", .string, "the product")
        case .quantity: MemberSpec("quantity", .integer, "how many")
        case .purchaseDateMs: MemberSpec("purchase_date_ms", .ms, nullable: true, "when it was bought")
        }
    }
}

package enum OrderMatchMember: SurfaceObject {
    case orderID, transactionID, status

    package static let objectName: StaticString = "order_match"
    package static let meaning: StaticString = "a pending order the host passed, and the purchase that pays it"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .orderID: MemberSpec("order_id", .string, "the host's order id")
        case .transactionID: MemberSpec("transaction_id", .string, nullable: true, "the purchase that pays it, or null")
        case .status: MemberSpec("status", .string, values: .words("matched unmatched"), "whether a purchase pays it")
        }
    }
}

package enum CatalogConflictMember: SurfaceObject {
    case productID, catalogType, signedType

    package static let objectName: StaticString = "catalog_conflict"
    package static let meaning: StaticString = "a catalog entry whose type contradicts the type Apple signed: fix the catalog"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .productID: MemberSpec("product_id", .string, "the product")
        case .catalogType: MemberSpec("catalog_type", .string, values: .vocabulary(ProductType.self), "the catalog's type (used)")
        case .signedType: MemberSpec("signed_type", .string, "the type as Apple signed it")
        }
    }
}

/// A pending order a host passes in `orders` (an input: the options).
package enum PendingOrderMember: SurfaceObject {
    case orderID, productID, createdMs

    package static let objectName: StaticString = "pending_order"
    package static let meaning: StaticString = "an order the host made before the purchase, to be matched with the purchase that pays it"

    @inline(__always) package var spec: MemberSpec {
        switch self {
        case .orderID: MemberSpec("order_id", .string, "the host's order id")
        case .productID: MemberSpec("product_id", .string, "the product ordered")
        case .createdMs: MemberSpec("created_ms", .ms, "when the order was made: only a purchase after it pays it")
        }
    }
}
