/* hex - bytes as lower-case hexadecimal text: the one encoder of the
 * digests, MACs, salts and nonces the programs write as hex (caller_sign,
 * caller_store, idem_key, refund_api). */
#ifndef IDEMPAY_HEX_H
#define IDEMPAY_HEX_H

#include <stddef.h>

/* Writes the 2*n lower-case hex digits of in[0..n) and a NUL into out,
 * which holds at least 2*n + 1 chars and does not overlap in. */
void hex_lower(const unsigned char *in, size_t n, char *out);

#endif
