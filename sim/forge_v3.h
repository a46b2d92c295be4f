/* forge_v3 - the APIv3 payment notifications the v3-attacks scenario sends
 * to the service's public door (POST /api/pay/callback/wechat/v3): each one
 * a TRANSACTION.SUCCESS of a declined or never-submitted order (its fee, a
 * made-up transaction id) built as the platform builds them (the resource
 * encrypted under the APIv3 key with common/wx3_aead, the body signed with
 * a platform key with common/wx3_sign), then given the one defect its
 * FORGE_V3_* kind names (schedule.h): a timestamp outside the service's
 * window, a new nonce after signing, a serial of no certificate, a changed
 * ciphertext or GCM tag byte (left unsigned, or signed again so that the
 * AEAD check alone refuses it). A service that accepted one would record a
 * payment nobody made: forged_callback_no_effect judges them as it judges
 * v2's forgeries.
 *
 * The simulator signs like the platform only because the stack is a lab:
 * it reads the mock's platform keys and the APIv3 key from the settings
 * the stack exports (IDEMPAY_MOCK_V3_PLATFORM_CERT / _CERT_KEY, the second
 * pair IDEMPAY_MOCK_V3_PLATFORM2_CERT / _CERT_KEY, IDEMPAY_WX_APIV3_KEY or
 * its _FILE) and the window from IDEMPAY_WX_V3_TIME_WINDOW_S (300). No key
 * is ever printed. */
#ifndef IDEMPAY_SIM_FORGE_V3_H
#define IDEMPAY_SIM_FORGE_V3_H

#include <stddef.h>
#include <stdint.h>

#include "schedule.h"

typedef struct forge_v3_keys forge_v3_keys;

/* The material above. NULL with a reason in why (no secret in it) when a
 * setting is unset or unreadable; the second platform pair is optional
 * (without it, tasks that name it sign with the first). */
forge_v3_keys *forge_v3_load(char *why, size_t whylen);
/* NULL accepted. */
void forge_v3_free(forge_v3_keys *k);

/* One notification ready to POST: its JSON body and the four Wechatpay-*
 * header lines ("Name: value"), headers[4] NULL. */
typedef struct {
    char *body;
    char *headers[5];
} forge_v3_msg;

/* Builds t's notification (t->forge a FORGE_V3_* kind, t->aux_order the
 * platform key, t->jitter_seed the byte changed) naming order no with
 * transaction id txn and fee fen, from appid and mchid. 0, or -1 (OOM,
 * crypto) with out empty. Release with forge_v3_msg_free either way. */
int forge_v3_build(const forge_v3_keys *k, const sched_task *t, const char *appid,
                   const char *mchid, const char *no, const char *txn, int64_t fee,
                   forge_v3_msg *out);
void forge_v3_msg_free(forge_v3_msg *m);

#endif
