/* ledger - the mock gateway's ledger in MariaDB (database idempay_mock):
 * charges, the per-out_trade_no dedupe record (which also carries the
 * close), refunds, the notification counter and the persisted config.
 *
 * Correct under any number of threads and processes: the first charge of an
 * out_trade_no wins by the primary key of mock_trade (INSERT, and on a
 * duplicate a conditional UPDATE; never check-then-insert); refunds are
 * idempotent by the primary key of mock_refund. A close and a charge of one
 * out_trade_no serialize on the same mock_trade row: every charge (dedupe on
 * or off) holds that row's lock when it checks closed_at, and a close only
 * sets closed_at on a row without a charge, under the same lock, so at most
 * one of them wins. Everything survives a restart of the mock.
 *
 * One ledger per thread (never shared). It connects lazily, prepares each
 * statement once per connection, reconnects after a lost connection and
 * retries deadlocks / lock wait timeouts. An operation is retried after a
 * lost connection only when no write can have been committed. Every function
 * returning int returns 0 on success or -1 when MariaDB failed; the reason is
 * then in ledger_error() and nothing the caller can see was changed, except
 * that a lost connection during COMMIT leaves the write's fate unknown. */
#ifndef IDEMPAY_MOCK_LEDGER_H
#define IDEMPAY_MOCK_LEDGER_H

#include <stdbool.h>
#include <time.h>
#include <jansson.h>

#include "txid.h"

/* The database, unless IDEMPAY_MOCK_DB names another (a second mock with a
 * ledger of its own; it needs the tables of sql/002_mock_ledger.sql). */
#define LEDGER_DB "idempay_mock"

typedef struct ledger ledger;

/* A new ledger (not yet connected), or NULL on OOM. */
ledger *ledger_new(void);
/* Closes the connection. NULL accepted. */
void ledger_free(ledger *l);
/* The last error's text ("" after success). */
const char *ledger_error(const ledger *l);

typedef enum {
    LEDGER_CHARGED = 0, /* a new charge was recorded */
    LEDGER_DECLINED,    /* the decline was recorded, nothing charged */
    LEDGER_ORDERPAID,   /* dedupe: the out_trade_no was charged before */
    LEDGER_MISMATCH,    /* dedupe: the out_trade_no was seen with another total_fee */
    LEDGER_ORDERCLOSED  /* the out_trade_no was closed: nothing charged or recorded */
} ledger_outcome;

typedef struct {
    ledger_outcome outcome;
    char transaction_id[TXID_BUF]; /* LEDGER_CHARGED */
    time_t charged_at;             /* LEDGER_CHARGED (seconds, UTC) */
} ledger_attempt_result;

/* Records one payment attempt of out_trade_no for total_fee fen: a charge
 * (charge true) or a decline. A closed out_trade_no gets ORDERCLOSED, dedupe
 * on or off, decided inside the transaction that would charge. With dedupe,
 * the out_trade_no's first charge wins and a repeat gets ORDERPAID (or
 * MISMATCH when total_fee differs from the first attempt's), with no charge;
 * without dedupe every charge is recorded. openid (may be NULL) is the
 * payer's, kept with the charge for the statement. */
int ledger_attempt(ledger *l, const char *out_trade_no, long long total_fee, const char *trade_type,
                   const char *openid, bool charge, bool dedupe, ledger_attempt_result *out);

typedef enum {
    CLOSE_DONE = 0, /* closed now (the row was created when unseen) */
    CLOSE_ALREADY,  /* closed before: nothing changed */
    CLOSE_PAID      /* a charge exists (refunded or not): nothing changed */
} ledger_close_outcome;

/* Closes out_trade_no unless it was charged: afterwards no unifiedorder of
 * it charges. Atomic with ledger_attempt on the same mock_trade row. */
int ledger_close(ledger *l, const char *out_trade_no, ledger_close_outcome *out);

/* Notes that out_trade_no was seen without any outcome (a SYSTEMERROR):
 * orderquery then says NOTPAY until it is charged or declined. */
int ledger_note_unpaid(ledger *l, const char *out_trade_no, long long total_fee);

