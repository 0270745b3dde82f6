// What the host does after an answer from Apple: one word list for /verifyReceipt answers and
// App Store Server API answers, so a host handles both with one switch.

public enum NextAction: String, Sendable, CaseIterable {
    case accept
    /// API answers: accepted, and Apple has more; call again with `next_page`.
    case nextPage = "next_page"
    case retrySandbox = "retry_sandbox"
    /// /verifyReceipt: a production receipt was sent to the sandbox host.
    case retryProduction = "retry_production"
    case retryLater = "retry_later"
    case giveUp = "give_up"
    case fixConfiguration = "fix_configuration"
    case reject
}

@available(*, deprecated, renamed: "NextAction")
package typealias ResponseAction = NextAction
@available(*, deprecated, renamed: "NextAction")
package typealias APIAction = NextAction
