/* test_callback_apply.c - CUnit suite of callback_handle against a real
 * MariaDB (IDEMPAY_DB_* as ./stack sets them): a notification applied once,
 * a second charge and a charge of a closed order queued for refund in the
 * same transaction, and a connection lost by the ROLLBACK after a duplicate
 * record (the statements it closed must not be used: this crashed under
 * ASan before). The last test talks to MariaDB through a small TCP proxy of
 * its own that cuts the connection right after the server's 1062 reply.
 * No database: the suite FAILS. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <arpa/inet.h>
#include <mysql.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "app_ctx.h"
#include "db_suite.h"
#include "callback.h"
#include "config.h"
#include "db_conn.h"
#include "env.h"
#include "order_store.h"
#include "wx_sign.h"
#include "wx_xml.h"

static app_config cfg;
static app_ctx *ctx;
static char prefix[16];

/* ---- a TCP proxy to MariaDB that can cut a connection after a 1062 ------ */

static int proxy_listen_fd = -1;
static int proxy_port;
static int proxy_upstream_port; /* MariaDB's, read at start */
static atomic_bool proxy_armed; /* cut the next connection that gets a 1062 */
static atomic_int proxy_cuts;   /* connections cut so far */

/* MariaDB's error packet for ER_DUP_ENTRY: 0xFF, 1062 little-endian, '#23000'. */
static const unsigned char dup_entry_packet[] = { 0xFF, 0x26, 0x04, '#', '2', '3', '0', '0', '0' };

static bool proxy_has_dup_entry(const unsigned char *buf, size_t n)
{
    for (size_t i = 0; i + sizeof(dup_entry_packet) <= n; i++)
        if (memcmp(buf + i, dup_entry_packet, sizeof(dup_entry_packet)) == 0)
            return true;
    return false;
}

