// What a JWS call may be told (options JSON: ocsp_responses, the notification state the host
// keeps, the realtime requests it answered, the kind it expects, and the host's state).

public struct JWSOptions: Sendable {
    /// DER OCSP responses the host fetched for the leaf of an earlier result.
    public var ocspResponses: [[UInt8]] = []
    /// Notifications: the `signed_date_ms` the host last applied for this subscription.
    public var lastSignedDateMs: Int64?
    /// Notifications: notification UUIDs the host already handled.
    public var seenNotificationUUIDs: [String] = []
    public var host = EntitlementOptions()
    /// The kind the caller expects; a token of another kind is `malformed`. Naming it also accepts
    /// a kind that names no app of its own (a realtime request) when the app rule could not check it.
    public var kind: JWSKind?
    /// Realtime requests: requestIdentifiers the host already answered.
    public var seenRequestIdentifiers: [String] = []
    /// Realtime requests: how old a signedDate may be before the request is a replay.
    public var maxAgeMs: Int64 = RealtimeRequest.defaultMaxAgeMs

    public init() {}
}
