/* config_limits - the service's bounds on what callers may make it store
 * (issue 23, docs/SECURITY.md "Bounded growth"): per-caller request rates,
 * the share of Redis' maxmemory that new tokens may fill, and how many
 * refusal lines a process writes to its log per second. Read once at
 * start-up by app_config_load; read-only afterwards. */
#ifndef IDEMPAY_CONFIG_LIMITS_H
#define IDEMPAY_CONFIG_LIMITS_H

typedef struct {
    long tokens_per_s;         /* IDEMPAY_RATE_TOKENS_PER_S, 200: GET /api/pay/token per caller
                                  per second; 0 turns the limit off (a benchmark) */
    long orders_per_s;         /* IDEMPAY_RATE_ORDERS_PER_S, 200: POST /api/pay and refund
                                  requests per caller per second; 0 turns it off */
    long token_room_pct;       /* IDEMPAY_TOKEN_ROOM_PCT, 90: no new token once Redis' used_memory
                                  reaches this share of its maxmemory (1..99); the rest is
                                  room for consuming the tokens already issued */
    long log_rejects_per_s;    /* IDEMPAY_LOG_REJECTS_PER_S, 20: refusal lines (4xx access
                                  lines, token refusals) one process logs per second; the
                                  rest are counted (idempay_log_lines_suppressed_total) */
    long order_retention_days; /* IDEMPAY_ORDER_RETENTION_DAYS, 400: a final order unchanged
                               this long moves to the archive (order_archive.h); 0 keeps
                               orders forever; else at least CONFIG_RETENTION_MIN_DAYS */
} limits_config;

/* The shortest retention accepted: longer than the 90 days of bills the
 * statement job reads (a charge in a bill always finds its order live). */
#define CONFIG_RETENTION_MIN_DAYS 91
#define CONFIG_RETENTION_MAX_DAYS 36500

/* Fills lc from the environment. Returns 0, or -1 with a message naming
 * the setting on stderr (a negative rate, a room outside 1..99, a log
 * budget below 1, a retention that is neither 0 nor 91..36500 days). */
int config_limits_load(limits_config *lc);

#endif
