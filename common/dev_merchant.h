/* dev_merchant - the documented development merchant, defined once: the
 * appid, mch_id and 32-character key every program (the service, the mock,
 * the simulator, the bench, the fuzz harnesses) falls back to when
 * IDEMPAY_WX_APPID / IDEMPAY_WX_MCHID / IDEMPAY_WX_KEY are unset.
 *
 * The key is published (README, "Configuration"): the service refuses to
 * start with it unless IDEMPAY_DEVELOPMENT=1 (app/config.c), and
 * --check-config warns about it. Nothing real may ever be signed with it.
 * tests/integration/lib.py reads these three values from this file. */
#ifndef IDEMPAY_DEV_MERCHANT_H
#define IDEMPAY_DEV_MERCHANT_H

#define IDEMPAY_DEV_APPID "wx0000000000000000"
#define IDEMPAY_DEV_MCHID "1900000109"
#define IDEMPAY_DEV_KEY "idempaydevkey0123456789abcdefABC"

#endif
