/* schedule - everything a simulator run will do, generated up front from the
 * seed: orders (suffix, user, amount), payment tokens to issue, client tasks
 * (copies, delays, timeouts, retries, backoff), and the phases that group
 * them, each with the mock gateway's fault config.
 *
 * The schedule never contains the per-run order-number prefix: order numbers
 * are prefix + suffix, so reruns with the same seed do not collide with the
 * orders of an earlier run, and the digest (SHA-256 over a canonical text
 * form) is the same for the same seed and flags. */
#ifndef IDEMPAY_SIM_SCHEDULE_H
#define IDEMPAY_SIM_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rng.h"
#include "scenario_table.h"

/* The scenarios, in contract order (scenario_table.h has one row each). */
#define SCHED_SCENARIO_ENUM(id, name, code, weight, generate, flags) SC_##id,
typedef enum { SIM_SCENARIOS(SCHED_SCENARIO_ENUM) SC_COUNT } sim_scenario;
#undef SCHED_SCENARIO_ENUM

/* Amount text styles: the same value written two ways ("12.30" / "12.3"). */
typedef enum { AMT_FIXED2 = 0, AMT_SHORT = 1 } sched_amount_style;

/* Order flags. */
#define ORD_NEVER_SUBMITTED 0x01u /* no client ever POSTs it (forgery target) */
#define ORD_FORGE_TARGET 0x02u    /* forged callbacks name it */
#define ORD_DECLINE 0x04u         /* paid in a phase where the gateway declines all */
#define ORD_MISMATCH 0x08u        /* variants with another user/amount are sent */

#define SCHED_SUFFIX_LEN 12       /* 2 scenario letters, 5 base36 index, 5 random */
#define SCHED_MAX_ORDERS 60466176 /* 36^5 */
#define SCHED_PREFIX_MAX 12
#define SCHED_MOCK_CONFIG_MAX 1024
#define SCHED_FAULTS_MAX 320

typedef struct {
    char suffix[SCHED_SUFFIX_LEN + 1];
    int64_t user_id;
    int64_t amount_fen;
    uint8_t scenario;
    uint8_t style; /* sched_amount_style of its first request */
    uint8_t flags;
} sched_order;

typedef struct {
    int64_t user_id; /* the user the token is issued to */
    uint8_t scenario;
} sched_token;

typedef enum {
    TASK_PAY = 0,  /* one client paying an order (retries, polls) */
    TASK_BURST,    /* `copies` POSTs of one order back to back, then settle */
    TASK_MISMATCH, /* pay the order, then `copies` variants (other amount/user) */
    TASK_FORGE,    /* one forged payment notification */
    TASK_PING,     /* GET /api/ping in a loop until the phase budget ends */
    TASK_STRAY,    /* the payer pays the order a second time at the gateway itself
                      (unifiedorder by the simulator), if a client saw it PAID */
    TASK_PAYER,    /* a NATIVE/JSAPI order: POST /api/pay for its prepay, then the
                      customer pays it through the mock's payer (or never) */
    TASK_REFUND,   /* the merchant's refunds of an order (paid first by copy 0):
                      POST /api/pay/orders/{no}/refunds as `copies` (the refund plan)
                      says, then GET its refunds until they end */
    TASK_KIND_COUNT
} sched_task_kind;

typedef enum { TOK_NONE = 0, TOK_SLOT, TOK_UNKNOWN } sched_token_use;

typedef enum {
    FORGE_BAD_SIGN = 0,  /* signed with a wrong key */
    FORGE_WRONG_FEE,     /* properly signed, total_fee differs from the order */
    FORGE_REPLAY_TXN,    /* properly signed, a real transaction_id of another order */
    FORGE_UNKNOWN_ORDER, /* properly signed, an order the service never saw */
    FORGE_WRONG_MCH,     /* properly signed, another mch_id */
    /* APIv3 (forge_v3.h): a paid TRANSACTION.SUCCESS of the order, one defect each */
    FORGE_V3_STALE,        /* signed like the platform, Wechatpay-Timestamp outside the window */
    FORGE_V3_NEW_NONCE,    /* signed like the platform, replayed with another Wechatpay-Nonce */
    FORGE_V3_WRONG_SERIAL, /* signed like the platform, Wechatpay-Serial of no certificate */
    FORGE_V3_CIPHERTEXT,   /* a ciphertext byte changed after signing */
    FORGE_V3_CIPHERTEXT_SIGNED, /* a ciphertext byte changed, then signed: only AEAD refuses */
    FORGE_V3_TAG,               /* a GCM tag byte changed after signing */
    FORGE_V3_TAG_SIGNED,        /* a GCM tag byte changed, then signed: only AEAD refuses */
    FORGE_KIND_COUNT
} sched_forge_kind;

