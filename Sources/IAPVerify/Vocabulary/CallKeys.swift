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
}