static int proxy_upstream(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    a.sin_port = htons((uint16_t)proxy_upstream_port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Copies bytes both ways until either side closes, or until an armed
 * proxy has forwarded a 1062 to the client: then both sides are closed. */
static void *proxy_conn(void *arg)
{
    int client = (int)(intptr_t)arg, server = proxy_upstream();
    unsigned char buf[65536];

    while (server >= 0) {
        struct pollfd p[2] = { { client, POLLIN, 0 }, { server, POLLIN, 0 } };
        if (poll(p, 2, 10000) <= 0)
            break;
        if (p[0].revents) {
            ssize_t n = read(client, buf, sizeof(buf));
            if (n <= 0 || write(server, buf, (size_t)n) != n)
                break;
        }
        if (p[1].revents) {
            ssize_t n = read(server, buf, sizeof(buf));
            if (n <= 0 || write(client, buf, (size_t)n) != n)
                break;
            bool yes = true;
            if (proxy_has_dup_entry(buf, (size_t)n) &&
                atomic_compare_exchange_strong(&proxy_armed, &yes, false)) {
                atomic_fetch_add(&proxy_cuts, 1);
                break;
            }
        }
    }
    shutdown(client, SHUT_RDWR);
    close(client);
    if (server >= 0)
        close(server);
    return NULL;
}

static void *proxy_accept(void *arg)
{
    (void)arg;
    for (;;) {
        int c = accept(proxy_listen_fd, NULL, NULL);
        pthread_t t;
        if (c < 0)
            return NULL;
        if (pthread_create(&t, NULL, proxy_conn, (void *)(intptr_t)c) == 0)
            pthread_detach(t);
        else
            close(c);
    }
}

static int proxy_start(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t len = sizeof(a);
    pthread_t t;

    proxy_upstream_port = (int)env_int("IDEMPAY_DB_PORT", 13306);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    proxy_listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (proxy_listen_fd < 0 || bind(proxy_listen_fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(proxy_listen_fd, 16) != 0 ||
        getsockname(proxy_listen_fd, (struct sockaddr *)&a, &len) != 0)
        return -1;
    proxy_port = ntohs(a.sin_port);
    if (pthread_create(&t, NULL, proxy_accept, NULL) != 0)
        return -1;
    pthread_detach(t);
    return 0;
}

/* ---- helpers ---------------------------------------------------------- */

static const char *order_no(int n, char buf[ORDER_NO_MAX + 1])
{
    snprintf(buf, ORDER_NO_MAX + 1, "%s%03d", prefix, n);
    return buf;
}

static const char *txid(int n, char buf[40])
{
    snprintf(buf, 40, "4200%s%06d", prefix, n);
    return buf;
}

/* A signed notification of a charge of order_no as the gateway sends it. */
static char *notification(const char *order, const char *transaction_id, long long fee)
{
    wx_msg m;
    char *xml;

    wx_msg_init(&m);
    wx_msg_set(&m, "appid", cfg.appid);
    wx_msg_set(&m, "mch_id", cfg.mch_id);
    wx_msg_set(&m, "nonce_str", "5K8264ILTKCH16CQ2502SI8ZNMTM67VS");
    wx_msg_set(&m, "out_trade_no", order);
    wx_msg_set(&m, "result_code", "SUCCESS");
    wx_msg_set(&m, "return_code", "SUCCESS");
    wx_msg_set_int(&m, "total_fee", fee);
    wx_msg_set(&m, "fee_type", "CNY");
    wx_msg_set(&m, "transaction_id", transaction_id);
    wx_msg_set(&m, "openid", "oUpF8uMEb4qRXf22hE3X68TekukE");
    wx_msg_set(&m, "trade_type", "NATIVE");
    wx_msg_set(&m, "bank_type", "CFT");
    wx_msg_set_int(&m, "cash_fee", fee);
    wx_msg_set(&m, "time_end", "20240101120000");
    wx_sign_msg(&m, cfg.key, WX_SIGN_MD5, 0);
    xml = wx_xml_build(&m);
    wx_msg_free(&m);
    return xml;
}

/* callback_handle on the notification; true when answered SUCCESS. */
static bool apply(app_ctx *c, const char *order, const char *transaction_id, long long fee)
{
    char *xml = notification(order, transaction_id, fee);
    http_request req = { .method = "POST",
                         .path = "/api/pay/callback/wechat",
                         .query = "",
                         .content_type = "text/xml",
                         .remote_addr = "" };
    http_response resp;
    bool ok;

    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    req.body = xml;
    req.body_len = strlen(xml);
    http_response_init(&resp);
    callback_handle(c, &req, &resp);
    ok = resp.body != NULL && strstr(resp.body, "SUCCESS") != NULL;
    http_response_free(&resp);
    free(xml);
    return ok;
}

/* One integer from a one-row query with one string parameter. */
static long long query_int(const char *sql, const char *param)
{
    MYSQL_STMT *st = mysql_stmt_init(ctx->db);
    long long v = -1;

    if (st != NULL && mysql_stmt_prepare(st, sql, (unsigned long)strlen(sql)) == 0 &&
        db_stmt_exec(st, "s", param) == 0 && db_stmt_fetch(st, "l", &v) == 1)
        db_stmt_done(st);
    if (st != NULL)
        mysql_stmt_close(st);
    return v;
}

static int suite_init(void)
{
    if (db_suite_init(&cfg, &ctx, prefix, sizeof(prefix), "UTCA") != 0)
        return -1;
    return proxy_start();
}

static int suite_clean(void)
{
    static const char *const sql[] = {
        "DELETE FROM payment_order WHERE order_no LIKE CONCAT(?, '%')",
        "DELETE FROM payment_callback_record WHERE order_no LIKE CONCAT(?, '%')",
        "DELETE FROM payment_refund WHERE order_no LIKE CONCAT(?, '%')",
    };
    return db_suite_clean(ctx, prefix, sql, sizeof(sql) / sizeof(sql[0]));
}

/* ---- tests ------------------------------------------------------------ */

static void test_database_reachable(void)
{
    int rc = app_ctx_db(ctx);
    if (rc != 0)
        fprintf(stderr, "\n  MariaDB not reachable (run ./stack up): %s\n", ctx->err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static void test_applied_once(void)
{
    char no[ORDER_NO_MAX + 1], t[40];
    order_row row;

    order_no(1, no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 7, 1230, 10000), ORDER_STORE_OK);
    CU_ASSERT(apply(ctx, no, txid(1, t), 1230));
    CU_ASSERT(apply(ctx, no, t, 1230));
    CU_ASSERT_EQUAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_PAID);
    CU_ASSERT_STRING_EQUAL(row.transaction_id, t);
    CU_ASSERT_EQUAL(query_int("SELECT COUNT(*) FROM payment_callback_record WHERE order_no = ?",
                              no),
                    1);
    CU_ASSERT_EQUAL(query_int("SELECT COUNT(*) FROM payment_refund WHERE order_no = ?", no), 0);
}

static void test_second_charge_queued_for_refund(void)
{
    char no[ORDER_NO_MAX + 1], t1[40], t2[40];
    order_row row;

    order_no(2, no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 7, 500, 10000), ORDER_STORE_OK);
    CU_ASSERT(apply(ctx, no, txid(21, t1), 500));
    CU_ASSERT(apply(ctx, no, txid(22, t2), 500));
    CU_ASSERT(apply(ctx, no, t2, 500));
    CU_ASSERT_EQUAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_STRING_EQUAL(row.transaction_id, t1);
    CU_ASSERT_EQUAL(query_int("SELECT COUNT(*) FROM payment_refund WHERE transaction_id = ?", t2),
                    1);
    CU_ASSERT_EQUAL(
        query_int("SELECT outcome FROM payment_callback_record WHERE third_party_no = ?", t2), 1);
}

/* A closed order is never paid: its charge is recorded and refunded. */
static void test_charge_of_closed_order_refunded(void)
{
    char no[ORDER_NO_MAX + 1], t[40];
    order_row row;

    order_no(3, no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 7, 900, 10000), ORDER_STORE_OK);
    CU_ASSERT_EQUAL_FATAL(order_store_mark_final(ctx, no, 1, ORDER_FINAL_CLOSED), ORDER_STORE_OK);
    CU_ASSERT(apply(ctx, no, txid(3, t), 900));
    CU_ASSERT_EQUAL(order_store_get(ctx, no, &row), ORDER_STORE_OK);
    CU_ASSERT_EQUAL(row.status, ORDER_FAILED);
    CU_ASSERT_EQUAL(row.final_reason, ORDER_FINAL_CLOSED);
    CU_ASSERT_STRING_EQUAL(row.transaction_id, "");
    CU_ASSERT_EQUAL(query_int("SELECT COUNT(*) FROM payment_refund WHERE transaction_id = ?", t),
                    1);
}

/* The repeat of a recorded notification meets 1062 on the record INSERT;
 * the proxy then cuts the connection, so the ROLLBACK fails and the
 * connection (with every prepared statement) is dropped. The handler must
 * start over on a new connection and confirm, not use a closed statement. */
static void test_rollback_losing_connection_after_duplicate(void)
{
    char no[ORDER_NO_MAX + 1], t[40], port[16];
    const char *sock = getenv("IDEMPAY_DB_SOCKET");
    char *saved_sock = sock != NULL ? strdup(sock) : NULL;
    app_ctx *pc;

    order_no(4, no);
    CU_ASSERT_EQUAL_FATAL(order_store_insert(ctx, no, 7, 321, 10000), ORDER_STORE_OK);
    CU_ASSERT_FATAL(apply(ctx, no, txid(4, t), 321));

    /* pc's connections (and its reconnect) go through the proxy */
    snprintf(port, sizeof(port), "%d", proxy_port);
    char *saved_port = getenv("IDEMPAY_DB_PORT") ? strdup(getenv("IDEMPAY_DB_PORT")) : NULL;
    unsetenv("IDEMPAY_DB_SOCKET");
    setenv("IDEMPAY_DB_HOST", "127.0.0.1", 1);
    setenv("IDEMPAY_DB_PORT", port, 1);
    pc = app_ctx_new(&cfg, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pc);
    CU_ASSERT_EQUAL_FATAL(app_ctx_db(pc), 0);
    atomic_store(&proxy_armed, true);
    int cuts = atomic_load(&proxy_cuts);
    CU_ASSERT(apply(pc, no, t, 321));
    CU_ASSERT_EQUAL(atomic_load(&proxy_cuts), cuts + 1);
    CU_ASSERT_EQUAL(query_int("SELECT COUNT(*) FROM payment_callback_record WHERE order_no = ?",
                              no),
                    1);
    app_ctx_free(pc);
    if (saved_port != NULL)
        setenv("IDEMPAY_DB_PORT", saved_port, 1);
    if (saved_sock != NULL)
        setenv("IDEMPAY_DB_SOCKET", saved_sock, 1);
    free(saved_port);
    free(saved_sock);
}

int main(void)
{
    static const cu_test tests[] = {
        { "the stack's MariaDB is reachable", test_database_reachable },
        { "a notification is applied once", test_applied_once },
        { "a second charge is queued for refund", test_second_charge_queued_for_refund },
        { "a charge of a closed order is refunded, never PAID",
          test_charge_of_closed_order_refunded },
        { "a ROLLBACK that loses the connection after 1062 starts over",
          test_rollback_losing_connection_after_duplicate },
    };
    return CU_SUITE_RUN("callback_apply", suite_init, suite_clean, tests);
}
