// What a /verifyReceipt answer comes with (options JSON: environment, attempt and the host's state).

public struct ResponseOptions: Sendable {
    // No field has a default value: an init that stored defaults and then the real values
    // copied `self` on its way out (every list retained and released), on every call.
    /// The /verifyReceipt host that answered; Production when not said.
    public var environment: ServerEnvironment
    /// How many times this receipt has been sent, counting this answer.
    public var attempt: Int64
    /// The HTTP status when it was not 200 (then the body is not read), 0 when Apple did not
    /// answer at all (refused, reset, timed out); nil for a 200.
    public var httpStatus: Int64?
    public var host: EntitlementOptions
    /// Old spellings the options used, each with what to write instead (printed in the result).
    public var deprecations: [String]

    public init() { self.init(environment: .production, attempt: 1, httpStatus: nil, host: EntitlementOptions(), deprecations: []) }

    init(environment: ServerEnvironment, attempt: Int64, httpStatus: Int64?, host: EntitlementOptions, deprecations: [String]) {
        self.environment = environment
        self.attempt = attempt
        self.httpStatus = httpStatus
        self.host = host
        self.deprecations = deprecations
    }
}
