/* client - how a simulated client behaves, and what all clients of a run
 * share.
 *
 * A client wants its order paid: it POSTs, and acts on each answer until a
 * definite one (200 PAID, 402 unless drawn to retry declines, another 4xx),
 * its attempts or its patience run out: 202 -> wait Retry-After (capped at
 * 1 s) then poll GET /api/pay/orders/{no} or POST again; 409/429 -> wait
 * Retry-After; 5xx, timeout, reset -> backoff base*2^k (capped at 2 s) plus
 * jitter. A hasty client ignores Retry-After and backoff. No request is sent
 * with a timeout reaching more than a second past the client's patience.
 * A task's timeouts, attempts, backoff and patience are resolved once, from
 * the schedule and the defaults, into a client_policy.
 *
 * Every operation is recorded in the worker's own history (ping: counted,
 * not kept) with its latency in the worker's histograms. Not thread-safe per
 * sim_client: one worker thread each. The client_world is shared: what a
 * client saw of an order (PAID with which transaction id, declined) is
 * under its mutex; a token slot is written by the phase thread before its
 * phase is released and only read afterwards. */
#ifndef IDEMPAY_SIM_CLIENT_H
#define IDEMPAY_SIM_CLIENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "histogram.h"
#include "history.h"
#include "http_client.h"
#include "profile.h"
#include "rng.h"
#include "schedule.h"

#define CLIENT_URL_MAX 512
#define CLIENT_TOKEN_MAX 160

/* What the clients saw of one order (under client_world.mu). */
typedef struct {
    char txn[SIM_TXN_MAX]; /* the transaction id a 200 PAID named */
    uint8_t saw_paid;
    uint8_t saw_declined; /* a POST was answered 402 */
} client_order_seen;

/* One issued token (written before its phase starts). */
typedef struct {
    char token[CLIENT_TOKEN_MAX];
    int64_t issued_us;
    long expires_in; /* s, as the service said */
    int ok;          /* 0: could not be issued */
} client_token;

/* The merchant the simulator signs as (forged callbacks, the payer's own
 * second charges at the gateway). */
typedef struct {
    const char *appid, *mch_id, *key; /* key: never printed */
    const char *gateway;              /* the mock gateway, NULL: no second charges */
    const char *notify_url;           /* the service's notification URL */
    const char *notify_url_v3;        /* its APIv3 notification URL (v3-attacks) */
    const struct forge_v3_keys *v3;   /* the platform's material (forge_v3.h), NULL: none */
} client_merchant;

/* The run as every client sees it. */
typedef struct {
    const char *target;         /* service base URL, no trailing slash */
    const sim_profile *profile; /* how to speak to the target: every request is built and
                                   every answer read through it (never NULL) */
    const char *prefix;         /* order-number prefix */
    const sim_schedule *sched;
    client_merchant merchant;
    struct timespec t0;                      /* the run's time 0 (monotonic) */
    int64_t origin_epoch_us;                 /* the wall clock at t0 */
    volatile int *stop;                      /* set by a signal: stop sending */
    volatile int aborted;                    /* set by the sequencer: skip what is left */
    uint64_t salt;                           /* run-unique: made-up tokens and transaction ids */
    client_order_seen *orders;               /* per schedule order */
    client_token *tokens;                    /* per token slot */
    pthread_mutex_t mu;                      /* guards orders[] */
    atomic_uint_fast64_t outcome[OUT_COUNT]; /* every recorded operation */
} client_world;

/* One worker's client: a keep-alive http_client and its own records. */
typedef struct {
    client_world *world;
    http_client *http;
    sim_history hist;
    sim_hist lat[OP_KIND_COUNT];
    uint64_t req[SC_COUNT][OP_KIND_COUNT][OUT_COUNT];
    rng_t rng; /* the current task's jitter */
    char url[CLIENT_URL_MAX];
} sim_client;

