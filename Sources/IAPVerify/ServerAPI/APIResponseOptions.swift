// What an App Store Server API answer comes with (options JSON: the endpoint that answered, the
// environment of its host, the HTTP status, Retry-After, the attempt, OCSP answers and the host's
// state).

public struct APIResponseOptions: Sendable {
    /// The endpoint that answered (required).
    public var endpoint: APIEndpoint?
    /// The host that answered.
    public var environment: ServerEnvironment = .production
    /// Apple's HTTP status (required).
    public var httpStatus: Int64?
    /// The Retry-After header's text, when Apple sent one.
    public var retryAfter: String?
    public var attempt: Int64 = 1
    public var ocspResponses: [[UInt8]] = []
    public var host = EntitlementOptions()
    /// Old spellings the options used, each with what to write instead (printed in the result).
    public var deprecations: [String] = []

    public init() {}
}
