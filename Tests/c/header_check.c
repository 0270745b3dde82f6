/* Compiles the public header on its own, strictly, and pins the iapv_error layout. */
#include "iapverify.h"
#include <stddef.h>

typedef char iapv_error_is_256_bytes[sizeof(iapv_error) == 256 ? 1 : -1];
typedef char iapv_error_message_at_8[offsetof(iapv_error, message) == 8 ? 1 : -1];
typedef char iapv_abi_is_1[IAPV_ABI_VERSION == 1 ? 1 : -1];

int main(void) {
    iapv_error err;
    err.code = IAPV_E_CONFIG;
    (void)err;
    return IAPV_OK;
}
