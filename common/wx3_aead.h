/* wx3_aead - WeChat Pay APIv3's AEAD_AES_256_GCM: the encryption of a
 * notification's `resource` and of /v3/certificates' `encrypt_certificate`.
 * The key is the merchant's 32-byte APIv3 key (its bytes as given, not hex
 * decoded); `nonce` is the 12-character text sent beside the ciphertext and
 * used as the GCM IV byte for byte; `associated_data` is the AAD (may be
 * empty); `ciphertext` is base64 (standard alphabet, padded, no line
 * breaks) of the encrypted bytes followed by the 16-byte tag.
 *
 * Both directions go through OpenSSL's EVP interface; neither function logs
 * the key or the plain text. Decryption checks the tag: a changed
 * ciphertext, tag, nonce, AAD or key is refused, and no plain text is
 * returned then. */
#ifndef IDEMPAY_WX3_AEAD_H
#define IDEMPAY_WX3_AEAD_H

#include <stddef.h>

#define WX3_AEAD_KEY_LEN 32
#define WX3_AEAD_TAG_LEN 16
#define WX3_AEAD_NONCE_LEN 12 /* what WeChat sends; any 1..64 bytes accepted */
/* The longest plain text either way (a certificate PEM, a resource). */
#define WX3_AEAD_MAX (64 * 1024)

/* Encrypts plain[0..len) (at most WX3_AEAD_MAX) under key (exactly
 * WX3_AEAD_KEY_LEN bytes, NUL-terminated text) with nonce and aad (NUL-
 * terminated; aad may be ""). Returns 0 with a malloc'd NUL-terminated
 * base64 of ciphertext || tag in *out (caller frees), or -1 (bad key or
 * nonce length, too long, out of memory, crypto failure; *out NULL). */
int wx3_aead_encrypt(const char *key, const char *nonce, const char *aad, const char *plain,
                     size_t len, char **out);

/* Decrypts b64 (base64 of ciphertext || tag) under key with nonce and aad.
 * Returns 0 with a malloc'd NUL-terminated plain text in *out and its length
 * in *len (caller frees), or -1 (not base64, shorter than the tag, too
 * long, tag mismatch - tampered or the wrong key -, a NUL inside the plain
 * text, out of memory; *out NULL). */
int wx3_aead_decrypt(const char *key, const char *nonce, const char *aad, const char *b64,
                     char **out, size_t *len);

/* Base64 helpers shared by the v3 modules (OpenSSL's EVP_EncodeBlock /
 * EVP_DecodeBlock, standard alphabet, padded, no line breaks). encode:
 * malloc'd NUL-terminated text or NULL on OOM. decode: 0 with a malloc'd
 * buffer of *len bytes (caller frees), or -1 (not base64: length not a
 * multiple of 4, a character outside the alphabet, empty; or OOM). */
char *wx3_base64_encode(const unsigned char *in, size_t len);
int wx3_base64_decode(const char *b64, unsigned char **out, size_t *len);

#endif
