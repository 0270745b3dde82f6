// Every notification action and realtime action, for `iapverify fields` (the two enums are not
// CaseIterable). A case added to either enum stops the switch below it compiling: add it to the
// list above the switch as well.

extension NotificationAction {
    /// Every action, in the order the enum declares them.
    package static var every: [NotificationAction] {
        [.apply, .ignoreStale, .ignoreDuplicate, .reject, .sendConsumptionInfo, .recordOnly]
    }

    private var listed: Bool {
        switch self {
        case .apply, .ignoreStale, .ignoreDuplicate, .reject, .sendConsumptionInfo, .recordOnly: return true
        }
    }
}

extension RealtimeAction {
    /// Every action, in the order the enum declares them.
    package static var every: [RealtimeAction] { [.respond, .ignoreDuplicate, .ignoreStale, .reject] }

    private var listed: Bool {
        switch self {
        case .respond, .ignoreDuplicate, .ignoreStale, .reject: return true
        }
    }
}
