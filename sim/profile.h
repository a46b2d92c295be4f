/* profile - a target profile: how the simulator speaks to a payment service
 * whose API has another shape than idempay's (docs/SIMULATOR.md, "Target
 * profiles"). A profile is a JSON file: the method and path of each
 * operation (pay, read one order, get a token, callback, ping), where each
 * value of a request goes (a body JSON field, a query parameter, a header,
 * a path placeholder), where the status, transaction id, amount and error
 * sit in each answer (a small JSON path like "data.status"), how the
 * statuses are spelled, which answers mean "refused", "busy" or "unknown",
 * and which features exist (tokens, Idempotency-Key, callbacks).
 *
 * Everything here is pure: loading validates the whole file (unknown keys
 * included) and says what is wrong; a request is built into a caller's
 * buffer; an answer is read into a profile_answer whose `code` is the
 * answer's meaning in idempay's own HTTP codes (200 paid, 202 processing,
 * 402 failed, 403/409/422 refused, 404 absent, 5xx unknown), so the
 * driver's client behaviour and the checker work unchanged on any target.
 * The built-in profile is idempay's own API (sim/profiles/idempay.json):
 * with it every request and every reading is what the simulator did before
 * profiles existed. A loaded profile is read-only and may be shared by
 * threads. */
#ifndef IDEMPAY_SIM_PROFILE_H
#define IDEMPAY_SIM_PROFILE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "caller_sign.h"
#include "history.h"

#define PROFILE_NAME_MAX 64
#define PROFILE_PATH_MAX 256    /* an operation's path template */
#define PROFILE_FIELD_MAX 128   /* a JSON path, parameter or header name */
#define PROFILE_RULES_MAX 16    /* answer rules per operation (and global) */
#define PROFILE_RULE_VALUES 8   /* HTTP codes / body codes in one rule */
#define PROFILE_SPELLINGS_MAX 8 /* spellings of one status */
#define PROFILE_URL_MAX 1024
#define PROFILE_BODY_MAX 2048
#define PROFILE_HEADERS_MAX 8 /* the profile's own (at most 4) and the 4 signature headers */
#define PROFILE_HEADER_LINE_MAX 320
#define PROFILE_TOKEN_MAX 160
#define PROFILE_CODE_URL_MAX 256
#define PROFILE_PREPAY_ID_MAX 72
#define PROFILE_FILE_MAX 65536 /* a profile file is at most this long */

/* The operations a profile describes. pay and read are required. */
typedef enum {
    PROF_OP_PAY = 0,  /* a payment request (idempay: POST /api/pay) */
    PROF_OP_READ,     /* read one order (GET /api/pay/orders/{order_no}) */
    PROF_OP_TOKEN,    /* issue a payment token (GET /api/pay/token) */
    PROF_OP_CALLBACK, /* the WeChat Pay v2 notification URL (XML in and out) */
    PROF_OP_PING,     /* a cheap health route (GET /api/ping); optional */
    PROF_OP_COUNT
} profile_op;

/* Features; a scenario that needs a missing one is skipped. */
#define PROF_FEAT_TOKENS 0x01u    /* tokens: the token operation and pay's token */
#define PROF_FEAT_IDEM_KEY 0x02u  /* pay takes an Idempotency-Key */
#define PROF_FEAT_CALLBACKS 0x04u /* the service takes gateway notifications */
#define PROF_FEAT_DB 0x08u        /* its orders are idempay's payment_order table (--db) */

/* The values a request may carry. */
typedef enum {
    PROF_VAL_ORDER_NO = 0,
    PROF_VAL_USER_ID,
    PROF_VAL_AMOUNT,
    PROF_VAL_TOKEN,
    PROF_VAL_IDEM_KEY,
    PROF_VAL_TRADE_TYPE, /* the gateway flow: MICROPAY, NATIVE, JSAPI (docs/FLOWS.md) */
    PROF_VAL_AUTH_CODE,  /* MICROPAY: the customer's 18-digit payment code */
    PROF_VAL_OPENID,     /* JSAPI: the customer's openid */
    PROF_VAL_COUNT
} profile_value;

typedef enum {
    PROF_IN_NONE = 0,
    PROF_IN_BODY,   /* a JSON body field ("a.b" nests) */
    PROF_IN_QUERY,  /* a query parameter */
    PROF_IN_HEADER, /* a request header */
    PROF_IN_PATH    /* a {placeholder} of the path */
} profile_where;

