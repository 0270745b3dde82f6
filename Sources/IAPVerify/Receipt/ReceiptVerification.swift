// The receipt checks, in order; the first failure decides the verdict. Checks 2–7 run on the
// fast path here (own DER walk, verified-chain cache); ReceiptReferencePath.swift holds the
// OpenSSL PKCS7_verify path the fast one is tested against. Checks 8–13 are shared.

import COpenSSL

/// Verifies receipts with the verifier's rules.
struct ReceiptChecker: Checker {
    let context: CheckContext

    /// Either crypto path; `.reference` exists only to check the fast path against OpenSSL.
    func verify(_ input: UnsafeRawBufferPointer, options: ReceiptOptions, nowMs: Int64, path: CryptoPath) throws(IAPVFailure) -> ReceiptReport {
        // Check 1, the size, was the verifier's admission (with the clock).
        if config.deviceCheck == .required, options.deviceID == nil {
            throw .argument("device_check is \"required\" but the call passed no options.device_id")
        }
        var report = ReceiptReport()
        guard let der = Self.receiptBytes(input) else {
            report.fail(.structure, .malformed, input.isEmpty
                ? "the receipt is empty"
                : "the receipt is neither DER nor base64")
            return report
        }
        let proceed: Bool
        switch path {
        case .cached: proceed = cachedCryptoChecks(der, ocspResponses: options.ocspResponses, nowMs: nowMs, &report)
        case .reference: proceed = referenceCryptoChecks(der, &report)
        }
        if proceed { policyChecks(options: options, nowMs: nowMs, &report) }
        if report.isValid, let payload = report.payload {
            report.entitlements = entitlements(Transaction.all(payload.inApp), ownRenewals: [], host: options.host, nowMs: nowMs)
        }
        return report
    }

    /// DER passes through; anything else must be base64.
    static func receiptBytes(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        guard !input.isEmpty else { return nil }
        if input.count >= 2, input[0] == 0x30, input[1] >= 0x80 { return Array(input) }
        if let decoded = Base64.decode(input), !decoded.isEmpty { return decoded }
        return input[0] == 0x30 ? Array(input) : nil
    }

    /// Check 4's second half and the Xcode rule, shared by both paths. Returns false to stop.
    /// Only the receipt type and creation date are read here: the rest of the payload is
    /// untrusted until the signature is checked (see `decodeSignedPayload`).
    func acceptPayload(_ content: ArraySlice<UInt8>, _ report: inout ReceiptReport) -> Bool {
        let payload: ReceiptPayload
        do {
            payload = try ReceiptPayloadDecoder.header(content)
        } catch {
            guard case .malformed(let why) = error else { return false }
            report.fail(.payload, .malformed, why)
            return false
        }
        report.payload = payload
        guard payload.creationDateMs != nil else {
            report.fail(.payload, .malformed, "the payload has no receipt creation date (attribute 12)")
            return false
        }
        report.mark(.payload, .ok)
        if PurchaseEnvironment(appleName: payload.receiptType) == .xcode, !config.xcodeAccept {   // the one "is this Xcode?" rule
            report.fail(.environment, .environmentRejected, "this is an Xcode StoreKit-testing receipt; set xcode.accept to accept it")
            return false
        }
        return true
    }

    /// After check 7: the whole payload, now known to be Apple's, decoded for checks 8–13.
    func decodeSignedPayload(_ content: ArraySlice<UInt8>, _ report: inout ReceiptReport) -> Bool {
        do {
            report.payload = try ReceiptPayloadDecoder.decode(content)
            report.payloadIsComplete = true
            return true
        } catch {
            guard case .malformed(let why) = error else { return false }
            report.fail(.payload, .malformed, why)
            return false
        }
    }

    func isXcode(_ report: ReceiptReport) -> Bool { PurchaseEnvironment(appleName: report.payload?.receiptType) == .xcode }

    func anchorsFor(_ report: ReceiptReport) -> TrustAnchors { context.anchors(xcode: isXcode(report)) }

    // MARK: - Cached path

    private func cachedCryptoChecks(_ der: [UInt8], ocspResponses: [[UInt8]], nowMs: Int64, _ report: inout ReceiptReport) -> Bool {
        let envelope: SignedDataEnvelope
        do {
            envelope = try SignedDataParser.parse(der)
        } catch {
            switch error {
            case .malformed(let why): report.fail(.structure, .malformed, why)
            case .unsupportedAlgorithm(let why):
                report.mark(.structure, .ok)
                report.fail(.algorithm, .unsupportedAlgorithm, why)
            }
            return false
        }
        report.mark(.structure, .ok)
        report.mark(.algorithm, .ok)
        report.digest = envelope.signer.digest
        report.scheme = envelope.signer.scheme?.0
        guard acceptPayload(envelope.content, &report), let created = report.payload?.creationDateMs else { return false }

        let xcode = isXcode(report)
        let key = ChainKey(xcode ? .xcodeReceipt : .receipt, signer: envelope.signer.identifier, certificates: envelope.certificatesField)
        let verified: VerifiedChain
        switch cache.verifiedChain(for: key, certificates: envelope.certificates, atMs: created, instant: .receiptCreation,
                                   anchors: anchorsFor(report), applePolicy: !xcode,
                                   signer: { ChainValidator.signerIndex(issuer: envelope.signer.issuer, serial: envelope.signer.serial, in: $0) }) {
        case .success(let chain): verified = chain
        case .failure(let refusal):
            record(refusal, &report)
            return false
        }
        report.chain = verified.summaries
        report.chainJSON = verified.summaryJSON
        // Revocation is part of trusting the chain (check 5), at the call's now.
        let (revocation, refusal) = self.revocation(of: verified, responses: ocspResponses, nowMs: nowMs)
        report.revocation = revocation
        if let (verdict, why) = refusal {
            report.fail(.chain, verdict, why)
            return false
        }
        report.mark(.chain, .ok)
        report.mark(.signer, xcode ? .skipped : .ok)
        if case .failure(let f) = SignatureCheck.verify(envelope: envelope, key: verified.leafKey) {
            report.fail(.signature, .signatureInvalid, f.message)
            return false
        }
        report.mark(.signature, .ok)
        return decodeSignedPayload(envelope.content, &report)
    }

    /// A refused chain as receipt checks: undecodable certificates are check 2, a signer without
    /// Apple's markers is check 6 (after a chain that did verify), anything else check 5.
    func record(_ refusal: ChainRefusal, _ report: inout ReceiptReport) {
        switch refusal.stage {
        case .decoding: report.fail(.structure, refusal.verdict, refusal.reason)
        case .chain: report.fail(.chain, refusal.verdict, refusal.reason)
        case .signer:
            report.mark(.chain, .ok)
            report.fail(.signer, refusal.verdict, refusal.reason)
        }
    }

    // MARK: - Checks 8–13

    private func policyChecks(options: ReceiptOptions, nowMs: Int64, _ report: inout ReceiptReport) {
        guard let payload = report.payload else { return }
        let context = PolicyContext(config: config, options: options, nowMs: nowMs, facts: PolicyFacts(receipt: payload))
        for policy in ReceiptPolicies.all {
            let outcome = policy.evaluate(payload, context)
            if case .failed(let verdict, let why) = outcome {
                report.fail(policy.check, verdict, why)
                return
            }
            outcome.checkState.map { report.mark(policy.check, $0) }
        }
        report.pass(config.bundleID == "*" ? "the receipt is signed by Apple" : "the receipt is signed by Apple and matches the configured app")
    }
}
