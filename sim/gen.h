/* gen - the draws every scenario generator shares: users, amounts, orders,
 * phases (with their mock config), client tasks and tokens, all taken from
 * the generator's own PRNG so that one scenario's draws never shift
 * another's. Errors (out of memory, too many orders) leave a message in the
 * context's err buffer and return -1 / NULL; the schedule keeps what was
 * added before the failure (the caller frees it). */
#ifndef IDEMPAY_SIM_GEN_H
#define IDEMPAY_SIM_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"
#include "scenarios.h"
#include "schedule.h"

typedef struct gen_ctx {
    sim_schedule *s;
    rng_t rng;
    int scenario;
    const char *override; /* --mock-config, merged into every phase (may be NULL) */
    const struct gen_client_override *client; /* a scenario file's clients (may be NULL) */
    char *err;
    size_t errlen;
    uint64_t seed_state; /* derives mock seeds and task jitter seeds */
} gen_ctx;

/* A user id: mostly below 2^40, 5 % near 2^63. */
int64_t gen_user(gen_ctx *g);
/* An amount in fen, 0.01 .. 99999999.99 yuan, with round values common. */
int64_t gen_amount(gen_ctx *g);
/* AMT_SHORT or AMT_FIXED2, half each. */
int gen_style(gen_ctx *g);
/* Appends an order of the generator's scenario. Its index, or -1. */
int gen_order(gen_ctx *g, unsigned flags);

/* A range a draw is taken from: lo..hi, both in (lo == hi: that value,
 * nothing drawn). */
typedef struct {
    int64_t lo, hi;
} gen_range;
/* One draw from r (rng_range of g's PRNG). */
int64_t gen_draw(gen_ctx *g, gen_range r);

/* The gateway of a phase, as most generators set it: its latency drawn
 * once a phase, its jitter, and the share of charges whose answer it
 * withholds past the client's timeout (timeout_after_charge_rate); every
 * other knob the table's default. */
typedef struct {
    gen_range latency_ms;
    int64_t jitter_ms;
    double late_rate;
} gen_gateway;
/* k: the defaults (scenarios_mock_defaults) with gw's knobs; draws the
 * latency, nothing else. */
void gen_gateway_knobs(gen_ctx *g, const gen_gateway *gw, sim_mock_knobs *k);
/* Starts a phase (no chaos) whose mock knobs are gw's (gen_gateway_knobs,
 * then gen_phase). 0 or -1. */
int gen_gateway_phase(gen_ctx *g, const char *label, const gen_gateway *gw, uint32_t budget_ms);

/* Starts a phase with the knobs k (their seed is drawn here, the override
 * merged). 0 or -1. */
int gen_phase(gen_ctx *g, const char *label, sim_mock_knobs *k, uint32_t budget_ms, int chaos);
/* Appends a task of the current phase for order (-1: none) released at
 * start_ms. NULL on OOM. */
sched_task *gen_task(gen_ctx *g, sched_task_kind kind, int order, uint32_t start_ms);
/* Appends a token slot for user to the current phase. Its index, or -1. */
int gen_token(gen_ctx *g, int64_t user);
/* Release time of group i of n spread over budget (0 when no pacing). */
uint32_t gen_spread(size_t i, size_t n, uint32_t budget_ms);
/* The orders of part `part` of `parts` phases sharing total: total / parts,
 * plus one for each of the first total % parts parts. */
size_t gen_part(size_t total, int parts, int part);
/* The budget of a phase of n of a generator's orders: budget_ms * n / orders
 * (orders 0 counts as 1). */
uint32_t gen_part_budget(uint32_t budget_ms, size_t n, size_t orders);
/* A part of a generator: n orders over budget_ms. 0 or -1 (err set). */
typedef int (*gen_part_fn)(gen_ctx *g, size_t n, uint32_t budget_ms);
/* A generator of two parts: first with orders - orders / 3 of the orders
 * over two thirds of budget_ms, then second with the rest. 0 or -1. */
int gen_two_parts(gen_ctx *g, size_t orders, uint32_t budget_ms, gen_part_fn first,
                  gen_part_fn second);

/* A client paying one order: optional token and Idempotency-Key. */
typedef struct {
    double token_share, idem_share, poll_share, retry_declined_share;
    int min_attempts, max_attempts;
    uint32_t min_timeout_ms, max_timeout_ms;
    uint32_t min_backoff_ms, max_backoff_ms;
    uint32_t patience_ms; /* 0: GEN_PATIENCE_MS */
} gen_client;

#define GEN_PATIENCE_MS 6000

/* What a scenario file sets in a generator's clients: each field of c only
 * when its GEN_CLIENT_* bit is in set. */
#define GEN_CLIENT_TOKEN_SHARE 0x01u
#define GEN_CLIENT_IDEM_SHARE 0x02u
#define GEN_CLIENT_POLL_SHARE 0x04u
#define GEN_CLIENT_RETRY_DECLINED 0x08u
#define GEN_CLIENT_ATTEMPTS 0x10u
#define GEN_CLIENT_TIMEOUT 0x20u
#define GEN_CLIENT_BACKOFF 0x40u
#define GEN_CLIENT_PATIENCE 0x80u

typedef struct gen_client_override {
    unsigned set;
    gen_client c;
} gen_client_override;

/* c with the fields o sets put in (o NULL or empty: c unchanged). */
gen_client gen_client_apply(const gen_client *c, const gen_client_override *o);

/* Fills the client fields of t from c. token is the order's slot or -1. */
void gen_client_fill(gen_ctx *g, sched_task *t, const gen_client *c, int token, int idem);
/* Draws the token slot (or -1) and Idempotency-Key variant (0 or 1) of a new
 * order of a client c. 0 or -1. */
int gen_order_extras(gen_ctx *g, const gen_client *c, int order, int *token, int *idem);

/* How the orders of gen_orders_with_clients are paid. */
typedef struct {
    const gen_client *client;
    unsigned order_flags; /* ORD_* of each order */
    double dup_share;     /* a second client of the order; < 0: one, nothing drawn, and
                             the tasks' copy_index/copy_count left alone */
    uint32_t step_ms;     /* the second client's release after the first */
    uint32_t jitter_ms;   /* plus 0..jitter_ms drawn per client (0: nothing drawn) */
} gen_orders_spec;

/* The "orders with clients" of most scenarios: n new orders of the current
 * phase, order i released at gen_spread(i, n, budget_ms), each with its
 * token and key drawn (gen_order_extras) and one TASK_PAY client, or two
 * (dup_share). Draws, per order: the order, its extras, the second client,
 * then per client its jitter and its behaviour. *first gets the first
 * order's index (-1 when n is 0; first may be NULL). 0 or -1. */
int gen_orders_with_clients(gen_ctx *g, size_t n, uint32_t budget_ms, const gen_orders_spec *spec,
                            int *first);

#endif
