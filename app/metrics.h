/* metrics - process-shared counters and histograms in an mmap'd file under
 * the state dir, so every FastCGI process of the service (and a restarted
 * one) adds to the same numbers. Updates are lock-free atomic adds; the
 * file layout is versioned and recreated when it does not match.
 *
 * The exposition follows Prometheus' text format 0.0.4 by the book: every
 * family has # HELP and # TYPE, counters end in _total, durations are
 * histograms in seconds (idempay_http_request_duration_seconds by method,
 * route template and code; idempay_gateway_seconds by op), plus
 * idempay_build_info, gauges (gateway calls in flight in every live service
 * process, PROCESSING orders, live processes) and the standard process_*
 * metrics of the process that answers the scrape. */
#ifndef IDEMPAY_METRICS_H
#define IDEMPAY_METRICS_H

#include "http_msg.h"

typedef enum {
    /* POST /api/pay outcomes: idempay_payments_total{outcome=...} */
    MET_PAY_PAID = 0,      /* charged now and PAID */
    MET_PAY_REPLAYED,      /* repeat of a PAID order answered from the DB */
    MET_PAY_PROCESSING,    /* 202 */
    MET_PAY_DECLINED,      /* 402 */
    MET_PAY_MISMATCH,      /* 422 order_mismatch */
    MET_PAY_IDEM_REPLAYED, /* Idempotency-Key replay */
    MET_PAY_IDEM_CONFLICT, /* 409 request_in_progress */
    MET_PAY_IDEM_MISMATCH, /* 422 idempotency_key_mismatch */
    MET_PAY_INVALID_TOKEN, /* 403 */
    MET_PAY_INVALID,       /* 4xx bad input */
    MET_PAY_UNAVAILABLE,   /* 503 */
    /* idempay_duplicates_absorbed_total: any repeat that did not reach the gateway */
    MET_DUPLICATE_ABSORBED,
    /* idempay_callbacks_total{outcome=...} */
    MET_CB_APPLIED,
    MET_CB_ALREADY_APPLIED,
    MET_CB_FAIL_MALFORMED,
    MET_CB_FAIL_SIGNATURE,
    MET_CB_FAIL_MERCHANT, /* appid / mch_id */
    MET_CB_FAIL_RESULT,   /* return_code/result_code not SUCCESS */
    MET_CB_FAIL_AMOUNT,
    MET_CB_FAIL_UNKNOWN_ORDER,
    MET_CB_UNAVAILABLE,
    /* idempay_double_charge_detected_total */
    MET_DOUBLE_CHARGE_DETECTED,
    /* idempay_refunds_total{outcome=...} */
    MET_REFUND_DONE,
    MET_REFUND_RETRY,
    /* idempay_reconciler_settled_total{outcome=...} */
    MET_RECON_PAID,
    MET_RECON_FAILED,
    MET_RECON_UNKNOWN,
    /* idempay_tokens_total{outcome=...} */
    MET_TOKEN_ISSUED,
    MET_TOKEN_REJECTED,
    /* POST /api/pay: 402 payment_closed */
    MET_PAY_CLOSED,
    /* idempay_gateway_closes_total{outcome=...}: closeorder of an uncertain attempt */
    MET_CLOSE_CLOSED,
    MET_CLOSE_ORDERPAID,
    MET_CLOSE_UNSUPPORTED,
    MET_CLOSE_UNKNOWN,
    /* idempay_refunds_queued_total: charges queued for refund (any path) */
    MET_REFUND_QUEUED,
    /* idempay_charge_amount_mismatch_total: a charge of another amount than its order */
    MET_AMOUNT_MISMATCH,
    /* idempay_statement_runs_total{outcome=ok|failed} */
    MET_STMT_RUN_OK,
    MET_STMT_RUN_FAILED,
    /* idempay_statement_charges_total{outcome=...}: each charge line judged */
    MET_STMT_MATCHED,     /* its order is PAID with it */
    MET_STMT_PAID,        /* it made its PROCESSING/FAILED order PAID */
    MET_STMT_REFUND,      /* not its order's transaction: refund queued now */
    MET_STMT_REFUNDED,    /* refunded already (in the statement or our queue) */
    MET_STMT_UNMATCHED,   /* no order of that out_trade_no: logged for a human */
    MET_STMT_IN_FLIGHT,   /* its order is PROCESSING under a live lease: left to its holder */
    MET_STMT_UNCONFIRMED, /* the signed orderquery does not know the bill's charge: ignored */
    /* idempay_statement_bad_lines_total: bill lines set aside unread */
    MET_STMT_BAD_LINE,
    /* refunds that complete (refund_queue.c, refund_notify.c, refund_api.c) */
    MET_REFUND_ACCEPTED,     /* idempay_refunds_total{outcome="accepted"}: the gateway accepted */
    MET_REFUND_STUCK_CLOSE,  /* idempay_refunds_stuck_total{outcome="refundclose"} */
    MET_REFUND_STUCK_CHANGE, /* idempay_refunds_stuck_total{outcome="change"} */
    MET_REFUND_STUCK_ERROR,  /* idempay_refunds_stuck_total{outcome="abnormal"}: refused for good */
    MET_REFUND_NOTIFY_APPLIED, /* idempay_refund_notifications_total{outcome="applied"} */
    MET_REFUND_NOTIFY_FAIL,    /* idempay_refund_notifications_total{outcome="fail"} */
    MET_REFUND_REQUESTED,      /* idempay_merchant_refunds_total{outcome="created"} */
    MET_REFUND_REPLAYED,       /* idempay_merchant_refunds_total{outcome="replayed"} */
    MET_REFUND_REFUSED,        /* idempay_merchant_refunds_total{outcome="refused"}: 4xx */
    /* bounded growth (rate_limit.c, redis_room.c, router.c) */
    MET_RATE_LIMITED_TOKENS, /* idempay_rate_limit_total{outcome="limited_tokens"}: 429 */
    MET_RATE_LIMITED_ORDERS, /* idempay_rate_limit_total{outcome="limited_orders"}: 429 */
    MET_RATE_UNCOUNTED,   /* idempay_rate_limit_total{outcome="uncounted"}: Redis could not count */
    MET_TOKEN_STORE_FULL, /* idempay_tokens_total{outcome="store_full"}: 503, Redis near
                             maxmemory */
    MET_LOG_SUPPRESSED,   /* idempay_log_lines_suppressed_total: refusal lines over the budget */
    /* least privilege (docs/SECURITY.md) */
    MET_CB_FAIL_SIGN_TYPE,        /* idempay_callbacks_total{outcome="fail_sign_type"}: MD5 under
                                     HMAC-SHA256 */
    MET_CB_FAIL_NOT_NOTIFICATION, /* idempay_callbacks_total{outcome="fail_not_notification"} */
    MET_GW_REPLY_SIGN_TYPE,       /* idempay_gateway_replies_refused_total{outcome="sign_type"} */
    MET_AUTH_REFUSED,             /* idempay_auth_refused_total: merchant-door 401s (caller_gate) */
    /* APIv3 (gateway_v3.c) */
    MET_GW_REPLY_V3_SIGNATURE, /* idempay_gateway_replies_refused_total{outcome="v3_signature"}:
                                * missing, stale, unknown-signer or bad platform signature */
    MET_V3_CERTS_FETCHED,      /* idempay_v3_certificate_fetches_total{outcome="ok"} */
    MET_V3_CERTS_FAILED,       /* idempay_v3_certificate_fetches_total{outcome="fail"} */
    MET__COUNT
} metric_counter;

/* Maps (or creates) the shared file. Call once per process before threads.
 * Returns 0, or -1 (metrics then live in process memory only). */
int metrics_init(const char *path);
void metrics_inc(metric_counter m);
/* One request served: method, route template (e.g. "/api/pay/orders/{order_no}",
 * "other" for an unknown path), status code, duration. */
void metrics_request(const char *method, const char *route, int status, double seconds);
/* A gateway call of op starts: counts it in flight until metrics_gateway. */
void metrics_gateway_begin(const char *op);
/* One gateway call of op ("unifiedorder", "orderquery", "refund", "closeorder",
 * "downloadbill") ended
 * after seconds: observed in the histogram, no longer in flight. */
void metrics_gateway(const char *op, double seconds);

/* What a scrape adds from outside the shared file. */
typedef struct {
    long long orders_processing; /* PROCESSING orders in the database, -1 unknown */
} metrics_scrape;

/* The Prometheus text of all metrics into resp (200 text/plain). */
void metrics_handle(http_response *resp, const metrics_scrape *scrape);

#endif
