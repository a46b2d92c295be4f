/* mock - what the mock gateway's modules share: the merchant credentials it
 * checks against, and the process-wide state (knobs, PRNG, targeted rules,
 * notifier, journal). */
#ifndef IDEMPAY_MOCK_H
#define IDEMPAY_MOCK_H

#include "dev_merchant.h"
#include "faults.h"
#include "rules.h"
#include "wx_sign.h"

/* The development merchant (common/dev_merchant.h), used when
 * IDEMPAY_WX_APPID / IDEMPAY_WX_MCHID / IDEMPAY_WX_KEY are unset. */
#define MOCK_DEFAULT_APPID IDEMPAY_DEV_APPID
#define MOCK_DEFAULT_MCHID IDEMPAY_DEV_MCHID
#define MOCK_DEV_KEY IDEMPAY_DEV_KEY

typedef struct {
    char appid[64];
    char mch_id[64];
    char key[128];          /* never logged */
    wx_sign_type sign_type; /* IDEMPAY_WX_SIGN_TYPE: what notifications are signed with (MD5) */
} mock_creds;

struct notifier;
struct journal;
struct v3_keys;

typedef struct {
    mock_creds creds;
    faults_state faults;
    rules_set rules;           /* targeted fault rules (memory only) */
    struct notifier *notifier; /* NULL in unit tests: no notifications */
    struct journal *journal;   /* NULL in unit tests: nothing journaled */
    int max_holds;             /* withheld replies at once (each holds a request thread) */
    struct v3_keys *v3;        /* APIv3 material (v3_keys.h); NULL: /v3/ is not served */
} mock_app;

#endif