typedef struct {
    bool found;                    /* false: ORDERNOTEXIST */
    char trade_state[16];          /* SUCCESS, REFUND, NOTPAY, PAYERROR, CLOSED */
    char transaction_id[TXID_BUF]; /* "" unless charged */
    char out_trade_no[33];
    long long total_fee;
    char trade_type[16];
    char time_end[15]; /* yyyymmddHHMMSS, UTC+8, when charged */
    long long refunded_fee;
    int refund_count;
} ledger_order;

/* The state of an order, by transaction_id when it is non-NULL and
 * non-empty, else by out_trade_no. With several charges of one out_trade_no
 * (dedupe off) the first charge not refunded is reported, else the first. */
int ledger_query(ledger *l, const char *out_trade_no, const char *transaction_id,
                 ledger_order *out);

typedef enum {
    REFUND_DONE = 0,     /* refunded now */
    REFUND_REPEAT,       /* this out_refund_no was refunded before: nothing done */
    REFUND_NO_CHARGE,    /* no such charge */
    REFUND_FEE_MISMATCH, /* total_fee is not the charge's */
    REFUND_TOO_MUCH,     /* refund_fee exceeds what is left to refund */
    REFUND_CONFLICT      /* out_refund_no was used for another charge */
} ledger_refund_outcome;

typedef struct {
    ledger_refund_outcome outcome;
    char transaction_id[TXID_BUF];
    char out_trade_no[33];
    char refund_id[TXID_BUF];
    long long total_fee;
    long long refund_fee;
} ledger_refund_result;

/* Refunds refund_fee fen of a charge named by transaction_id (preferred) or
 * out_trade_no, once per out_refund_no. */
int ledger_refund(ledger *l, const char *transaction_id, const char *out_trade_no,
                  const char *out_refund_no, long long total_fee, long long refund_fee,
                  ledger_refund_result *out);

/* The charges in charge order as a new JSON array of {transaction_id,
 * out_trade_no, total_fee, refunded, refund_count, refunded_fee, charged_at},
 * only those of out_trade_no when it is non-NULL. NULL on failure. */
json_t *ledger_charges_json(ledger *l, const char *out_trade_no);

/* The closed trades in close order as a new JSON array of {out_trade_no,
 * closed_at} (closed_at UTC like charged_at), only out_trade_no's when it is
 * non-NULL. NULL on failure. */
json_t *ledger_closed_json(ledger *l, const char *out_trade_no);

/* One line of the statement: a charge, or a refund of one. */
typedef struct {
    bool refund;
    char time[20]; /* yyyy-MM-dd HH:mm:ss, China Standard Time */
    char transaction_id[TXID_BUF];
    char out_trade_no[33];
    long long total_fee; /* the charge's, fen */
    char trade_type[16];
    char openid[129];         /* "" when the charge has none */
    char refund_id[TXID_BUF]; /* refunds only */
    char out_refund_no[65];   /* refunds only */
    long long refund_fee;     /* refunds only, fen */
} ledger_bill_record;

/* Calls row(arg, r) for every charge with from <= charged_at < to (when
 * charges) and every refund with from <= refunded_at < to (when refunds),
 * ordered by that time as shown (China time, to the second), then
 * transaction_id, charges before refunds, then refund_id; from and to are
 * UTC seconds. Rows are streamed, not buffered. restart(arg) is
 * called before the first row and again if the query has to be run again
 * (a lost connection): the caller then forgets the rows it got. A row
 * returning non-zero stops the listing; ledger_bill then returns 1. Returns
 * 0 when every row was passed, -1 on failure. */
int ledger_bill(ledger *l, time_t from, time_t to, bool charges, bool refunds,
                void (*restart)(void *arg), int (*row)(void *arg, const ledger_bill_record *r),
                void *arg);

/* notifications_sent: read, and add n. */
int ledger_counter_get(ledger *l, long long *value);
int ledger_counter_add(ledger *l, long long n);

/* Empties charges, trades (and so closes), refunds and the journal, zeroes
 * the counter and stores config_json, in one transaction. */
int ledger_reset(ledger *l, const char *config_json);

/* The persisted config: 0 with a malloc'd copy in *json_out (caller frees),
 * 1 when none is stored (*json_out NULL), -1 on failure. */
int ledger_config_load(ledger *l, char **json_out);
int ledger_config_save(ledger *l, const char *config_json);

#endif