/* How a value is written: the amount as the decimal yuan text ("12.30",
 * the default), as a JSON number of yuan, or as integer fen; user_id as a
 * JSON number (the default in a body) or a string. */
typedef enum { PROF_AS_DEFAULT = 0, PROF_AS_STRING, PROF_AS_NUMBER, PROF_AS_FEN } profile_as;

/* The fields an answer may carry. */
typedef enum {
    PROF_FLD_STATUS = 0,
    PROF_FLD_TXN,
    PROF_FLD_AMOUNT,
    PROF_FLD_ERROR,
    PROF_FLD_USER_ID,
    PROF_FLD_UPDATED_AT,
    PROF_FLD_TOKEN,
    PROF_FLD_EXPIRES_IN,
    PROF_FLD_CODE_URL,  /* NATIVE: the code the customer scans (docs/FLOWS.md) */
    PROF_FLD_PREPAY_ID, /* NATIVE, JSAPI: the gateway's prepay order */
    PROF_FLD_COUNT
} profile_field;

typedef struct {
    uint8_t in;                   /* profile_where */
    uint8_t as;                   /* profile_as */
    char name[PROFILE_FIELD_MAX]; /* field path, parameter or header name */
} profile_slot;

/* An answer rule: when the HTTP code is one of http[] (none: any) and the
 * body code is one of codes[] (none: any), the answer means `means` (an
 * idempay status code) and, when error is set, carries that error name. */
typedef struct {
    int http[PROFILE_RULE_VALUES];
    size_t nhttp;
    char codes[PROFILE_RULE_VALUES][PROFILE_NAME_MAX];
    size_t ncodes;
    int means;
    char error[SIM_ERR_MAX];
} profile_rule;

typedef struct {
    int present;
    char method[8];
    char path[PROFILE_PATH_MAX];
    profile_slot send[PROF_VAL_COUNT];
    char field[PROF_FLD_COUNT][PROFILE_FIELD_MAX]; /* "" when the answer has none */
    profile_rule rules[PROFILE_RULES_MAX];
    size_t nrules;
} profile_endpoint;

typedef struct {
    char name[PROFILE_NAME_MAX];
    unsigned features;                                                /* PROF_FEAT_* */
    char spelling[OST_NONE][PROFILE_SPELLINGS_MAX][PROFILE_NAME_MAX]; /* per OST_* */
    size_t nspellings[OST_NONE];
    char body_code[PROFILE_FIELD_MAX];     /* where a body's own result code sits, "" none */
    profile_rule rules[PROFILE_RULES_MAX]; /* after each operation's own */
    size_t nrules;
    profile_endpoint ep[PROF_OP_COUNT];
} sim_profile;

/* ---- loading ---- */

/* The built-in profile: idempay's own API (the text of
 * sim/profiles/idempay.json). Never NULL; a static, never freed. */
const sim_profile *profile_builtin(void);
/* Its JSON text. */
const char *profile_builtin_text(void);

/* Parses and validates a profile from JSON text. Returns a new profile, or
 * NULL with what is wrong in err (the key's path, e.g. "pay.send.amount:
 * unknown place 'bdy'"). Free with profile_free. */
sim_profile *profile_parse(const char *text, size_t len, char *err, size_t errlen);
/* The same from a file. NULL with the reason in err (unreadable, or what
 * profile_parse says, prefixed with the file name). */
sim_profile *profile_load(const char *path, char *err, size_t errlen);
/* NULL accepted; never pass profile_builtin(). */
void profile_free(sim_profile *p);

/* Whether p has every feature of mask (PROF_FEAT_*). */
int profile_has(const sim_profile *p, unsigned features);

/* The scenarios of mask (bits 1u << SC_*) that p can run: those needing a
 * missing feature (token-replay: tokens; forged-callback and callback-storm:
 * callbacks; ping: a ping operation) are left out and named with the reason
 * in note ("" when none is). Returns the mask without them. */
unsigned profile_runnable(const sim_profile *p, unsigned mask, char *note, size_t notelen);

/* ---- requests ---- */

/* The values of one request; NULL (or, for numbers, ignored) when not sent.
 * A value the profile has no place for is not sent. */
typedef struct {
    const char *order_no;
    int64_t user_id;    /* <= 0: not sent */
    const char *amount; /* decimal yuan as the schedule writes it ("12.3", "12.30") */
    int64_t amount_fen; /* the same in fen (PROF_AS_FEN) */
    const char *token;
    const char *idem_key;
    const char *trade_type; /* NULL: not sent (the service's default flow) */
    const char *auth_code;
    const char *openid;
} profile_values;

