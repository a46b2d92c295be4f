/* wx_sign - WeChat Pay v2 signatures.
 *
 * The string signed is every non-empty field except "sign", sorted by name
 * (byte order), joined as k=v with '&', then "&key=KEY". MD5 or HMAC-SHA256
 * (HMAC key = merchant key), upper-case hex. Verification compares in
 * constant time. The key is never logged or copied anywhere but the hash. */
#ifndef IDEMPAY_WX_SIGN_H
#define IDEMPAY_WX_SIGN_H

#include "wx_xml.h"

typedef enum { WX_SIGN_MD5 = 0, WX_SIGN_HMAC_SHA256 = 1 } wx_sign_type;

#define WX_SIGN_HEX_MAX 65 /* 64 hex digits + NUL */

/* Computes the signature of m with key into out. Returns 0, or -1 on OOM or
 * crypto failure (out then holds ""). */
int wx_sign_compute(const wx_msg *m, const char *key, wx_sign_type type, char out[WX_SIGN_HEX_MAX]);

/* The signature type a message declares with its sign_type field ("MD5",
 * "HMAC-SHA256"); dflt when the field is absent or empty. Returns 0, or -1
 * when sign_type names something else. */
int wx_sign_type_of(const wx_msg *m, wx_sign_type dflt, wx_sign_type *out);

/* The sign type named by text ("MD5" or "HMAC-SHA256", as WeChat writes
 * them). Returns 0 with *out set, or -1 (NULL, empty or anything else). */
int wx_sign_type_parse(const char *text, wx_sign_type *out);
/* "MD5" or "HMAC-SHA256". */
const char *wx_sign_type_name(wx_sign_type t);
/* The sign type policy (docs/SECURITY.md): whether a message signed with
 * `used` may be trusted by a merchant configured for `configured`. 1 when
 * used is HMAC-SHA256 (never weaker than what is configured), or when both
 * are MD5; 0 for an MD5 signature under an HMAC-SHA256 configuration (MD5
 * is accepted only when MD5 is the configured type). */
int wx_sign_type_allowed(wx_sign_type used, wx_sign_type configured);

/* Sets m's "sign" field (and "sign_type" for HMAC-SHA256 when
 * set_type is non-zero). Returns 0 or -1 (m then has no valid sign). */
int wx_sign_msg(wx_msg *m, const char *key, wx_sign_type type, int set_type);

/* 1 when m carries a valid "sign" for key (type from sign_type, else dflt),
 * 0 otherwise (missing sign, unknown sign_type, mismatch). */
int wx_sign_verify(const wx_msg *m, const char *key, wx_sign_type dflt);

/* 32 random characters [0-9A-Za-z] from the OS random source, NUL-terminated.
 * Returns 0 or -1 when the random source fails. */
int wx_nonce(char out[33]);

#endif
