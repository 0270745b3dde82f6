// The result protocol the C boundary renders through: a verification's decision and its JSON.

/// What the C boundary needs of every result: the decision and the result JSON as the writer's
/// own block (taken over without a copy). Every entry point's report conforms, so one export
/// wrapper serves them all.
package protocol RenderedResult: VerificationResult {
    func resultJSONBlock() -> JSONText
}