/* A built request. headers points into hdr and is NULL-terminated: the
 * struct must not be copied once built. body is "" and content_type NULL
 * when the request has no body. */
typedef struct {
    const char *method;
    char url[PROFILE_URL_MAX];
    char body[PROFILE_BODY_MAX];
    size_t body_len;
    const char *content_type;
    char hdr[PROFILE_HEADERS_MAX][PROFILE_HEADER_LINE_MAX];
    const char *headers[PROFILE_HEADERS_MAX + 1];
} profile_request;

/* Builds operation op of p against base (the service's URL, no trailing
 * slash): path placeholders and query values percent-encoded, body fields as
 * compact JSON in the order of profile_value, headers as "Name: value".
 * Returns 0, or -1 with the reason in err (the operation is not in the
 * profile, something does not fit, a header value has a line break); out is
 * then unusable. */
int profile_request_build(const sim_profile *p, profile_op op, const char *base,
                          const profile_values *v, profile_request *out, char *err, size_t errlen);

/* Every request profile_request_build makes from now on is signed as the
 * merchant-door caller name with secret_hex (common/caller_sign.h; the four
 * X-Idempay-* headers follow the profile's own). Call once before any
 * thread builds requests. Returns 0, or -1 when name or secret_hex is
 * invalid (nothing changes). */
int profile_request_sign_as(const char *name, const char *secret_hex);

/* profile_request_sign_as from IDEMPAY_CALLER (default "dev") and the
 * first line of IDEMPAY_CALLER_SECRET_FILE (./stack writes it). Returns 1
 * when signing, 0 when no secret file is set or readable (requests go
 * unsigned: a target without the doors), -1 when its content is invalid
 * (message on stderr). */
int profile_request_sign_from_env(void);

/* The four signature header lines ("Name: value") of a request to url
 * (method, body of len bytes) as the caller set above. Returns 4, 0 when
 * no caller is set (nothing written: the request goes unsigned), -1 when
 * they cannot be made. For the simulator's own requests outside profiles
 * (the refunds). */
int profile_sign_lines(const char *method, const char *url, const char *body, size_t len,
                       char lines[4][CALLER_HEADER_LINE_MAX]);

/* ---- answers ---- */

typedef struct {
    int code;                /* the meaning as an idempay HTTP status (see the top) */
    uint8_t status;          /* sim_order_status; OST_NONE when none is recognised */
    int64_t user_id;         /* 0 when none */
    int64_t amount_fen;      /* -1 when none or unparseable */
    long expires_in;         /* a token's lifetime in s, 0 when not given */
    char txn[SIM_TXN_MAX];   /* "" when none */
    char error[SIM_ERR_MAX]; /* the body's error (or the matching rule's), "" none */
    char updated_at[40];
    char token[PROFILE_TOKEN_MAX];         /* "" when none or too long */
    char code_url[PROFILE_CODE_URL_MAX];   /* "" when none or too long */
    char prepay_id[PROFILE_PREPAY_ID_MAX]; /* "" when none or too long */
} profile_answer;

/* Reads an answer to op (HTTP code http_code, body[0..len)) through p.
 * The code is, in order: the first matching rule of the operation, then of
 * the profile; for pay and read answers with a 2xx code, the status (pay:
 * PAID 200, PROCESSING or PENDING 202, FAILED 402; read: 200 with any
 * status) or, when the body names no known status, 500 (unknown); anything
 * else keeps its own HTTP code. A body that is not JSON sets error
 * "unparseable body". Never fails. */
void profile_answer_read(const sim_profile *p, profile_op op, long http_code, const char *body,
                         size_t len, profile_answer *out);

/* The final row of an order from a read answer: returns 1 (row present),
 * 0 (absent: code 404) or -1 (unreadable: row->state ROW_ERROR). */
int profile_answer_row(const profile_answer *a, sim_row *row);

/* ---- shared by the profile's files ---- */

/* The name of a profile_value as profiles spell it ("order_no" ...), or
 * NULL. */
const char *profile_value_name(int value);

/* The value at a dotted path ("data.status"; a segment of digits indexes an
 * array; "" or "." is v itself), or NULL. Borrowed reference. */
json_t *profile_json_at(json_t *v, const char *path);
/* A scalar as text: a string as it is, an integer (or an integral real) in
 * decimal, true/false. Returns 0, or -1 (null, object, array, other real,
 * or it does not fit len). */
int profile_scalar_text(const json_t *v, char *out, size_t len);

#endif
