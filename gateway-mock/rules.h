/* rules - the mock's targeted fault rules (Toxiproxy's toxics, aimed at one
 * order): each rule matches calls by endpoint and out_trade_no pattern,
 * optionally for the next N matching calls only, and decides the fault and
 * latency of the calls it matches instead of the endpoint's random knobs.
 *
 * The first live rule (not spent) that matches a call wins. Its use is
 * counted under the set's lock, so a rule with `times` N decides at most N
 * calls however many threads match it at once, and exactly N when N or more
 * calls match. A spent rule stays in the list (remaining 0), so a rule's
 * index is always its place in the list as it was PUT. Thread-safe. */
#ifndef IDEMPAY_MOCK_RULES_H
#define IDEMPAY_MOCK_RULES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "faults.h"

#define RULES_MAX 32         /* rules in one list */
#define RULES_PATTERN_MAX 64 /* characters of an out_trade_no pattern */
#define RULES_MAX_TIMES 1000000000LL
#define RULES_MAX_HOLD_MS 600000LL /* as hold_max_ms */
#define RULES_UNLIMITED (-1LL)     /* times / remaining of a rule without `times` */
#define RULES_KEEP (-1LL)          /* latency_ms / hold_ms not given */

typedef struct {
    char endpoint[16];                   /* "*" or unifiedorder, orderquery, ... */
    char pattern[RULES_PATTERN_MAX + 1]; /* glob over out_trade_no; "": every call */
    long long times;                     /* RULES_UNLIMITED, or 1..RULES_MAX_TIMES */
    long long remaining;                 /* calls it may still decide (RULES_UNLIMITED) */
    long long hits;                      /* calls it decided */
    fault_kind kind;                     /* the fault it applies */
    long long latency_ms;                /* RULES_KEEP: the endpoint's drawn latency */
    long long hold_ms;                   /* timeout_after_charge: RULES_KEEP: hold_max_ms */
} rule;

typedef struct {
    rule v[RULES_MAX];
    size_t n;
} rules_list;

/* What a matched rule decided for one call. */
typedef struct {
    int index; /* the rule's index; -1: no rule matched */
    fault_kind kind;
    long long latency_ms; /* RULES_KEEP: keep the drawn delay */
    long long hold_ms;    /* RULES_KEEP: the knob hold_max_ms */
} rules_decision;

typedef struct {
    pthread_mutex_t mu;
    rules_list list;
    atomic_size_t count; /* list.n, read without the lock */
} rules_set;

/* Parses the JSON value of "rules" into *out: null or an array of at most
 * RULES_MAX objects {"endpoint", "out_trade_no"?, "times"?, "fault":
 * {"kind"?, "latency_ms"?, "hold_ms"?}} (docs/MOCK.md). Unknown keys, wrong
 * types and values out of range are refused. Returns 0, or -1 with an
 * English reason naming the field ("rules[1].fault.kind ...") in err; *out
 * is then unspecified. Counts start full (remaining = times, hits 0). */
int rules_parse(const json_t *v, rules_list *out, char *err, size_t errlen);

/* The list as a new JSON array (each rule as PUT, plus "remaining", null
 * when unlimited, and "hits"), or NULL on OOM. */
json_t *rules_to_json(const rules_list *l);

/* True when s matches pattern: '*' any run of characters (also none), '?'
 * one character, anything else itself. */
bool rules_glob(const char *pattern, const char *s);

void rules_init(rules_set *s);
/* Replaces the list (its counts restart from *l's). */
void rules_replace(rules_set *s, const rules_list *l);
/* Copies the list, with its current counts, into *out. */
void rules_get(rules_set *s, rules_list *out);
/* True when the list has any rule (no lock taken). */
bool rules_any(rules_set *s);

/* Matches one call of endpoint (its journal name) with out_trade_no otn
 * (NULL or "": the call names none; only a rule without a pattern matches
 * it) against the list: the first live matching rule's use is counted and
 * *out says what it decided; out->index is -1 when none matched. */
void rules_take(rules_set *s, const char *endpoint, const char *otn, rules_decision *out);

#endif
