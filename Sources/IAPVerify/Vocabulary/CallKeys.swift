// The spelling of call and option keys, shared by every entry point that reads them.

/// Call and option keys are snake_case; Apple's libraries spell the same things in camelCase.
enum CallKeys {
    /// `transactionId` -> `transaction_id`, for "did you mean" hints.
    static func snakeCase(_ name: String) -> String {
        var out = ""
        for c in name {
            if c.isUppercase {
                if !out.isEmpty { out.append("_") }
                out += c.lowercased()
            } else {
                out.append(c)
            }
        }
        return out
    }

    /// "; did you mean "x"?" for an unknown key: its snake_case spelling when that is a key, else
    /// the one key within two edits of it (a typo, a missing plural); "" when there is none.
    static func didYouMean(_ name: String, among keys: [String]) -> String {
        let snake = snakeCase(name)
        if keys.contains(snake) { return "; did you mean \"\(snake)\"?" }
        let near = keys.filter { editDistance(snake, $0, atMost: 2) <= 2 }
        return near.count == 1 ? "; did you mean \"\(near[0])\"?" : ""
    }

    /// Levenshtein distance, stopping early once every path exceeds `limit` (keys are short).
    static func editDistance(_ a: String, _ b: String, atMost limit: Int) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        if abs(a.count - b.count) > limit { return limit + 1 }
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            if current.min()! > limit { return limit + 1 }
            previous = current
        }
        return previous[b.count]
    }
}
