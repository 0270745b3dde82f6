// When to ask Apple again: one rule for both of Apple's APIs (/verifyReceipt and the App Store
// Server API), so the two interpreters back off and give up alike.

/// Apple's Retry-After on a 429 (a UNIX time in milliseconds), and the backoff both Apple APIs
/// (/verifyReceipt and the App Store Server API) fall back to.
enum RetryAfter {
    enum Reading: Equatable {
        case absent
        case instant(Int64)
        /// The text, shortened and quoted for the reason.
        case unreadable(String)
    }

    static func parse(_ text: String?, nowMs: Int64) -> Reading {
        guard let text else { return .absent }
        let trimmed = text.utf8.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        let digits = Array(trimmed)
        if !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            var value: Int64 = 0
            for d in digits { value = value * 10 + Int64(d - 48) }
            // Below 10^12 (2001) it is not Apple's millisecond instant but, most likely, the
            // seconds of an ordinary HTTP Retry-After from a proxy: the backoff is safer than 0.
            // Capped at an hour (Apple's limits are per hour): a header far in the future from a
            // broken proxy must not park the work for good.
            if value >= minimumInstant { return .instant(min(max(0, value - nowMs), maximumWaitMs)) }
        }
        var shown = ""
        for scalar in text.unicodeScalars.prefix(32) {
            shown.unicodeScalars.append(scalar.value >= 0x20 && scalar.value < 0x7f ? scalar : "?")
        }
        return .unreadable("\"" + shown + (text.unicodeScalars.count > 32 ? "…" : "") + "\"")
    }

    /// The attempt at which both interpreters say `give_up` instead of `retry_later`.
    static let maxAttempts: Int64 = 5

    static let minimumInstant: Int64 = 1_000_000_000_000
    static let maximumWaitMs: Int64 = 3_600_000

    /// A temporary failure at `attempt`: `retry_later` after the backoff, or `give_up` at the last attempt.
    static func temporary(attempt: Int64) -> (action: NextAction, retryAfterMs: Int64?) {
        attempt >= maxAttempts ? (.giveUp, nil) : (.retryLater, backoff(attempt: attempt))
    }

    /// 1 s × 2^(attempt−1), capped at 60 s.
    static func backoff(attempt: Int64) -> Int64 {
        min(1000 << min(max(attempt - 1, 0), 16), 60_000)
    }
}
