// Direct input: `{"transactions": [...], "renewal_info": [...]}` for hosts that keep
// their own transaction store, or mix sources.

/// The checks a direct input must pass before the engine's answer is valid.
enum EntitlementInputCheck: CaseIterable, Sendable, RequiredCheck {
    /// A JSON object with a `transactions` array and no other key but `renewal_info`.
    case shape
    /// Every transaction and renewal info read.
    case records
}

public struct EntitlementInputReport: Sendable {
    /// Undecided until both checks passed or one failed; an undecided report is never valid.
    var gate: CheckGate<EntitlementInputCheck>
    public var judgement: Judgement { gate.judgement }
    public internal(set) var entitlements: EntitlementReport?
    public var verdict: Verdict { judgement.verdict }
    public var isValid: Bool { judgement.verdict == .valid }
}

/// Reads the direct input and runs the engine on it; the verifier has checked the size.
struct EntitlementInputChecker {
    let engine: EngineSettings

    func compute(_ input: UnsafeRawBufferPointer, host: EntitlementOptions, nowMs: Int64) -> EntitlementInputReport {
        var gate = CheckGate<EntitlementInputCheck>()
        func malformed(_ why: String, at check: EntitlementInputCheck = .shape) -> EntitlementInputReport {
            gate.fail(check, .malformed, why)
            return EntitlementInputReport(gate: gate, entitlements: nil)
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
        gate.mark(.shape, .ok)
        let transactions: [Transaction]
        let renewals: [RenewalInfo]
        do {
            transactions = try TransactionJSON.transactions(list, path: "transactions")
            renewals = try TransactionJSON.renewalInfos(doc.root["renewal_info"], path: "renewal_info")
        } catch {
            return malformed(error.message, at: .records)
        }
        gate.mark(.records, .ok)
        let report = engine.evaluate(transactions, ownRenewals: renewals, host: host, nowMs: nowMs)
        let active = report.entitlements.filter(\.active).count
        gate.pass("\(transactions.count) transactions: \(active) of \(report.entitlements.count) entitlements active")
        return EntitlementInputReport(gate: gate, entitlements: report)
    }
}
