// What a /verifyReceipt answer comes with (options JSON: environment, attempt and the host's state).

public struct ResponseOptions: Sendable {
    /// The /verifyReceipt host that answered; Production when not said.
    public var environment: ServerEnvironment = .production
    /// How many times this receipt has been sent, counting this answer.
    public var attempt: Int64 = 1
    public var host = HostState()
    /// Old spellings the options used, each with what to write instead (printed in the result).
    public var deprecations: [String] = []

    public init() {}
}
