// The header cannot drift from the exports: each pair below must have one Swift type, so a
// prototype in Include/iapverify.h that differs from its @_cdecl function (a parameter added,
// a width changed, a pointer made raw) stops the build. Never called; the compiler is the test.

import CIAPVerifyHeader

private func sameType<T>(_: T, _: T) {}

@inline(never)
private func exportsMatchTheHeader() {
    sameType(CIAPVerifyHeader.iapv_abi_version, IAPVerifyC.iapv_abi_version)
    sameType(CIAPVerifyHeader.iapv_version_string, IAPVerifyC.iapv_version_string)
    sameType(CIAPVerifyHeader.iapv_error_message_size, IAPVerifyC.iapv_error_message_size)
    sameType(CIAPVerifyHeader.iapv_status_name, IAPVerifyC.iapv_status_name)
    sameType(CIAPVerifyHeader.iapv_verifier_new, IAPVerifyC.iapv_verifier_new)
    sameType(CIAPVerifyHeader.iapv_verifier_free, IAPVerifyC.iapv_verifier_free)
    sameType(CIAPVerifyHeader.iapv_verify_receipt, IAPVerifyC.iapv_verify_receipt)
    sameType(CIAPVerifyHeader.iapv_interpret_response, IAPVerifyC.iapv_interpret_response)
    sameType(CIAPVerifyHeader.iapv_compute_entitlements, IAPVerifyC.iapv_compute_entitlements)
    sameType(CIAPVerifyHeader.iapv_verify_jws, IAPVerifyC.iapv_verify_jws)
    sameType(CIAPVerifyHeader.iapv_read_transaction_receipt, IAPVerifyC.iapv_read_transaction_receipt)
    sameType(CIAPVerifyHeader.iapv_signer_new, IAPVerifyC.iapv_signer_new)
    sameType(CIAPVerifyHeader.iapv_signer_free, IAPVerifyC.iapv_signer_free)
    sameType(CIAPVerifyHeader.iapv_api_token, IAPVerifyC.iapv_api_token)
    sameType(CIAPVerifyHeader.iapv_api_request, IAPVerifyC.iapv_api_request)
    sameType(CIAPVerifyHeader.iapv_sign, IAPVerifyC.iapv_sign)
    sameType(CIAPVerifyHeader.iapv_interpret_api_response, IAPVerifyC.iapv_interpret_api_response)
    sameType(CIAPVerifyHeader.iapv_result_verdict, IAPVerifyC.iapv_result_verdict)
    sameType(CIAPVerifyHeader.iapv_result_is_valid, IAPVerifyC.iapv_result_is_valid)
    sameType(CIAPVerifyHeader.iapv_result_json, IAPVerifyC.iapv_result_json)
    sameType(CIAPVerifyHeader.iapv_result_free, IAPVerifyC.iapv_result_free)
}
