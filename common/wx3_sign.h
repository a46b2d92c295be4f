/* wx3_sign - WeChat Pay APIv3's signatures: SHA256withRSA (RSASSA-PKCS1-v1_5
 * over SHA-256, OpenSSL EVP), base64.
 *
 * - A request is signed by the merchant over
 *   "METHOD\nURL\nTIMESTAMP\nNONCE\nBODY\n" (URL: the path and query as
 *   sent, BODY "" for a GET) and carries
 *   `Authorization: WECHATPAY2-SHA256-RSA2048 mchid="..",nonce_str="..",
 *   signature="..",timestamp="..",serial_no=".."` (parameters in any order).
 * - A reply or a notification is signed by the platform over
 *   "TIMESTAMP\nNONCE\nBODY\n" and carries Wechatpay-Serial, -Signature,
 *   -Timestamp and -Nonce.
 *
 * Keys and certificates are PEM files. A certificate's serial is its
 * serial number in upper-case hex without leading zeros, as WeChat prints
 * it. Nothing here logs a key. Every int function returns 0, or -1 with
 * nothing allocated for the caller. */
#ifndef IDEMPAY_WX3_SIGN_H
#define IDEMPAY_WX3_SIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <openssl/evp.h>

#define WX3_AUTH_SCHEMA "WECHATPAY2-SHA256-RSA2048"
#define WX3_SERIAL_BUF 65
#define WX3_MAX_PEM 16384

/* A certificate as v3 needs it. */
typedef struct {
    EVP_PKEY *pub;                /* its public key (owned) */
    char serial[WX3_SERIAL_BUF];  /* upper-case hex */
    time_t not_before, not_after; /* UTC seconds */
    char pem[WX3_MAX_PEM];        /* the certificate itself, PEM */
} wx3_cert;

/* The private key of a PEM file (PKCS#8 or PKCS#1) into *out (caller frees
 * with EVP_PKEY_free). */
int wx3_key_load(const char *path, EVP_PKEY **out);
/* The certificate of a PEM file into *out (wx3_cert_free releases it). */
int wx3_cert_load(const char *path, wx3_cert *out);
/* The certificate of PEM text pem[0..len) (at most WX3_MAX_PEM bytes, e.g.
 * one decrypted from /v3/certificates) into *out (wx3_cert_free). */
int wx3_cert_parse(const char *pem, size_t len, wx3_cert *out);
/* Frees c->pub (c may be NULL or zeroed). */
void wx3_cert_free(wx3_cert *c);
/* A certificate and its private key (PEM files; either path may be NULL,
 * which fails) into *cert and *key. 0, or -1 with nothing kept. */
int wx3_pair_load(const char *cert_path, const char *key_path, wx3_cert *cert, EVP_PKEY **key);

/* The four header lines of a signed reply or notification,
 * "Wechatpay-Serial: ...", "-Signature", "-Timestamp", "-Nonce", malloc'd
 * into lines[0..3], lines[4] NULL (http_client's header list). 0, or -1
 * (OOM) with every line freed and NULL. Release with wx3_lines_free. */
int wx3_signed_lines(const char *serial, const char *signature, const char *timestamp,
                     const char *nonce, char *lines[5]);
void wx3_lines_free(char *lines[5]);

/* The base64 SHA256withRSA signature of msg[0..len) with key: a malloc'd
 * NUL-terminated string in *out (caller frees). */
int wx3_sign(EVP_PKEY *key, const char *msg, size_t len, char **out);
/* 0 when b64 is a valid SHA256withRSA signature of msg[0..len) under pub;
 * -1 otherwise (bad base64 included). */
int wx3_verify(EVP_PKEY *pub, const char *msg, size_t len, const char *b64);

/* The text a request's signature covers, malloc'd (caller frees), NULL on
 * OOM. body may be NULL (""). */
char *wx3_request_message(const char *method, const char *url, const char *timestamp,
                          const char *nonce, const char *body, size_t body_len);
/* The text a reply's or notification's signature covers; *len its length. */
char *wx3_response_message(const char *timestamp, const char *nonce, const char *body,
                           size_t body_len, size_t *len);

/* The Authorization header's parameters. */
typedef struct {
    char mchid[33];
    char nonce_str[65];
    char timestamp[21];
    char serial_no[WX3_SERIAL_BUF];
    char signature[1024];
} wx3_auth;

/* Parses an Authorization header value: the schema, one space, then
 * key="value" pairs separated by commas (mchid, nonce_str, signature,
 * timestamp, serial_no, each exactly once, any order; other keys refused).
 * -1 with a short reason in why (never the signature) when it is not one. */
int wx3_auth_parse(const char *header, wx3_auth *out, char *why, size_t whylen);

/* A random nonce of len (< cap) characters [0-9A-Za-z] from OpenSSL's RNG. */
int wx3_nonce(char *out, size_t cap, size_t len);

#endif