typedef struct {
    uint8_t kind;           /* sched_task_kind */
    uint8_t token_use;      /* sched_token_use */
    uint8_t style;          /* amount text style of this task's requests */
    uint8_t idem;           /* 0: no Idempotency-Key; n: key variant n of the order */
    uint8_t poll;           /* on 202, poll GET /api/pay/orders/{no} instead of re-POSTing */
    uint8_t max_attempts;   /* POSTs before giving up (>= 1) */
    uint8_t copies;         /* BURST: POSTs; MISMATCH: variants */
    uint8_t forge;          /* sched_forge_kind */
    uint8_t retry_declined; /* after 402, POST again (the service allows it) */
    uint8_t expect_expired; /* wait for the token to expire first (short TTL only) */
    uint8_t copy_index;     /* which copy of a double-click this is (0 = first) */
    uint8_t copy_count;     /* how many copies the double-click has */
    uint8_t hasty;          /* retries at once: ignores Retry-After and backoff */
    uint8_t behaviour;      /* the nemesis' client behaviour (nemesis_behaviour_name), 0 none */
    int32_t order;          /* index into orders (-1: none) */
    int32_t token;          /* token slot for TOK_SLOT, else -1 */
    int32_t aux_order;      /* FORGE_REPLAY_TXN: the order whose transaction is replayed;
                               FORGE_V3_*: the platform key that signs (0, 1: the second) */
    int64_t variant_user;   /* MISMATCH: the other user */
    int64_t variant_fen;    /* MISMATCH: the other amount; FORGE_WRONG_FEE: the fee sent */
    uint32_t start_ms;      /* release time from the phase start */
    uint32_t gap_ms;        /* BURST: between copies */
    uint32_t timeout_ms;    /* per request */
    uint32_t backoff_ms;    /* base of the exponential retry backoff */
    uint32_t patience_ms;   /* the client gives up on the order after this */
    uint64_t jitter_seed;   /* seeds the task's own backoff jitter */
    /* The real flows (docs/FLOWS.md); 0 for every task of today's scenarios,
     * which pay with the customer's payment code (MICROPAY): */
    uint8_t flow;          /* payer_flow: MICROPAY, NATIVE, JSAPI */
    uint8_t payer;         /* PAYER: the customer's behaviour (payer_behaviour) */
    uint32_t pay_delay_ms; /* PAYER: delay_ms of a slow payment, or the wait of a stale one */
} sched_task;

typedef struct {
    uint8_t scenario;
    uint8_t chaos;     /* the chaos command runs during this phase */
    uint8_t exclusive; /* runs alone: barriers before and after it */
    uint8_t barrier;   /* every earlier task finishes before this phase starts;
                          otherwise it starts when the previous phase's budget
                          is used up, and late clients finish meanwhile */
    char label[32];
    char mock_config[SCHED_MOCK_CONFIG_MAX]; /* JSON object for PUT /mock/config */
    char faults[SCHED_FAULTS_MAX];           /* the phase's faults in words ("" for plain phases) */
    uint32_t budget_ms;                      /* intended length (releases are spread over it) */
    size_t first_token, ntokens;
    size_t first_task, ntasks;
    /* The next phase's mock config waits until every task of this one has
     * begun, and its budget is stretched by the latest task's lateness (the
     * driver): for a phase whose rules must cover each of its tasks for the
     * time planned (slow-close). Set by the generator; not part of the
     * printed schedule (a run's timing, not its plan). */
    uint8_t outlast;
} sched_phase;

/* Chaos actions: the last word given to the --chaos-cmd command (./stack
 * chaos ACTION). */
typedef enum {
    CHAOS_KILL_WORKER = 0, /* kill -9 one service process */
    CHAOS_RESTART_REDIS,
    CHAOS_RESTART_MOCK, /* kill -9 the mock gateway: held replies and pending
                           notifications are lost */
    CHAOS_RESTART_MARIADB,
    CHAOS_PAUSE_WORKER, /* SIGSTOP one service process past its lease, then SIGCONT
                           (the nemesis only: after the draws above, see nemesis.c) */
    CHAOS_ACTION_COUNT
} sched_chaos_action;

/* One planned run of the chaos command: at_ms after its phase starts. */
typedef struct {
    uint32_t phase;
    uint32_t at_ms;
    uint8_t action; /* sched_chaos_action */
} sched_chaos;

