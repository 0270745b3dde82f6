// SPEC §5: the receipt checks, in order. The first failure decides the verdict.
// Checks 2–7 run on one of two crypto paths (see CryptoPath); checks 8–13 are shared.

import COpenSSL

extension Verifier {
    /// Verifies a receipt (DER or base64) at `nowMs`.
    /// A non-valid verdict is a normal return; a thrown `IAPVFailure` means the call could not answer.
    public func verifyReceipt(_ input: UnsafeRawBufferPointer, options: CallOptions = CallOptions(),
                              nowMs: Int64, path: CryptoPath = .cached) throws(IAPVFailure) -> ReceiptReport {
        guard nowMs >= 0 else { throw .argument("now_ms must be Unix milliseconds >= 0, got \(nowMs)") }
        if config.deviceCheck == .required, options.deviceID == nil {
            throw .argument("device_check is \"required\" but the call passed no options.device_id")
        }
        // Check 1: size, before any parsing.
        guard input.count <= config.maxInputBytes else {
            throw IAPVFailure(.tooLarge, "the receipt is \(input.count) bytes; max_input_bytes is \(config.maxInputBytes)")
        }
        var report = ReceiptReport()
        guard let der = Self.receiptBytes(input) else {
            report.fail("structure", .malformed, input.isEmpty
                ? "the receipt is empty"
                : "the receipt is neither DER nor base64")
            return report
        }
        let proceed: Bool
        switch path {
        case .cached: proceed = cachedCryptoChecks(der, &report)
        case .reference: proceed = referenceCryptoChecks(der, &report)
        }
        if proceed { policyChecks(options: options, nowMs: nowMs, &report) }
        if report.isValid, let payload = report.payload {
            report.entitlements = EntitlementEngine.evaluate(
                transactions: payload.inApp.compactMap(Transaction.init), renewals: options.renewalInfo,
                catalog: config.products, grace: config.gracePeriod, nowMs: nowMs,
                delivered: options.deliveredTransactionIDs, orders: options.orders)
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
    private func acceptPayload(_ content: [UInt8], _ report: inout ReceiptReport) -> Bool {
        let payload: ReceiptPayload
        do {
            payload = try ReceiptPayloadDecoder.header(content)
        } catch {
            guard case .malformed(let why) = error else { return false }
            report.fail("payload", .malformed, why)
            return false
        }
        report.payload = payload
        guard payload.creationDateMs != nil else {
            report.fail("payload", .malformed, "the payload has no receipt creation date (attribute 12)")
            return false
        }
        report.mark("payload", .ok)
        if payload.receiptType == "Xcode", !config.xcodeAccept {
            report.fail("environment", .environmentRejected, "this is an Xcode StoreKit-testing receipt; set xcode.accept to accept it")
            return false
        }
        return true
    }

    /// After check 7: the whole payload, now known to be Apple's, decoded for checks 8–13.
    private func decodeSignedPayload(_ content: [UInt8], _ report: inout ReceiptReport) -> Bool {
        do {
            report.payload = try ReceiptPayloadDecoder.decode(content)
            report.payloadIsComplete = true
            return true
        } catch {
            guard case .malformed(let why) = error else { return false }
            report.fail("payload", .malformed, why)
            return false
        }
    }

    private func isXcode(_ report: ReceiptReport) -> Bool { report.payload?.receiptType == "Xcode" }

    private func anchorsFor(_ report: ReceiptReport) -> TrustAnchors {
        isXcode(report) ? (xcodeAnchors ?? anchors) : anchors
    }

    // MARK: - Cached path

    private func cachedCryptoChecks(_ der: [UInt8], _ report: inout ReceiptReport) -> Bool {
        let envelope: SignedDataEnvelope
        do {
            envelope = try SignedDataParser.parse(der)
        } catch {
            switch error {
            case .malformed(let why): report.fail("structure", .malformed, why)
            case .unsupportedAlgorithm(let why):
                report.mark("structure", .ok)
                report.fail("algorithm", .unsupportedAlgorithm, why)
            }
            return false
        }
        report.mark("structure", .ok)
        report.mark("algorithm", .ok)
        report.digest = envelope.signer.digest
        report.scheme = envelope.signer.scheme?.0
        guard acceptPayload(envelope.content, &report), let created = report.payload?.creationDateMs else { return false }

        let xcode = isXcode(report)
        let key = ChainKey(kind: xcode ? 1 : 0, signer: envelope.signer.identifier, certificates: envelope.certificatesField)
        let verified: VerifiedChain
        if let hit = cache.lookup(key) {
            if let bad = hit.firstInvalid(at: created) {
                report.fail("chain", .untrustedChain,
                            "\(bad.subject) is not valid at the receipt creation date (\(RFC3339.format(created)))")
                return false
            }
            verified = hit
        } else {
            guard let fresh = validateEmbeddedChain(envelope, created: created, xcode: xcode, &report) else { return false }
            cache.insert(key, fresh)
            verified = fresh
        }
        report.mark("chain", .ok)
        report.mark("signer", xcode ? .skipped : .ok)
        report.chain = verified.summaries
        if case .failure(let f) = SignatureCheck.verify(envelope: envelope, key: verified.leafKey) {
            report.fail("signature", .signatureInvalid, f.message)
            return false
        }
        report.mark("signature", .ok)
        return decodeSignedPayload(envelope.content, &report)
    }

    /// A cache miss: decode the embedded certificates and validate them with OpenSSL.
    private func validateEmbeddedChain(_ envelope: SignedDataEnvelope, created: Int64, xcode: Bool,
                                       _ report: inout ReceiptReport) -> VerifiedChain? {
        var certs: [X509Certificate] = []
        for der in envelope.certificates {
            guard let c = X509Certificate(der: der) else {
                report.fail("structure", .malformed, "an embedded certificate cannot be decoded")
                return nil
            }
            certs.append(c)
        }
        guard let index = ChainValidator.signerIndex(envelope.signer, in: certs) else {
            report.fail("chain", .untrustedChain, "the signer's certificate is not embedded in the receipt")
            return nil
        }
        do {
            let chain = try ChainValidator.validate(signer: certs[index], untrusted: certs, anchors: anchorsFor(report),
                                                    atMs: created, applePolicy: !xcode)
            guard let verified = VerifiedChain(chain) else {
                report.fail("chain", .untrustedChain, "the validated chain has an unreadable certificate")
                return nil
            }
            return verified
        } catch {
            recordChainFailure(error, &report)
            return nil
        }
    }

    private func recordChainFailure(_ error: ChainFailure, _ report: inout ReceiptReport) {
        switch error {
        case .untrusted(let why): report.fail("chain", .untrustedChain, why)
        case .notAppleSigner(let why):
            report.mark("chain", .ok)
            report.fail("signer", .notAppleSigner, why)
        }
    }

    // MARK: - Reference path (OpenSSL PKCS7_verify)

    private func referenceCryptoChecks(_ der: [UInt8], _ report: inout ReceiptReport) -> Bool {
        defer { ERR_clear_error() }
        var consumed = 0
        let parsed: UnsafeMutablePointer<PKCS7>? = der.withUnsafeBufferPointer { buf in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            let r = d2i_PKCS7(nil, &p, buf.count)
            if let p, let base = buf.baseAddress { consumed = p - base }
            return r
        }
        guard let p7 = parsed else {
            report.fail("structure", .malformed, "OpenSSL cannot decode the receipt as PKCS#7")
            return false
        }
        defer { PKCS7_free(p7) }
        guard consumed == der.count else {
            report.fail("structure", .malformed, "the receipt has trailing bytes after the PKCS#7 structure")
            return false
        }
        guard iapv_pkcs7_is_signed(p7) != 0 else {
            report.fail("structure", .malformed, "the ContentInfo is not signedData")
            return false
        }
        guard let data = iapv_pkcs7_data(p7) else {
            report.fail("structure", .malformed, "the signed content is detached or not of type data")
            return false
        }
        if let certs = iapv_pkcs7_certs(p7), iapv_sk_x509_num(certs) > EnvelopeLimits.maxCertificates {
            report.fail("structure", .malformed, "the receipt embeds more than \(EnvelopeLimits.maxCertificates) certificates")
            return false
        }
        guard iapv_pkcs7_signer_count(p7) == 1, let si = iapv_pkcs7_signer(p7, 0) else {
            report.fail("structure", .malformed, "the receipt must have exactly one SignerInfo")
            return false
        }
        guard iapv_pkcs7_has_crls(p7) == 0 else {
            report.fail("structure", .malformed, "the receipt carries a CRLs field; App Store receipts have none")
            return false
        }
        guard iapv_pkcs7_signer_has_unsigned_attributes(si) == 0 else {
            report.fail("structure", .malformed, "the SignerInfo carries unsigned attributes; App Store receipts have none")
            return false
        }
        report.mark("structure", .ok)
        var digestAlg: UnsafeMutablePointer<X509_ALGOR>?
        var sigAlg: UnsafeMutablePointer<X509_ALGOR>?
        PKCS7_SIGNER_INFO_get0_algs(si, nil, &digestAlg, &sigAlg)
        let digestNID = Self.nid(digestAlg)
        let sigNID = Self.nid(sigAlg)
        let digest: DigestAlgorithm? = digestNID == NID_sha1 ? .sha1 : digestNID == NID_sha256 ? .sha256 : nil
        let scheme: (SignatureScheme, DigestAlgorithm?)? = {
            switch sigNID {
            case NID_rsaEncryption: return (.rsa, nil)
            case NID_sha1WithRSAEncryption: return (.rsa, .sha1)
            case NID_sha256WithRSAEncryption: return (.rsa, .sha256)
            case NID_X9_62_id_ecPublicKey: return (.ecdsa, nil)
            case NID_ecdsa_with_SHA1: return (.ecdsa, .sha1)
            case NID_ecdsa_with_SHA256: return (.ecdsa, .sha256)
            default: return nil
            }
        }()
        guard let digest else {
            report.fail("algorithm", .unsupportedAlgorithm, "the content digest is not SHA-1 or SHA-256")
            return false
        }
        guard let scheme, scheme.1 == nil || scheme.1 == digest else {
            report.fail("algorithm", .unsupportedAlgorithm, "the signature algorithm is not RSA PKCS#1 v1.5 or ECDSA with the SignerInfo digest")
            return false
        }
        guard iapv_pkcs7_digest_set_is_only(p7, si) != 0 else {
            report.fail("algorithm", .unsupportedAlgorithm, "the SignedData digestAlgorithms SET must list only the signer's digest")
            return false
        }
        report.mark("algorithm", .ok)
        report.digest = digest
        report.scheme = scheme.0
        let content: [UInt8] = {
            guard let p = ASN1_STRING_get0_data(data) else { return [] }
            return Array(UnsafeBufferPointer(start: p, count: Int(max(0, ASN1_STRING_length(data)))))
        }()
        guard acceptPayload(content, &report), let created = report.payload?.creationDateMs else { return false }

        let xcode = isXcode(report)
        let anchors = anchorsFor(report)
        let seconds = created >= 0 ? created / 1000 : (created - 999) / 1000
        guard let store = anchors.makeStore(validatingAt: seconds), let out = BIO_new(BIO_s_mem()) else {
            report.fail("chain", .untrustedChain, "out of memory")
            return false
        }
        defer {
            X509_STORE_free(store)
            BIO_free(out)
        }
        ERR_clear_error()
        let verified = PKCS7_verify(p7, nil, store, nil, out, 0) == 1
        let reason = ERR_GET_REASON(ERR_peek_last_error())
        ERR_clear_error()
        if !verified, reason == PKCS7_R_CERTIFICATE_VERIFY_ERROR || reason == PKCS7_R_SIGNER_CERTIFICATE_NOT_FOUND {
            report.fail("chain", .untrustedChain, "OpenSSL PKCS7_verify rejects the certificate chain at the receipt creation date")
            return false
        }
        // The marker policy needs the built path, which PKCS7_verify does not return.
        guard let signers = PKCS7_get0_signers(p7, nil, 0) else {
            report.fail("chain", .untrustedChain, "the signer's certificate is not embedded in the receipt")
            return false
        }
        defer { iapv_sk_x509_free(signers) }
        guard iapv_sk_x509_num(signers) == 1, let signerX = iapv_sk_x509_value(signers, 0),
              let signer = X509Certificate(borrowing: signerX) else {
            report.fail("chain", .untrustedChain, "the signer's certificate is not embedded in the receipt")
            return false
        }
        var untrusted: [X509Certificate] = []
        if let certs = iapv_pkcs7_certs(p7) {
            for i in 0..<iapv_sk_x509_num(certs) {
                if let x = iapv_sk_x509_value(certs, i), let c = X509Certificate(borrowing: x) { untrusted.append(c) }
            }
        }
        do {
            let chain = try ChainValidator.validate(signer: signer, untrusted: untrusted, anchors: anchors,
                                                    atMs: created, applePolicy: !xcode)
            report.chain = VerifiedChain(chain)?.summaries ?? []
        } catch {
            recordChainFailure(error, &report)
            return false
        }
        report.mark("chain", .ok)
        report.mark("signer", xcode ? .skipped : .ok)
        guard verified else {
            report.fail("signature", .signatureInvalid, "OpenSSL PKCS7_verify rejects the signature")
            return false
        }
        // PKCS7_verify picks the scheme from the key and ignores the SignerInfo's algorithm OID;
        // a mislabelled signature is rejected here as on the cached path.
        guard signer.publicKey()?.scheme == scheme.0 else {
            report.fail("signature", .signatureInvalid, "the signing key type does not match the SignerInfo signature algorithm")
            return false
        }
        report.mark("signature", .ok)
        return decodeSignedPayload(content, &report)
    }

    private static func nid(_ algor: UnsafeMutablePointer<X509_ALGOR>?) -> Int32 {
        guard let algor else { return NID_undef }
        var obj: OpaquePointer?
        X509_ALGOR_get0(&obj, nil, nil, algor)
        return obj.map { OBJ_obj2nid($0) } ?? NID_undef
    }

    // MARK: - Checks 8–13

    private func policyChecks(options: CallOptions, nowMs: Int64, _ report: inout ReceiptReport) {
        guard let payload = report.payload else { return }
        // 8: environment
        guard let env = ReceiptEnvironment(receiptType: payload.receiptType) else {
            report.fail("environment", .environmentRejected,
                        "the receipt type \(payload.receiptType.map { "\"\($0)\"" } ?? "(absent)") is not a known environment")
            return
        }
        guard config.environments.contains(env) else {
            report.fail("environment", .environmentRejected,
                        "the receipt is from \(env.rawValue), which the config's environments do not accept")
            return
        }
        report.mark("environment", .ok)
        // 9: bundle id, exact bytes
        switch config.checkBundle(payload.bundleIDBytes, display: payload.bundleID, what: "receipt") {
        case .notChecked: report.mark("bundle_id", .notChecked)
        case .matches: report.mark("bundle_id", .ok)
        case .mismatch(let why):
            report.fail("bundle_id", .bundleMismatch, why)
            return
        }
        // 10: app version
        if let versions = config.bundleVersions {
            guard let v = payload.appVersion, versions.contains(v) else {
                report.fail("bundle_version", .versionMismatch,
                            "the app version \(payload.appVersion.map { "\"\($0)\"" } ?? "(absent)") is not in bundle_versions")
                return
            }
            report.mark("bundle_version", .ok)
        } else {
            report.mark("bundle_version", .skipped)
        }
        // 11: device hash
        if config.deviceCheck != .off, let device = options.deviceID {
            guard let opaque = payload.opaqueValue, let bundle = payload.bundleIDValue, let expected = payload.sha1Hash,
                  Digest.sha1(device + opaque + bundle) == expected else {
                report.fail("device", .deviceMismatch, "the receipt was not issued to this device (attribute 5 hash differs)")
                return
            }
            report.mark("device", .ok)
        } else {
            report.mark("device", .skipped)
        }
        // 12: receipt expiration
        if let expires = payload.expirationDateMs {
            guard nowMs < expires else {
                report.fail("expiration", .receiptExpired, "the receipt expired at \(RFC3339.format(expires))")
                return
            }
            report.mark("expiration", .ok)
        } else {
            report.mark("expiration", .skipped)
        }
        // 13: maximum age
        if let maxAge = config.maxReceiptAgeMs, let created = payload.creationDateMs {
            let (oldest, overflow) = nowMs.subtractingReportingOverflow(maxAge)
            guard overflow || created >= oldest else {
                report.fail("age", .stale, "the receipt was created at \(RFC3339.format(created)), more than max_receipt_age_ms ago")
                return
            }
            report.mark("age", .ok)
        } else {
            report.mark("age", .skipped)
        }
        report.judgement = Judgement(.valid, config.bundleID == "*"
            ? "the receipt is signed by Apple (bundle id not checked: the config accepts any app)"
            : "the receipt is signed by Apple and matches the configured app")
    }
}
