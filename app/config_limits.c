/* config_limits.c - reads the bounds of config_limits.h from the environment. */
#include "config_limits.h"

#include <stdio.h>

#include "env.h"

int config_limits_load(limits_config *lc)
{
    lc->tokens_per_s = (long)env_int("IDEMPAY_RATE_TOKENS_PER_S", 200);
    lc->orders_per_s = (long)env_int("IDEMPAY_RATE_ORDERS_PER_S", 200);
    lc->token_room_pct = (long)env_int("IDEMPAY_TOKEN_ROOM_PCT", 90);
    lc->log_rejects_per_s = (long)env_int("IDEMPAY_LOG_REJECTS_PER_S", 20);
    lc->order_retention_days = (long)env_int("IDEMPAY_ORDER_RETENTION_DAYS", 400);
    if (lc->tokens_per_s < 0 || lc->orders_per_s < 0) {
        fprintf(stderr, "IDEMPAY_RATE_TOKENS_PER_S and IDEMPAY_RATE_ORDERS_PER_S must be >= 0"
                        " (0: no limit)\n");
        return -1;
    }
    if (lc->token_room_pct < 1 || lc->token_room_pct > 99) {
        fprintf(stderr, "IDEMPAY_TOKEN_ROOM_PCT must be 1..99 (percent of Redis' maxmemory)\n");
        return -1;
    }
    if (lc->log_rejects_per_s < 1) {
        fprintf(stderr, "IDEMPAY_LOG_REJECTS_PER_S must be >= 1\n");
        return -1;
    }
    if (lc->order_retention_days != 0 && (lc->order_retention_days < CONFIG_RETENTION_MIN_DAYS ||
                                          lc->order_retention_days > CONFIG_RETENTION_MAX_DAYS)) {
        fprintf(stderr,
                "IDEMPAY_ORDER_RETENTION_DAYS must be 0 (keep orders forever) or %d..%d"
                " (longer than the %d days of bills the statement job reads)\n",
                CONFIG_RETENTION_MIN_DAYS, CONFIG_RETENTION_MAX_DAYS,
                CONFIG_RETENTION_MIN_DAYS - 1);
        return -1;
    }
    return 0;
}
