/* fuzz_refund_info.c - libFuzzer harness for the refund notification's
 * req_info (common/wx_refund_info.c), outside input the service decrypts.
 * The first byte chooses: odd - the rest is a req_info to decrypt under the
 * development key; it must be refused (nothing returned) or give at most
 * WX_REFUND_INFO_MAX bytes without NUL that encrypt and decrypt back to the
 * same text; even - the rest is a plain text that must encrypt to
 * canonical base64 (4n characters of the alphabet) and decrypt back
 * unchanged, and not decrypt to it under another key. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "wx_refund_info.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool b64_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/' || c == '=';
}

/* plain (len bytes) encrypts, is canonical base64, and decrypts back. */
static void round_trip(const char *plain, size_t len)
{
    char *b64 = NULL, *back = NULL;
    size_t blen = 0;
    FUZZ_CHECK(wx_refund_info_encrypt(FUZZ_KEY, plain, len, &b64) == 0);
    size_t n = strlen(b64);
    size_t ctlen = (len / 16 + 1) * 16; /* PKCS#7 always pads */
    FUZZ_CHECK(n == 4 * ((ctlen + 2) / 3));
    for (size_t i = 0; i < n; i++)
        FUZZ_CHECK(b64_char(b64[i]));
    FUZZ_CHECK(wx_refund_info_decrypt(FUZZ_KEY, b64, &back, &blen) == 0);
    FUZZ_CHECK(blen == len && memcmp(back, plain, len) == 0 && back[len] == '\0');
    free(back);
    back = NULL;
    if (wx_refund_info_decrypt("another-merchant-key", b64, &back, &blen) == 0) {
        FUZZ_CHECK(blen != len || memcmp(back, plain, len) != 0 || len == 0);
        free(back);
    }
    free(b64);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > 3 * WX_REFUND_INFO_MAX)
        return 0;
    if (data[0] & 1) {
        char *text = fuzz_text(data + 1, size - 1);
        char *plain = NULL;
        size_t len = 0;
        if (wx_refund_info_decrypt(FUZZ_KEY, text, &plain, &len) == 0) {
            FUZZ_CHECK(plain != NULL && len <= WX_REFUND_INFO_MAX && strlen(plain) == len);
            round_trip(plain, len);
            free(plain);
        } else {
            FUZZ_CHECK(plain == NULL);
        }
        free(text);
    } else if (size - 1 <= WX_REFUND_INFO_MAX && memchr(data + 1, '\0', size - 1) == NULL) {
        round_trip((const char *)data + 1, size - 1);
    }
    return 0;
}
