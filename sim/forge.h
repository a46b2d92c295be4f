/* forge - the WeChat Pay messages the simulator signs itself, with the
 * merchant's credentials (client_merchant) through common/wx_sign and
 * common/wx_xml:
 *  - forged payment notifications posted to the service (TASK_FORGE): bad
 *    signature, wrong total_fee (correctly signed), a real transaction id of
 *    another order, another mch_id, or an order never submitted; signed with
 *    MD5 or HMAC-SHA256 as the schedule drew; or, for a FORGE_V3_* kind, an
 *    APIv3 notification with one defect (forge_v3.h) posted as JSON to the
 *    service's v3 URL (not sent without the platform's material);
 *  - the payer's own second charge of an order straight at the gateway
 *    (TASK_STRAY), only once a client has seen the order PAID.
 * A declined target is forged against only when its client saw the decline
 * (402) and no PAID; a replayed transaction id only when a real one is at
 * hand. Every message sent is recorded as one operation. */
#ifndef IDEMPAY_SIM_FORGE_H
#define IDEMPAY_SIM_FORGE_H

#include "client.h"

/* Builds, signs and posts t's forged notification (or nothing, see above). */
/* Where forged notifications go when IDEMPAY_NOTIFY_URL is unset: the
 * stack's public door (IDEMPAY_PUBLIC_PORT, default IDEMPAY_HTTP_PORT + 4)
 * when target is the stack's merchant door (idempay serves notifications
 * on the public door only: docs/SECURITY.md), else target itself (another
 * service, e.g. the seed fixture). Returns target or a static buffer (not
 * thread-safe: called once, before the traffic). */
const char *forge_notify_base(const char *target);

void forge_task_callback(sim_client *c, const sched_task *t, long task);
/* Makes the payer's second charge of t's order at the gateway (see above). */
void forge_task_second_charge(sim_client *c, const sched_task *t, long task);

/* The forged notification itself: the fields of a paid notification for
 * order no (fee, transaction id txn, time_end now), mch_id and signing key
 * as t's forgery kind wants them. Returns malloc'd XML or NULL. */
char *forge_notification_xml(const client_merchant *m, const sched_task *t, const char *no,
                             const char *txn, int64_t fee);

#endif
