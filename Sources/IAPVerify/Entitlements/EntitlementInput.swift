// Direct input: `{"transactions": [...], "renewal_info": [...]}` for hosts that keep
// their own transaction store, or mix sources.

public struct EntitlementInputReport: Sendable {
    public internal(set) var judgement: Judgement
    public internal(set) var entitlements: EntitlementReport?
    public var verdict: Verdict { judgement.verdict }
    public var isValid: Bool { judgement.verdict == .valid }
}

/// Reads the direct input and runs the engine on it; the verifier has checked the size.
struct EntitlementInputChecker {
    let engine: EngineSettings

    func compute(_ input: UnsafeRawBufferPointer, host: HostState, nowMs: Int64) -> EntitlementInputReport {
        func malformed(_ why: String) -> EntitlementInputReport {
            EntitlementInputReport(judgement: Judgement(.malformed, why), entitlements: nil)
        }
        let doc: JSONDocument
        do {
            doc = try JSONDocument(bytes: input, what: "the input", status: .invalidArgument)
        } catch {
            return malformed(error.message)
        }
        guard let members = doc.root.members else { return malformed("the input must be an object with \"transactions\"") }
        for (key, _) in members where key != "transactions" && key != "renewal_info" {
            return malformed("the input has an unknown key \"\(key)\"; expected transactions and renewal_info")
        }
        guard let list = doc.root["transactions"], list.kind == .array else {
            return malformed("the input needs a \"transactions\" array")
        }
        let transactions: [Transaction]
        let renewals: [RenewalInfo]
        do {
            transactions = try TransactionJSON.transactions(list, path: "transactions")
            renewals = try TransactionJSON.renewalInfos(doc.root["renewal_info"], path: "renewal_info")
        } catch {
            return malformed(error.message)
        }
        let report = engine.evaluate(transactions, ownRenewals: renewals, host: host, nowMs: nowMs)
        let active = report.entitlements.filter(\.active).count
        return EntitlementInputReport(
            judgement: Judgement(.valid, "\(transactions.count) transactions: \(active) of \(report.entitlements.count) entitlements active"),
            entitlements: report)
    }
}
