/* test_mock_journal.c - CUnit suite for gateway-mock/journal against the
 * stack's MariaDB (as test_mock_ledger: fails without one, cu_service_missing).
 * Appends entries for fresh out_trade_nos and reads them back: fields and
 * nulls, oldest first, the limit, the rule index (null when none), the knob
 * that switches appending off. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal.h"
#include "ledger.h"

static faults_state F;
static journal *J;
static char run_tag[16];

static const char *otn(const char *name, char buf[33])
{
    snprintf(buf, 33, "JU%.12s%.18s", run_tag, name);
    return buf;
}

static json_t *read_back(const char *o, long long limit)
{
    char err[256];
    journal_filter fl = { .out_trade_no = o };
    json_t *j = journal_json(J, &fl, limit, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL(j);
    return j;
}

static void test_request_and_notification(void)
{
    char o[33];
    journal_entry e;
    otn("calls", o);
    journal_entry_begin(&e, false);
    snprintf(e.endpoint, sizeof(e.endpoint), "unifiedorder");
    snprintf(e.out_trade_no, sizeof(e.out_trade_no), "%s", o);
    snprintf(e.fault, sizeof(e.fault), "none");
    snprintf(e.reply, sizeof(e.reply), "xml");
    snprintf(e.return_code, sizeof(e.return_code), "SUCCESS");
    snprintf(e.return_msg, sizeof(e.return_msg), "OK");
    snprintf(e.result_code, sizeof(e.result_code), "SUCCESS");
    snprintf(e.transaction_id, sizeof(e.transaction_id), "4200202612011234567890123456");
    e.latency_ms = 12;
    journal_append(J, &e, true);

    journal_entry_begin(&e, true);
    snprintf(e.out_trade_no, sizeof(e.out_trade_no), "%s", o);
    snprintf(e.transaction_id, sizeof(e.transaction_id), "4200202612011234567890123456");
    snprintf(e.notify_url, sizeof(e.notify_url), "http://127.0.0.1:9/notify");
    snprintf(e.error, sizeof(e.error), "connect: refused");
    e.copy = 1;
    e.attempt = 1;
    journal_append(J, &e, true);

    json_t *j = read_back(o, JOURNAL_DEFAULT_LIMIT);
    json_t *req = json_object_get(j, "requests"), *ntf = json_object_get(j, "notifications");
    CU_ASSERT_EQUAL_FATAL(json_array_size(req), 1);
    CU_ASSERT_EQUAL_FATAL(json_array_size(ntf), 1);
    json_t *r = json_array_get(req, 0);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "endpoint")), "unifiedorder");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "fault")), "none");
    CU_ASSERT_TRUE(json_is_null(json_object_get(r, "rule")));
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "result_code")), "SUCCESS");
    CU_ASSERT_TRUE(json_is_null(json_object_get(r, "err_code")));
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "latency_ms")), 12);
    const char *t = json_string_value(json_object_get(r, "time"));
    CU_ASSERT_TRUE(t != NULL && strlen(t) == 27 && t[26] == 'Z');
    json_t *n = json_array_get(ntf, 0);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(n, "error")), "connect: refused");
    CU_ASSERT_TRUE(json_is_null(json_object_get(n, "http_status")));
    CU_ASSERT_TRUE(json_is_false(json_object_get(n, "acknowledged")));
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(n, "attempt")), 1);
    json_decref(j);
}

static void test_order_limit_and_knob(void)
{
    char o[33];
    journal_entry e;
    otn("order", o);
    for (int i = 0; i < 5; i++) {
        journal_entry_begin(&e, false);
        snprintf(e.endpoint, sizeof(e.endpoint), "orderquery");
        snprintf(e.out_trade_no, sizeof(e.out_trade_no), "%s", o);
        e.latency_ms = i;
        e.rule = i - 2;                /* -2, -1: no rule; then rules 0, 1, 2 */
        journal_append(J, &e, i == 4); /* the last wait covers the batch */
    }
    json_t *j = read_back(o, 3);
    json_t *req = json_object_get(j, "requests");
    CU_ASSERT_EQUAL_FATAL(json_array_size(req), 3);
    /* The newest three, oldest first. */
    for (int i = 0; i < 3; i++) {
        json_t *r = json_array_get(req, (size_t)i);
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "latency_ms")), i + 2);
        CU_ASSERT_TRUE(json_is_integer(json_object_get(r, "rule")));
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "rule")), i);
    }
    json_decref(j);

    faults_config cfg;
    faults_get(&F, &cfg);
    cfg.journal = false;
    faults_set(&F, &cfg, 0);
    journal_append(J, &e, true);
    cfg.journal = true;
    faults_set(&F, &cfg, 0);
    j = read_back(o, 100);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "requests")), 5);
    json_decref(j);
}

static void test_prefix(void)
{
    char a[33], b[33], prefix[40], err[256];
    journal_entry e;
    otn("pfxA1", a);
    otn("pfxB1", b);
    const char *names[2] = { a, b };
    for (int i = 0; i < 2; i++) {
        journal_entry_begin(&e, false);
        snprintf(e.endpoint, sizeof(e.endpoint), "closeorder");
        snprintf(e.out_trade_no, sizeof(e.out_trade_no), "%s", names[i]);
        journal_append(J, &e, i == 1);
    }
    /* "JU<tag>pfxA" keeps a only; "JU<tag>pfx", the common part, both */
    snprintf(prefix, sizeof(prefix), "%.*s", (int)(strlen(a) - 1), a);
    journal_filter fl = { .prefix = prefix };
    json_t *j = journal_json(J, &fl, 100, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "requests")), 1);
    json_decref(j);
    prefix[strlen(prefix) - 1] = '\0';
    j = journal_json(J, &fl, 100, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "requests")), 2);
    json_decref(j);
}

int main(void)
{
    faults_config cfg;
    char err[256];
    if (mysql_library_init(0, NULL, NULL) != 0)
        return 2;
    snprintf(run_tag, sizeof(run_tag), "%ld%d", (long)(time(NULL) % 100000000),
             (int)(getpid() % 10000));
    faults_config_defaults(&cfg);
    faults_init(&F, &cfg);
    J = journal_start(&F);
    journal_filter pf = { .out_trade_no = "JUprobe000" };
    json_t *probe = J != NULL ? journal_json(J, &pf, 1, err, sizeof(err)) : NULL;
    if (probe == NULL) {
        mysql_library_end();
        return cu_service_missing("test_mock_journal", "MariaDB", err);
    }
    json_decref(probe);
    static const cu_test tests[] = {
        { "a call and a delivery are read back", test_request_and_notification },
        { "entries read oldest first, up to the limit, none with the knob off",
          test_order_limit_and_knob },
        { "a prefix reads the entries of every out_trade_no that starts with it", test_prefix },
    };
    return CU_SUITE_RUN("mock_journal", NULL, NULL, tests);
}
