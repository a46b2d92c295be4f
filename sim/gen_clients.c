/* gen_clients.c - the table of client kinds, built from GEN_CLIENT_KINDS
 * (gen_clients.h). */
#include "gen_clients.h"

#define GK_TABLE_ROW(id, tok, idem, poll, retry, att_lo, att_hi, to_lo, to_hi, bo_lo, bo_hi,       \
                     patience)                                                                     \
    [GK_##id] = { .token_share = tok,                                                              \
                  .idem_share = idem,                                                              \
                  .poll_share = poll,                                                              \
                  .retry_declined_share = retry,                                                   \
                  .min_attempts = att_lo,                                                          \
                  .max_attempts = att_hi,                                                          \
                  .min_timeout_ms = to_lo,                                                         \
                  .max_timeout_ms = to_hi,                                                         \
                  .min_backoff_ms = bo_lo,                                                         \
                  .max_backoff_ms = bo_hi,                                                         \
                  .patience_ms = patience },
static const gen_client gk_table[GK_COUNT] = { GEN_CLIENT_KINDS(GK_TABLE_ROW) };
#undef GK_TABLE_ROW

const gen_client *gen_client_kind(gen_client_kind_id kind)
{
    return &gk_table[kind];
}
