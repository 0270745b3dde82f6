// Admission: what a call is refused for before anything is read. The verifier admits each call
// once (CheckContext.admit: the clock, then the size cap); the signer's calls take the same clock
// rule.

enum Admission {
    /// The call's `now`: Unix milliseconds, never negative.
    static func clock(_ nowMs: Int64) throws(IAPVFailure) {
        guard nowMs >= 0 else { throw .argument("now_ms must be Unix milliseconds >= 0, got \(nowMs)") }
    }
}
