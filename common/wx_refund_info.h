/* wx_refund_info - the encrypted req_info of a WeChat Pay v2 refund result
 * notification ("退款结果通知"): base64 of AES-256-ECB with PKCS#7 padding,
 * the key being the 32 lower-case hex characters of MD5(merchant key), used
 * as the 32 raw bytes of the AES-256 key. The mock encrypts, the service
 * decrypts; both go through OpenSSL's EVP interface.
 *
 * Neither function logs the key or the plain text. */
#ifndef IDEMPAY_WX_REFUND_INFO_H
#define IDEMPAY_WX_REFUND_INFO_H

#include <stddef.h>

/* The longest plain text either way (req_info is a flat XML of ~15 fields). */
#define WX_REFUND_INFO_MAX 8192

/* Encrypts plain (len bytes, at most WX_REFUND_INFO_MAX) under merchant
 * key key. Returns 0 with a malloc'd NUL-terminated base64 string in *out
 * (caller frees), or -1 (too long, out of memory, crypto failure; *out
 * NULL). */
int wx_refund_info_encrypt(const char *key, const char *plain, size_t len, char **out);

/* Decrypts the base64 text b64 under merchant key key. Returns 0 with a
 * malloc'd NUL-terminated plain text in *out and its length in *len (caller
 * frees), or -1 (not base64, not a whole number of blocks, bad padding -
 * e.g. the wrong key -, too long, out of memory; *out NULL). */
int wx_refund_info_decrypt(const char *key, const char *b64, char **out, size_t *len);

#endif
