/* history - what the simulator saw: every client operation (start/end on the
 * monotonic clock, what was sent, HTTP status, the ok/fail/unknown outcome
 * and a summary of the body), the gateway ledger and the final order rows.
 *
 * Each worker thread appends to its own sim_history (no locks); the buffers
 * are merged and sorted by start time once the traffic is over. */
#ifndef IDEMPAY_SIM_HISTORY_H
#define IDEMPAY_SIM_HISTORY_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    OP_PAY = 0,  /* POST /api/pay */
    OP_QUERY,    /* GET /api/pay/orders/{no} */
    OP_TOKEN,    /* GET /api/pay/token */
    OP_CALLBACK, /* POST /api/pay/callback/wechat (forged) */
    OP_PING,     /* GET /api/ping */
    OP_STRAY,    /* POST {gateway}/pay/unifiedorder by the simulator: the payer pays an
                    order a second time (txn: the charge it made) */
    OP_PAYER,    /* POST {gateway}/mock/payer/pay: the customer pays a prepay (txn: the
                    charge it made; error: the err_code of a refusal) */
    OP_REFUND,   /* POST /api/pay/orders/{no}/refunds (txn: the refund_no answered;
                    amount_fen: the amount asked; idem: the key) or, with OPF_LIST,
                    GET /api/pay/orders/{no}/refunds */
    OP_KIND_COUNT
} sim_op_kind;

typedef enum {
    OUT_OK = 0,  /* a definite answer (200 PAID, a read) */
    OUT_FAIL,    /* a definite refusal (4xx, FAIL reply) */
    OUT_UNKNOWN, /* timeout, reset, 5xx, 202: the effect is not known */
    OUT_COUNT
} sim_outcome;

/* Order status as the service reports it (seed numbering) plus "none". */
typedef enum {
    OST_PENDING = 0,
    OST_PROCESSING = 1,
    OST_PAID = 2,
    OST_FAILED = 3,
    OST_NONE = 4 /* no status in the body / no such order */
} sim_order_status;

/* Op flags. */
#define OPF_REPLAYED 0x01u         /* Idempotent-Replayed: true */
#define OPF_MISMATCH 0x02u         /* sent with another user/amount than the order's */
#define OPF_EXPIRED 0x04u          /* the token was presented after it expired */
#define OPF_FOREIGN 0x08u          /* the token belongs to another user */
#define OPF_CALLBACK_SUCCESS 0x10u /* callback reply return_code SUCCESS */
#define OPF_LIST 0x20u             /* OP_REFUND: the GET of the order's refunds */

#define SIM_TXN_MAX 40
#define SIM_ERR_MAX 48

typedef struct {
    int64_t start_us; /* monotonic, from the run start */
    int64_t end_us;
    int32_t order;      /* schedule order index, -1 none */
    int32_t token;      /* token slot, -1 none */
    int32_t task;       /* schedule task index, -1 none */
    int64_t user_id;    /* as sent (0 none) */
    int64_t amount_fen; /* as sent (-1 none) */
    uint16_t http_code; /* 0 when no HTTP answer */
    uint8_t kind;       /* sim_op_kind */
    uint8_t outcome;    /* sim_outcome */
    uint8_t transport;  /* http_status of the client call */
    uint8_t status;     /* sim_order_status in the body */
    uint8_t scenario;
    uint8_t flags;           /* OPF_* */
    uint8_t token_use;       /* sched_token_use */
    uint8_t idem;            /* Idempotency-Key variant, 0 none */
    uint8_t attempt;         /* 1-based within the task */
    uint8_t forge;           /* forged callback kind */
    char txn[SIM_TXN_MAX];   /* transaction_id in the body, "" none */
    char error[SIM_ERR_MAX]; /* error code in the body (or transport error name) */
} sim_op;

typedef struct {
    sim_op *op;
    size_t n, cap;
} sim_history;

/* A ledger charge of the mock gateway. */
typedef struct {
    char transaction_id[SIM_TXN_MAX];
    char out_trade_no[48];
    int64_t total_fee;
    int refunded;
    int refund_count;     /* distinct refunds the gateway made of it (-1: not said) */
    int64_t refunded_fee; /* fen refunded in all (-1: not said) */
    char charged_at[40];
    long order;       /* schedule order index, -1 when not ours / unknown */
    int64_t epoch_us; /* charged_at as microseconds since 1970 (INT64_MIN: unparseable) */
    int64_t at_us;    /* charged_at on the run's clock (sim_op times; INT64_MIN unknown) */
} sim_charge;

/* A payment call or a fence of one of the run's out_trade_no as the mock's
 * journal saw it (gateway_calls.h). */
