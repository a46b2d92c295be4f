/* workload - one request of each thing the bench measures (workload.c),
 * and the rows those requests need in place (paid orders to repeat,
 * PROCESSING orders for notifications to pay: workload_fixtures.c).
 *
 * The service's workloads go through its HTTP front like any client; the
 * baselines are plain C clients doing the same work without the service:
 *   rawdb        the two statements a payment writes at minimum (INSERT, CAS)
 *   rawpay       a payment's pipeline: the service's INSERT, the same signed
 *                unifiedorder through the mock's front (reply parsed and
 *                its signature checked), the service's CAS UPDATE
 *   rawcallback  a notification's statements and round trips (START
 *                TRANSACTION, record INSERT ... SELECT, CAS, COMMIT)
 *   rawprepay    a NATIVE order's prepay: the service's order and trade
 *                INSERTs, the same signed unifiedorder through the mock's
 *                front (reply verified, code_url read), the prepay UPDATE
 *   rawcallback_v3  an APIv3 notification's SHA256withRSA signature verified
 *                and its AEAD_AES_256_GCM resource decrypted (workload_v3.h),
 *                then rawcallback's transaction
 * Every request either succeeds exactly as expected (status, body) or is an
 * error: a workload with any error measured something else. */
#ifndef IDEMPAY_BENCH_WORKLOAD_H
#define IDEMPAY_BENCH_WORKLOAD_H

#include <mysql.h>
#include <stdbool.h>
#include <stddef.h>

#include "http_client.h"

typedef enum {
    WL_PING = 0,
    WL_PAY,
    WL_REPEAT,
    WL_CALLBACK,
    WL_TOKEN,
    WL_RAWDB,
    WL_RAWPAY,
    WL_RAWCB,
    WL_PREPAY,
    WL_RAWPREPAY,
    WL_CALLBACK_V3, /* APIv3 notification -> PAID (the service speaking v3; workload_v3.h) */
    WL_RAWCB_V3,    /* its signature verified, its resource decrypted, rawcallback's statements */
    WL_COUNT
} wl_kind;

#define WL_ERROR_MAX 400

/* What the workloads need to know; filled by the caller, then wl_init. */
typedef struct {
    char target[256];       /* the service's merchant door, http://127.0.0.1:PORT */
    char public_base[256];  /* its public door (notifications), http://127.0.0.1:PORT */
    char caller[72];        /* the merchant-door caller the API requests are signed as */
    char caller_secret[72]; /* its secret (64 hex digits; never printed); "" unsigned */
    char gateway[256];      /* the mock gateway's front */
    char notify_url[320];   /* sent in unifiedorder, as the service does */
    char run[16];           /* this run's tag, part of every order number */
    char key[128];          /* merchant key the service verifies notifications with */
    char appid[64], mchid[64];
    char mock_key[128]; /* merchant key the mock verifies unifiedorder with */
    int concurrency;
    long pool_orders; /* PROCESSING orders per notification pool */
} wl_config;

enum {
    WL_ST_RAWDB_INS = 0,
    WL_ST_RAWDB_UPD,
    WL_ST_PAY_INS,
    WL_ST_PAY_UPD,
    WL_ST_CB_INS,
    WL_ST_CB_CAS,
    WL_ST_TRADE_INS,
    WL_ST_TRADE_PREPAY,
    WL_ST_COUNT
};

/* One client thread's connections and its tally for the current phase. */
typedef struct {
    int index;
    int phase;         /* set per phase: part of new order numbers */
    http_client *http; /* keep-alive, to the service and the mock */
    MYSQL *db;
    MYSQL_STMT *st[WL_ST_COUNT];
    long seq; /* requests of this worker in the phase */
    long errors;
    char first_error[WL_ERROR_MAX];
    double first_error_at; /* monotonic seconds, 0 when none */
} wl_worker;

/* The workload's short name (--only, JSON), its table title, and the
 * workload its ratio is taken against (itself for a baseline). */
const char *wl_name(wl_kind w);
const char *wl_title(wl_kind w);
wl_kind wl_baseline(wl_kind w);
bool wl_is_baseline(wl_kind w);

/* Keeps cfg (not copied: it must outlive the workers). */
void wl_init(const wl_config *cfg);

/* Opens a worker's HTTP client and database connection and prepares its
 * statements. Returns 0, or -1 with the reason in err (the worker is then
 * closed). */
int wl_worker_open(wl_worker *wk, int index, char *err, size_t errlen);
void wl_worker_close(wl_worker *wk);

/* Resets the worker's tally for a new phase. */
void wl_worker_phase(wl_worker *wk, int phase);

/* One request of w. Returns 0 when it did exactly what the workload
 * expects, -1 otherwise (counted in wk->errors, the first one described in
 * wk->first_error). */
int wl_request(wl_worker *wk, wl_kind w);

/* Puts in place what the selected workloads need (selected[w] true):
 * the mock reset with no latency, notifications off and its journal off
 * (when it has one); the raw-DB table; the notification pools; the paid
 * orders to repeat. Returns 0, or -1 with the reason in err. */
int wl_fixtures_setup(MYSQL *db, const bool selected[WL_COUNT], char *err, size_t errlen);

/* Undoes what setup left that would otherwise linger: the mock reset, the
 * pool orders no notification reached deleted. Returns the number of
 * problems (printed on stderr). */
int wl_fixtures_teardown(MYSQL *db);

/* Notifications of the pool of w (WL_CALLBACK, WL_RAWCB, WL_CALLBACK_V3,
 * WL_RAWCB_V3) that made their
 * order PAID, counted in the database; -1 on error. */
long wl_pool_paid(MYSQL *db, wl_kind w);
/* Orders the pool of w handed out so far. */
long wl_pool_used(wl_kind w);

#endif
