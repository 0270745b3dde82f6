// The one gate to `valid`: every entry point names the checks it requires (an enum per entry
// point), marks each as it runs, and asks the gate to pass. The gate says `valid` only when
// every required check ran and none failed; anything else stays undecided or refused.

/// What became of one required check.
public enum CheckState: String, Sendable {
    case ok
    case failed
    case skipped
    case notRun = "not_run"
    /// The check was deliberately not performed (bundle_id "*").
    case notChecked = "not_checked"

    /// A state a pass accepts: the check ran, and did not fail.
    var ran: Bool { self != .notRun && self != .failed }
}

/// The checks one entry point requires before its report may be valid, in the order they run.
protocol RequiredCheck: CaseIterable, Equatable, Sendable where AllCases == [Self] {}

extension RequiredCheck {
    /// The check's place in `allCases`: its slot in a gate.
    var slot: Int { Self.allCases.firstIndex(of: self)! }
}

/// A report's verdict and the state of each of its entry point's required checks.
struct CheckGate<Check: RequiredCheck>: Sendable {
    /// Undecided until `pass` or `fail`; an undecided gate is never valid.
    private(set) var judgement: Judgement
    private(set) var states: [CheckState]

    init() {
        judgement = .undecided
        states = Array(repeating: .notRun, count: Check.allCases.count)
    }

    func state(_ check: Check) -> CheckState { states[check.slot] }

    mutating func mark(_ check: Check, _ state: CheckState) { states[check.slot] = state }

    /// Records the failing check and the verdict; later checks stay `not_run`.
    mutating func fail(_ check: Check, _ verdict: Verdict, _ reason: String) {
        states[check.slot] = .failed
        judgement = Judgement(verdict, reason)
    }

    /// The only way to `valid`, for every entry point: still undecided, and every required check
    /// ran and none failed. False (and nothing changes) otherwise.
    @discardableResult
    mutating func pass(_ reason: String) -> Bool {
        guard judgement.isUndecided, states.allSatisfy(\.ran) else { return false }
        // One rule for every entry point: a check deliberately not performed is said in the reason.
        judgement = Judgement(.valid, states.contains(.notChecked) ? reason + Self.notCheckedNote : reason)
        return true
    }

    /// What a valid reason adds when the config accepts any app (`bundle_id` `"*"`).
    static var notCheckedNote: String { " (bundle id not checked: the config accepts any app)" }
}
