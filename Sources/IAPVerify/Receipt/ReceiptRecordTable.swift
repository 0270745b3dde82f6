// A receipt's in-app record as the result JSON writes it: the normalised transaction's members,
// by the same names in the same order as the Transaction table's rows written always (a test
// holds the two lists equal), but read from views of the signed record, so that no String is
// made between the payload and the result.

/// What one `in_app` member of a receipt's result holds, the text as views of its record.
struct ReceiptRecordRow {
    var quantity: Int64
    var productID: TextView
    var transactionID: TextView
    var originalTransactionID: TextView
    var purchaseDateMs: Int64?
    var originalPurchaseDateMs: Int64?
    var expiresDateMs: Int64?
    var cancellationDateMs: Int64?
    var webOrderLineItemID: Int64?
    var isTrialPeriod: Bool
    var isInIntroOfferPeriod: Bool
    var promotionalOfferID: TextView
    /// A receipt carries none of these: null and false, as in every source's transaction.
    var cancellationReason: String? = nil
    var isUpgraded = false
    var ownershipType: String? = nil
    var subscriptionGroupIdentifier: String? = nil

    init(_ p: InAppPurchase) {
        quantity = p.quantity ?? 1
        productID = p.productIDText
        transactionID = p.transactionIDText
        originalTransactionID = p.originalTransactionIDText
        purchaseDateMs = p.purchaseDateMs
        originalPurchaseDateMs = p.originalPurchaseDateMs
        expiresDateMs = p.expiresDateMs
        cancellationDateMs = p.cancellationDateMs
        webOrderLineItemID = p.webOrderLineItem
        isTrialPeriod = p.isTrialPeriod ?? false
        isInIntroOfferPeriod = p.isInIntroOfferPeriod ?? false
        promotionalOfferID = p.promotionalOfferIDText
    }

    private typealias F = RecordField<ReceiptRecordRow>

    /// Written only (a receipt record is read from DER, not JSON); `required` as the Transaction
    /// table's, so an id a record lacks is written as null there and here.
    static let fields = RecordTable<ReceiptRecordRow>(always: [
        F.int("quantity", nil, \.quantity),
        F.view("product_id", required: 2, \.productID),
        F.view("transaction_id", required: 1, \.transactionID),
        F.view("original_transaction_id", \.originalTransactionID),
        F.int("purchase_date_ms", nil, as: .date(text: "purchase_date"), \.purchaseDateMs),
        F.int("original_purchase_date_ms", nil, as: .date(text: "original_purchase_date"), \.originalPurchaseDateMs),
        F.int("expires_date_ms", nil, as: .date(text: "expires_date"), \.expiresDateMs),
        F.int("cancellation_date_ms", nil, as: .date(text: "cancellation_date"), \.cancellationDateMs),
        F.string("cancellation_reason", nil, as: .code, \.cancellationReason),
        F.decimal("web_order_line_item_id", \.webOrderLineItemID),
        F.bool("is_trial_period", nil, \.isTrialPeriod),
        F.bool("is_in_intro_offer_period", nil, \.isInIntroOfferPeriod),
        F.bool("is_upgraded", nil, \.isUpgraded),
        F.view("promotional_offer_id", \.promotionalOfferID),
        F.string("in_app_ownership_type", nil, \.ownershipType),
        F.string("subscription_group_identifier", nil, \.subscriptionGroupIdentifier),
    ], whenPresent: [], nested: ("commitment", "commitmentInfo", []))
}