typedef struct {
    uint64_t seed;
    char params[512]; /* the flags that shape the schedule, for the digest */
    sched_order *orders;
    size_t norders, cap_orders;
    sched_token *tokens;
    size_t ntokens, cap_tokens;
    sched_task *tasks;
    size_t ntasks, cap_tasks;
    sched_phase *phases;
    size_t nphases, cap_phases;
    sched_chaos *chaos; /* in phase order, then at_ms */
    size_t nchaos, cap_chaos;
} sim_schedule;

/* Scenario names as the command line spells them ("double-click", ...;
 * "unattributed" out of range), their two-letter order-number codes ("zz"
 * out of range), and the reverse lookup (-1 unknown): their rows of
 * SIM_SCENARIOS. */
const char *sched_scenario_name(int scenario);
const char *sched_scenario_code(int scenario);
int sched_scenario_parse(const char *name);
/* A forgery kind's name ("bad-sign", ..., "v3-tag-signed"; "?" unknown). */
const char *sched_forge_name(int kind);
/* Whether kind is one of APIv3's (FORGE_V3_*). */
int sched_forge_is_v3(int kind);

/* An empty schedule for seed. Never fails. */
void sched_init(sim_schedule *s, uint64_t seed);
/* Frees everything; s is empty afterwards. NULL accepted. */
void sched_free(sim_schedule *s);

/* Appends an order; its suffix is the scenario code, the index in base36 and
 * five characters drawn from r. Returns the index, or -1 (OOM, too many). */
int sched_add_order(sim_schedule *s, rng_t *r, int scenario, int64_t user_id, int64_t amount_fen,
                    int style, unsigned flags);
/* Appends a token slot to the current phase (issued before its tasks run).
 * Returns its index, or -1 (OOM, or no phase begun). */
int sched_add_token(sim_schedule *s, int scenario, int64_t user_id);
/* Appends a zeroed task (order/token/aux_order -1, max_attempts 1) to the
 * current phase. Returns it (valid until the next add), or NULL on OOM. */
sched_task *sched_add_task(sim_schedule *s, sched_task_kind kind);
/* Starts a phase; tokens and tasks added afterwards belong to it.
 * mock_config is copied (truncated configs are refused: -1). Returns 0/-1. */
int sched_begin_phase(sim_schedule *s, int scenario, const char *label, const char *mock_config,
                      uint32_t budget_ms, int chaos);

/* Plans a run of the chaos command with action at_ms after the current
 * phase starts. Returns 0, or -1 (OOM, or no phase begun). */
int sched_add_chaos(sim_schedule *s, sched_chaos_action action, uint32_t at_ms);
/* The planned chaos runs of phases [first, last) (s->chaos is in phase
 * order): *n of them from *ev (*n 0 when none). */
void sched_chaos_of(const sim_schedule *s, size_t first, size_t last, const sched_chaos **ev,
                    size_t *n);
/* The action's word ("kill-worker" ...), "?" when out of range. */
const char *sched_chaos_name(int action);

/* Sets the faults description of the current phase (truncated to fit). */
void sched_set_faults(sim_schedule *s, const char *faults);

/* Sets every phase's barrier flag: the first phase, phases without a
 * budget, exclusive, chaos and ping phases and the phase after each of them
 * are barriers. */
void sched_mark_barriers(sim_schedule *s);

/* Sorts the tasks of every phase by start_ms (stable). */
void sched_sort_tasks(sim_schedule *s);

/* The text of an amount in a style: AMT_FIXED2 "12.30", AMT_SHORT "12.3",
 * "7", "0.5". out must hold 16 bytes. Returns out. */
char *sched_amount_text(int64_t fen, int style, char out[16]);

/* The full order number: prefix + suffix. Returns 0, or -1 if it does not
 * fit outlen. */
int sched_order_no(const sim_schedule *s, const char *prefix, size_t order, char *out,
                   size_t outlen);
/* The index of the order whose number is order_no under prefix, or -1. */
long sched_order_lookup(const sim_schedule *s, const char *prefix, const char *order_no);

/* Writes the canonical text form (one line per item; what the digest hashes). */
void sched_print(const sim_schedule *s, FILE *out);
/* SHA-256 of the canonical text form as 64 lower-case hex digits.
 * Returns 0, or -1 on a crypto or memory failure (out = ""). */
int sched_digest(const sim_schedule *s, char out[65]);

/* Counts of the schedule's orders per scenario (orders submitted by clients
 * plus never-submitted forgery targets). */
void sched_count_orders(const sim_schedule *s, size_t counts[SC_COUNT]);

#endif
