/* journal - what the mock did, for GET /mock/requests (WireMock's request
 * journal): every WeChat call it answered (endpoint, out_trade_no, the fault
 * drawn or the targeted rule that decided it, the reply, the charge made, the
 * latency) and every notification
 * delivery attempt (the merchant's answer or the transport error).
 *
 * Entries are appended to the table mock_journal (sql/007_mock_close.sql,
 * sql/008_mock_rules.sql) by
 * one writer thread per process, in batches of their own transactions: a
 * journal write never joins, delays or fails a ledger transaction, and a
 * journal failure never changes a reply (it is logged). A request thread
 * appends its entry before its reply goes out and waits (at most
 * JOURNAL_WAIT_MS) until the entry is committed, so a client that got the
 * reply finds the call in the journal; notification entries are not waited
 * for. With the knob `journal` off nothing is appended. Entries still queued
 * when the process dies are lost (at most one batch). Thread-safe. */
#ifndef IDEMPAY_MOCK_JOURNAL_H
#define IDEMPAY_MOCK_JOURNAL_H

#include <stdbool.h>
#include <time.h>
#include <jansson.h>

#include "faults.h"
#include "txid.h"

#define JOURNAL_WAIT_MS 2000        /* longest a reply waits for its entry's commit */
#define JOURNAL_MAX_QUEUE 100000    /* entries waiting beyond this are dropped (logged) */
#define JOURNAL_DEFAULT_LIMIT 10000 /* GET /mock/requests: newest entries of each kind */
#define JOURNAL_MAX_LIMIT 1000000

/* One entry. Strings are "" when they do not apply (stored as NULL);
 * http_status, copy and attempt are 0 when they do not apply. */
typedef struct {
    bool notification;    /* false: a WeChat call */
    struct timespec at;   /* CLOCK_REALTIME: arrival / delivery start */
    long long started_ms; /* clocks_mono_ms() at the same instant */
    long long latency_ms; /* until the reply / the merchant's answer */
    char out_trade_no[33];
    char transaction_id[TXID_BUF];
    /* WeChat calls */
    char endpoint[16]; /* unifiedorder, orderquery, refund, closeorder, downloadbill */
    char fault[24];    /* none, error, reset, decline, timeout_after_charge */
    int rule;          /* the rule (index) that decided the fault; -1: none */
    char reply[16];    /* xml, statement, not_found, reset, withheld */
    /* the reply's codes (a call), or the merchant's (a notification) */
    char return_code[16];
    char return_msg[128];
    char result_code[16];
    char err_code[32];
    /* notifications */
    int copy;
    int attempt; /* 1: the first delivery */
    char notify_url[257];
    long http_status; /* 0: no HTTP answer */
    char error[256];  /* the transport error, "" when answered */
} journal_entry;

typedef struct journal journal;

/* Starts the writer thread. faults (the knob `journal`) must outlive the
 * journal. NULL on failure. */
journal *journal_start(faults_state *faults);

/* Queues a copy of e (when the knob is on; j may be NULL: nothing). With
 * wait, returns once it is committed, dropped, or JOURNAL_WAIT_MS passed. */
void journal_append(journal *j, const journal_entry *e, bool wait);

/* A reset: journal_reset_begin waits for the batch being written, drops
 * every queued entry and holds the writer until journal_reset_end, so the
 * caller can empty the table in between. j may be NULL. */
void journal_reset_begin(journal *j);
void journal_reset_end(journal *j);

/* Which entries a read returns: one out_trade_no's, those whose
 * out_trade_no starts with prefix (1..JOURNAL_PREFIX_MAX letters and digits:
 * no LIKE wildcard; the caller checks), or (both NULL) every entry. */
#define JOURNAL_PREFIX_MAX 32
typedef struct {
    const char *out_trade_no;
    const char *prefix;
} journal_filter;

/* {"requests":[...],"notifications":[...]}: the newest limit entries of each
 * kind that filter keeps, oldest first. Returns a new object, or NULL when
 * MariaDB failed (reason in err) or on OOM. */
json_t *journal_json(journal *j, const journal_filter *filter, long long limit, char *err,
                     size_t errlen);

/* Clears *e (rule -1) and stamps it now (at, started). */
void journal_entry_begin(journal_entry *e, bool notification);
/* The ms elapsed since journal_entry_begin, for latency_ms. */
long long journal_elapsed_ms(const journal_entry *e);

#endif
