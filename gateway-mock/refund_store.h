/* refund_store - the mock's asynchronous refunds in its MariaDB ledger
 * (tables mock_refund and mock_charge of sql/002, 010).
 *
 * A refund is accepted as PROCESSING with the status it will end in and
 * when (drawn by the caller), and ends there later, when refund_store_settle
 * finds it due: SUCCESS adds it to the charge's refunded_fee and
 * refund_count (which count SUCCESS refunds only); REFUNDCLOSE gives its
 * amount back to what is refundable; CHANGE keeps it taken (the merchant
 * settles it outside the API). An accepted refund never exceeds what is left
 * of its charge: total_fee - refunded_fee - pending_fee, checked under the
 * charge row's lock. Refunds are idempotent by out_refund_no (the primary
 * key). A refund ends exactly once, by a compare-and-set on its status, in
 * any number of threads and processes.
 *
 * One store per thread, with its own connection: it connects lazily,
 * reconnects after a lost connection (retrying only when no COMMIT was
 * sent) and retries deadlocks. Functions returning int return 0 on success
 * or -1 when MariaDB failed (refund_store_error says why; nothing changed,
 * except after a connection lost during COMMIT). */
#ifndef IDEMPAY_MOCK_REFUND_STORE_H
#define IDEMPAY_MOCK_REFUND_STORE_H

#include <stdbool.h>
#include <jansson.h>

#include "txid.h"

typedef struct refund_store refund_store;

/* A new store (not connected), or NULL on OOM. */
refund_store *refund_store_new(void);
/* Closes its connection. NULL accepted. */
void refund_store_free(refund_store *s);
/* The last error ("" after success). */
const char *refund_store_error(const refund_store *s);

/* A refund as the store keeps it. */
typedef struct {
    char out_refund_no[65];
    char refund_id[TXID_BUF];
    char transaction_id[TXID_BUF];
    char out_trade_no[33];
    long long total_fee;
    long long refund_fee;
    char status[16];      /* PROCESSING, SUCCESS, REFUNDCLOSE, CHANGE */
    char accepted_at[20]; /* yyyy-MM-dd HH:mm:ss, China time */
    char ended_at[20];    /* the same; "" while PROCESSING */
    char notify_url[257]; /* "" when none */
    int api_version;      /* 2, or 3: asked through APIv3 (its notification is v3's) */
} refund_record;

/* What a refund request asks. */
typedef struct {
    const char *transaction_id; /* preferred when non-empty */
    const char *out_trade_no;
    const char *out_refund_no;
    long long total_fee;
    long long refund_fee;
    const char *notify_url; /* NULL or "" : none */
    long long delay_ms;     /* PROCESSING this long */
    const char *outcome;    /* SUCCESS, REFUNDCLOSE or CHANGE */
    const char *refuse;     /* non-NULL: a new refund is refused (an err_code) */
    int api_version;        /* 2 or 3 */
} refund_request;

typedef enum {
    REFUND_ACCEPTED = 0,   /* recorded as PROCESSING now */
    REFUND_AGAIN,          /* out_refund_no seen before for this charge: nothing done */
    REFUND_UNKNOWN_CHARGE, /* no such charge */
    REFUND_TOTAL_MISMATCH, /* total_fee is not the charge's */
    REFUND_OVER,           /* refund_fee exceeds what is left */
    REFUND_OTHER_CHARGE,   /* out_refund_no was used for another charge */
    REFUND_REFUSED         /* a new refund, refused with req->refuse */
} refund_accept_outcome;

/* Accepts req (see refund_accept_outcome); *rec receives the refund (the
 * earlier one for REFUND_AGAIN / REFUND_OTHER_CHARGE; the charge's
 * transaction_id, out_trade_no and total_fee otherwise, when found). */
int refund_store_accept(refund_store *s, const refund_request *req, refund_accept_outcome *outcome,
                        refund_record *rec);

/* Ends every PROCESSING refund whose time has come (at most max of them),
 * each in its own transaction, and calls ended(arg, rec) after the COMMIT
 * of each refund this call ended (not those another thread ended). Returns
 * the number ended, or -1 (those ended before the failure stay ended and
 * were reported). */
int refund_store_settle(refund_store *s, int max,
                        void (*ended)(void *arg, const refund_record *rec), void *arg);

/* What refundquery may name, in WeChat's order of priority. */
typedef enum {
    REFUND_BY_REFUND_ID = 0,
    REFUND_BY_OUT_REFUND_NO,
    REFUND_BY_TRANSACTION_ID,
    REFUND_BY_OUT_TRADE_NO
} refund_key;

/* The refunds of the charge that key/value names (one refund for the two
 * refund keys; every refund of the charge, oldest first, for the others),
 * at most cap into recs, *n how many. *n 0: none. */
int refund_store_find(refund_store *s, refund_key key, const char *value, refund_record *recs,
                      int cap, int *n);

/* Every refund (out_trade_no's only when non-NULL) as a new JSON array of
 * {out_refund_no, refund_id, transaction_id, out_trade_no, refund_fee,
 * status, accepted_at, ended_at}, in acceptance order; NULL on failure. */
json_t *refund_store_json(refund_store *s, const char *out_trade_no);

#endif