typedef struct {
    char out_trade_no[48];
    long order;         /* schedule order index, -1 unknown */
    uint8_t fence;      /* GWCALL_FENCE (closeorder, reverse) or GWCALL_PAY */
    char endpoint[16];  /* the journal's name ("unifiedorder", "v3_close" ...) */
    int64_t at_us;      /* its arrival on the run's clock */
    int64_t latency_us; /* arrival to reply (to the hold, for a withheld reply) */
} sim_gwcall;

/* A refund: of the mock's ledger (`refunds`: out_refund_no, its charge, refund_fee,
 * status), or one the service lists for an order (GET /api/pay/orders/{no}/refunds:
 * refund_no, kind, amount, status). */
typedef enum {
    RST_PROCESSING = 0,
    RST_SUCCESS,
    RST_REFUNDCLOSE,
    RST_CHANGE,
    RST_ABNORMAL,
    RST_OTHER,
    RST_COUNT
} sim_refund_status;

#define SIM_REFUND_NO_MAX 72

typedef struct {
    char refund_no[SIM_REFUND_NO_MAX];
    char transaction_id[SIM_TXN_MAX]; /* the ledger's: the charge refunded ("" in a list) */
    long order;                       /* schedule order index, -1 when not ours */
    int64_t fee;                      /* fen */
    uint8_t status;                   /* sim_refund_status */
    uint8_t duplicate;                /* a listed refund of kind duplicate_charge (else merchant) */
} sim_refund;

/* "PROCESSING", "SUCCESS", ... ("?" out of range); the parse of those (RST_OTHER
 * for anything else). */
const char *history_refund_status_name(int st);
int history_refund_status_parse(const char *s);

/* An order row as read at the end (through the API or the database). */
typedef enum { ROW_UNREAD = 0, ROW_ABSENT, ROW_PRESENT, ROW_ERROR } sim_row_state;

typedef struct {
    uint8_t state;  /* sim_row_state */
    uint8_t status; /* sim_order_status */
    int64_t user_id;
    int64_t amount_fen; /* -1 when unparseable */
    char transaction_id[SIM_TXN_MAX];
    char updated_at[40];
} sim_row;

/* Everything the checker needs besides the schedule. Arrays owned by whoever
 * filled them; api_rows and (when not NULL) db_rows have one entry per
 * schedule order. */
typedef struct {
    const sim_op *ops; /* sorted by start_us */
    size_t nops;
    const sim_charge *charges;
    size_t ncharges;
    const sim_row *api_rows;
    const sim_row *db_rows;
    const char *prefix;
    uint64_t seed;
    const int64_t
        *phase_start_us;     /* per schedule phase, on the ops' clock (-1 never; NULL unknown) */
    int64_t service_call_us; /* how long the service may go on with a request whose
                                client gave up (0: CHK_DEFAULT_SERVICE_CALL_US) */
    int64_t lease_us;        /* the service's PROCESSING lease (0: unknown) */
    /* The refunds (scenario refunds, payer-edge): NULL / 0 when not read. */
    const sim_refund *refunds; /* the ledger's refunds of this run's orders */
    size_t nrefunds;
    const sim_refund *listed; /* the refunds the service listed, order by order */
    size_t nlisted;
    const uint8_t *list_read; /* per schedule order: 1 when its list was read */
    /* The service's payment calls and fences (the mock's journal): NULL when not read. */
    const sim_gwcall *calls;
    size_t ncalls;
    int64_t gateway_timeout_us; /* the service's gateway timeout (0: unknown) */
} sim_observations;

/* An empty history. */
void history_init(sim_history *h);
void history_free(sim_history *h);
/* Appends a copy of op. Returns 0, or -1 on OOM (op dropped). */
int history_append(sim_history *h, const sim_op *op);
/* Moves every op of src to the end of dst (src is left empty). 0 or -1. */
int history_take(sim_history *dst, sim_history *src);
/* Sorts by start time (ties: end time, then order index); stable. */
void history_sort(sim_history *h);

/* Clears row to state (ROW_ABSENT, ROW_ERROR ...) with no status and an
 * unknown amount. */
void history_row_blank(sim_row *row, int state);

/* Names for the enums ("pay", "ok", "PAID" ...). */
const char *history_kind_name(int kind);
const char *history_outcome_name(int outcome);
const char *history_status_name(int status);
/* Parses "PENDING"/"PROCESSING"/"PAID"/"FAILED" (OST_NONE otherwise). */
int history_status_parse(const char *s);

/* Puts the ledger's charge times on the run's clock: at_us = epoch_us -
 * origin_epoch_us (the wall clock at the run's time 0; the mock and the
 * simulator read the same clock, being on one machine). */
void history_charge_times(sim_charge *charges, size_t n, int64_t origin_epoch_us);

#endif
