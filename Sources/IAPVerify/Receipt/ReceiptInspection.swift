// `inspect`: decode a receipt without trusting it. No chain or signature check runs, so the
// result says "unverified" and the receipt is marked "trusted": false.

public enum ReceiptInspector {
    /// Decodes the container and payload only. Returns the result JSON and whether it decoded.
    public static func inspect(_ input: UnsafeRawBufferPointer) -> (json: [UInt8], decoded: Bool) {
        var report = ReceiptReport()
        guard let der = ReceiptChecker.receiptBytes(input) else {
            report.fail(.structure, .malformed, input.isEmpty ? "the receipt is empty" : "the receipt is neither DER nor base64")
            return (report.resultJSON(.inspection), false)
        }
        do {
            let envelope = try SignedDataParser.parse(der)
            report.mark(.structure, .ok)
            report.mark(.algorithm, .ok)
            report.digest = envelope.signer.digest
            report.scheme = envelope.signer.scheme?.0
            do {
                report.payload = try ReceiptPayloadDecoder.decode(envelope.content)
                report.payloadIsComplete = true
                report.mark(.payload, .ok)
            } catch {
                if case .malformed(let why) = error { report.fail(.payload, .malformed, why) }
                return (report.resultJSON(.inspection), false)
            }
        } catch {
            switch error {
            case .malformed(let why): report.fail(.structure, .malformed, why)
            case .unsupportedAlgorithm(let why): report.fail(.algorithm, .unsupportedAlgorithm, why)
            }
            return (report.resultJSON(.inspection), false)
        }
        return (report.resultJSON(.unverifiedInspection), true)
    }
}