/* A task's client behaviour with every default applied. */
typedef struct {
    long timeout_ms;         /* per request: the task's, else 10 s (pay) / 5 s (others) */
    int64_t patience_ms;     /* the task's, capped at 60 s */
    int max_posts;           /* the task's attempts, at least 1 */
    int64_t backoff_ms;      /* backoff base: the task's, else 100 */
    int64_t hasty_jitter_ms; /* a hasty client's wait: below the task's backoff, else 20 */
} client_policy;

/* Sets up w for schedule s (times start now). Returns 0, or -1 on OOM. */
int client_world_init(client_world *w, const sim_schedule *s);
/* Frees what client_world_init allocated. */
void client_world_free(client_world *w);
/* Microseconds since the run's time 0 (monotonic). */
int64_t client_now_us(const client_world *w);
/* Whether the run is stopped (signal, or the sequencer gave up). */
int client_stopped(const client_world *w);
/* Sleeps ms milliseconds in slices, returning early when the run stops. */
void client_sleep_ms(const client_world *w, int64_t ms);
/* Sleeps until the run's clock reads at_us (or the run stops). */
void client_sleep_until_us(const client_world *w, int64_t at_us);

/* A worker's client. Returns 0, or -1 on OOM (c is then safe to free). */
int client_init(sim_client *c, client_world *w);
void client_free(sim_client *c);

/* Resolves t's client behaviour (see client_policy). */
void client_policy_of(const sched_task *t, client_policy *pol);

/* Starts recording an operation (its start time is now). */
void client_op_begin(sim_client *c, sim_op *op, int kind, int scenario, long order, long task);
/* Ends it: latency, counters, and (keep) the history. */
void client_op_end(sim_client *c, sim_op *op, int keep);
/* Records the transport result and the Idempotent-Replayed header in op. */
void client_op_transport(sim_op *op, http_status hs, const http_reply *rep);
/* Copies src (NULL: "") into dst, truncated, always NUL-terminated. */
void client_copy_str(char *dst, size_t len, const char *src);

/* Builds operation pop of the world's target profile from v and sends it
 * (not recorded: the caller records). A request that cannot be built is
 * not sent: HTTP_ERR_OTHER with the reason in rep->error. */
http_status client_send(sim_client *c, profile_op pop, const profile_values *v, long timeout_ms,
                        http_reply *rep);

/* What one POST /api/pay sends. */
typedef struct {
    int64_t user_id;
    int64_t fen;
    int style;
    int token_use; /* sched_token_use actually sent */
    int token;     /* slot */
    int idem;
    uint8_t flags; /* OPF_MISMATCH ... */
} client_pay;

/* The POST /api/pay t's order starts from (user, amount, style, token, key). */
void client_pay_of(const sim_schedule *s, const sched_task *t, client_pay *p);

/* One POST /api/pay of p (the profile's pay, with t's flow: MICROPAY and the
 * order's payment code, NATIVE, or JSAPI and the user's openid), recorded.
 * Fills op, rep and, when not NULL, answer (the code_url and prepay_id of a
 * prepay). */
void client_post_pay(sim_client *c, const sched_task *t, long task, const client_pay *p,
                     int attempt, long timeout_ms, sim_op *op, http_reply *rep,
                     profile_answer *answer);

/* GET /api/pay/token for slot's user (up to 3 tries), into the world's
 * token slot; recorded. */
void client_issue_token(sim_client *c, size_t slot);
/* One recorded GET /api/pay/orders/{no} of t's order. Returns the status,
 * OST_NONE when not found, -1 when unknown. */
int client_query(sim_client *c, const sched_task *t, long task, int attempt, long timeout_ms);

/* The tasks: a paying client (TASK_PAY), copies of one POST back to back
 * then a paying client if none was definite (TASK_BURST), a paying client
 * then variants of the order with another amount or user (TASK_MISMATCH),
 * GET /api/ping until end_us (TASK_PING; counted, not kept). */
void client_task_pay(sim_client *c, const sched_task *t, long task);
void client_task_burst(sim_client *c, const sched_task *t, long task);
void client_task_mismatch(sim_client *c, const sched_task *t, long task);
void client_task_ping(sim_client *c, const sched_task *t, long task, int scenario, int64_t end_us);

#endif
