/* profile.c - loading and validating target profiles (profile.h), the
 * built-in idempay profile, and which scenarios a profile can run. Every
 * key of the file is checked: an unknown key, a wrong type or a missing
 * requirement is an error naming the key, never silently ignored. */
#include "profile.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"

/* The text of sim/profiles/idempay.json (tests/unit/test_sim_profile.c
 * checks that both say the same). */
static const char profile_idempay_json[] =
    "{\n"
    "  \"name\": \"idempay\",\n"
    "  \"description\": \"idempay's own API (CONTRACT.md section 2, docs/API.md): the simulator's default\",\n"
    "  \"features\": {\"tokens\": true, \"idempotency_key\": true, \"callbacks\": true, \"db\": true},\n"
    "  \"statuses\": {\"PENDING\": [\"PENDING\"], \"PROCESSING\": [\"PROCESSING\", \"AWAITING_PAYMENT\"],\n"
    "               \"PAID\": [\"PAID\"], \"FAILED\": [\"FAILED\", \"CLOSED\"]},\n"
    "  \"ping\": {\"method\": \"GET\", \"path\": \"/api/ping\"},\n"
    "  \"token\": {\n"
    "    \"method\": \"GET\", \"path\": \"/api/pay/token\",\n"
    "    \"send\": {\"user_id\": \"query:user_id\"},\n"
    "    \"fields\": {\"token\": \"token\", \"expires_in\": \"expires_in\", \"error\": \"error\"}\n"
    "  },\n"
    "  \"pay\": {\n"
    "    \"method\": \"POST\", \"path\": \"/api/pay\",\n"
    "    \"send\": {\"order_no\": \"body:order_no\", \"user_id\": \"body:user_id:number\",\n"
    "             \"amount\": \"body:amount:string\", \"token\": \"body:token\",\n"
    "             \"idempotency_key\": \"header:Idempotency-Key\",\n"
    "             \"trade_type\": \"body:trade_type\", \"auth_code\": \"body:auth_code\",\n"
    "             \"openid\": \"body:openid\"},\n"
    "    \"fields\": {\"status\": \"status\", \"transaction_id\": \"transaction_id\",\n"
    "               \"amount\": \"amount\", \"error\": \"error\",\n"
    "               \"code_url\": \"code_url\", \"prepay_id\": \"prepay_id\"}\n"
    "  },\n"
    "  \"read\": {\n"
    "    \"method\": \"GET\", \"path\": \"/api/pay/orders/{order_no}\",\n"
    "    \"fields\": {\"status\": \"status\", \"user_id\": \"user_id\", \"amount\": \"amount\",\n"
    "               \"transaction_id\": \"transaction_id\", \"updated_at\": \"updated_at\",\n"
    "               \"error\": \"error\"}\n"
    "  },\n"
    "  \"callback\": {\"method\": \"POST\", \"path\": \"/api/pay/callback/wechat\"}\n"
    "}\n";

static const char *const prof_op_names[PROF_OP_COUNT] = { "pay", "read", "token", "callback",
                                                          "ping" };
static const char *const prof_value_names[PROF_VAL_COUNT] = {
    "order_no", "user_id", "amount", "token", "idempotency_key", "trade_type", "auth_code", "openid"
};
static const char *const prof_field_names[PROF_FLD_COUNT] = {
    "status",     "transaction_id", "amount",     "error",    "user_id",
    "updated_at", "token",          "expires_in", "code_url", "prepay_id"
};
static const char *const prof_status_names[OST_NONE] = { "PENDING", "PROCESSING", "PAID",
                                                         "FAILED" };

static const struct {
    const char *word;
    int code;
} prof_meanings[] = {
    { "paid", 200 },    { "processing", 202 }, { "failed", 402 },
    { "invalid", 400 }, { "refused", 403 },    { "absent", 404 },
    { "busy", 409 },    { "mismatch", 422 },   { "unknown", 500 },
};

__attribute__((format(printf, 3, 4))) static int prof_fail(char *err, size_t len, const char *fmt,
                                                           ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

static int prof_index(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return (int)i;
    return -1;
}

/* Copies a JSON string into out. 0, or -1 (not a string, empty, too long). */
static int prof_str(const json_t *v, char *out, size_t len)
{
    const char *s = json_string_value(v);
    if (s == NULL || s[0] == '\0' || strlen(s) >= len)
        return -1;
    memcpy(out, s, strlen(s) + 1);
    return 0;
}

/* Every key of o is one of known (NULL-terminated) or a comment. */
static int prof_keys(json_t *o, const char *where, const char *const *known, char *err, size_t len)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v)
    {
        int ok = strcmp(key, "description") == 0 || strcmp(key, "$comment") == 0;
        for (size_t i = 0; !ok && known[i] != NULL; i++)
            ok = strcmp(key, known[i]) == 0;
        if (!ok)
            return prof_fail(err, len, "%s: unknown key '%s'", where, key);
    }
    return 0;
}

/* ---- shared with profile_request.c and profile_answer.c ---- */

const char *profile_value_name(int value)
{
    return value >= 0 && value < PROF_VAL_COUNT ? prof_value_names[value] : NULL;
}

int profile_scalar_text(const json_t *v, char *out, size_t len)
{
    int n;
    if (json_is_string(v))
        n = snprintf(out, len, "%s", json_string_value(v));
    else if (json_is_integer(v))
        n = snprintf(out, len, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v) && fabs(json_real_value(v)) < 9e18 &&
             json_real_value(v) == (double)(long long)json_real_value(v))
        n = snprintf(out, len, "%lld", (long long)json_real_value(v));
    else if (json_is_boolean(v))
        n = snprintf(out, len, "%s", json_is_true(v) ? "true" : "false");
    else
        return -1;
    return n >= 0 && (size_t)n < len ? 0 : -1;
}

json_t *profile_json_at(json_t *v, const char *path)
{
    char seg[PROFILE_FIELD_MAX];
    const char *p = path;
    if (strcmp(path, ".") == 0)
        return v;
    while (v != NULL && *p) {
        size_t n = strcspn(p, ".");
        if (n == 0 || n >= sizeof(seg))
            return NULL;
        memcpy(seg, p, n);
        seg[n] = '\0';
        p += n + (p[n] == '.');
        if (json_is_object(v)) {
            v = json_object_get(v, seg);
        } else if (json_is_array(v) && strspn(seg, "0123456789") == n && n < 6) {
            v = json_array_get(v, (size_t)atoi(seg));
        } else {
            v = NULL;
        }
    }
    return v;
}

/* ---- one request value: "where:name[:as]" ---- */

static int prof_slot_as(int value, const char *as, profile_slot *s)
{
    if (strcmp(as, "string") == 0)
        s->as = PROF_AS_STRING;
    else if (strcmp(as, "number") == 0 && (value == PROF_VAL_USER_ID || value == PROF_VAL_AMOUNT))
        s->as = PROF_AS_NUMBER;
    else if (strcmp(as, "fen") == 0 && value == PROF_VAL_AMOUNT)
        s->as = PROF_AS_FEN;
    else
        return -1;
    return 0;
}

static int prof_slot(int value, const json_t *v, profile_slot *s, const char *where, char *err,
                     size_t len)
{
    char spec[PROFILE_FIELD_MAX + 32];
    if (prof_str(v, spec, sizeof(spec)) < 0)
        return prof_fail(err, len,
                         "%s: needs \"body:NAME\", \"query:NAME\" or \"header:NAME\" "
                         "(optionally \":string\", \":number\", \":fen\")",
                         where);
    char *name = strchr(spec, ':');
    char *as = name ? strchr(name + 1, ':') : NULL;
    if (name == NULL || name[1] == '\0' || (as != NULL && as == name + 1))
        return prof_fail(err, len, "%s: '%s' is not PLACE:NAME", where, spec);
    *name++ = '\0';
    if (as != NULL)
        *as++ = '\0';
    int in = strcmp(spec, "body") == 0     ? PROF_IN_BODY
             : strcmp(spec, "query") == 0  ? PROF_IN_QUERY
             : strcmp(spec, "header") == 0 ? PROF_IN_HEADER
                                           : PROF_IN_NONE;
    if (in == PROF_IN_NONE)
        return prof_fail(err, len, "%s: unknown place '%s' (body, query, header)", where, spec);
    if (as != NULL && prof_slot_as(value, as, s) < 0)
        return prof_fail(err, len, "%s: '%s' cannot be written as '%s'", where,
                         prof_value_names[value], as);
    if (in == PROF_IN_HEADER && strpbrk(name, " \t\r\n:()<>@,;\\\"/[]?={}") != NULL)
        return prof_fail(err, len, "%s: '%s' is not a header name", where, name);
    if (in == PROF_IN_BODY &&
        (name[0] == '.' || strstr(name, "..") != NULL || name[strlen(name) - 1] == '.'))
        return prof_fail(err, len, "%s: '%s' has an empty path segment", where, name);
    if (strlen(name) >= sizeof(s->name))
        return prof_fail(err, len, "%s: the name is longer than %d characters", where,
                         PROFILE_FIELD_MAX - 1);
    s->in = (uint8_t)in;
    memcpy(s->name, name, strlen(name) + 1);
    return 0;
}

static int prof_send(json_t *o, profile_endpoint *ep, const char *op, char *err, size_t len)
{
    const char *key;
    json_t *v;
    char where[64];
    if (!json_is_object(o))
        return prof_fail(err, len, "%s.send: needs an object", op);
    json_object_foreach(o, key, v)
    {
        int value = prof_index(prof_value_names, PROF_VAL_COUNT, key);
        snprintf(where, sizeof(where), "%s.send.%s", op, key);
        if (value < 0)
            return prof_fail(err, len,
                             "%s: unknown value (order_no, user_id, amount, token, "
                             "idempotency_key, trade_type, auth_code, openid)",
                             where);
        if (prof_slot(value, v, &ep->send[value], where, err, len) < 0)
            return -1;
    }
    return 0;
}

static int prof_fields(json_t *o, profile_endpoint *ep, const char *op, char *err, size_t len)
{
    const char *key;
    json_t *v;
    if (!json_is_object(o))
        return prof_fail(err, len, "%s.fields: needs an object", op);
    json_object_foreach(o, key, v)
    {
        int f = prof_index(prof_field_names, PROF_FLD_COUNT, key);
        if (f < 0)
            return prof_fail(err, len,
                             "%s.fields.%s: unknown field (status, transaction_id, "
                             "amount, error, user_id, updated_at, token, expires_in, code_url, "
                             "prepay_id)",
                             op, key);
        if (prof_str(v, ep->field[f], sizeof(ep->field[f])) < 0)
            return prof_fail(err, len, "%s.fields.%s: needs a JSON path like \"data.status\"", op,
                             key);
    }
    return 0;
}

/* ---- answer rules ---- */

static int prof_rule_http(json_t *v, profile_rule *r, const char *where, char *err, size_t len)
{
    json_t *one = json_is_array(v) ? NULL : v;
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    if (n == 0 || n > PROFILE_RULE_VALUES)
        return prof_fail(err, len, "%s.http: 1 to %d codes", where, PROFILE_RULE_VALUES);
    for (size_t i = 0; i < n; i++) {
        json_t *c = one ? one : json_array_get(v, i);
        if (!json_is_integer(c) || json_integer_value(c) < 100 || json_integer_value(c) > 599)
            return prof_fail(err, len, "%s.http: HTTP status codes (100-599)", where);
        r->http[r->nhttp++] = (int)json_integer_value(c);
    }
    return 0;
}

static int prof_rule_codes(json_t *v, profile_rule *r, const char *where, char *err, size_t len)
{
    json_t *one = json_is_array(v) ? NULL : v;
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    if (n == 0 || n > PROFILE_RULE_VALUES)
        return prof_fail(err, len, "%s.code: 1 to %d values", where, PROFILE_RULE_VALUES);
    for (size_t i = 0; i < n; i++) {
        json_t *c = one ? one : json_array_get(v, i);
        if (profile_scalar_text(c, r->codes[r->ncodes], PROFILE_NAME_MAX) < 0)
            return prof_fail(err, len, "%s.code: strings or integers", where);
        r->ncodes++;
    }
    return 0;
}

static int prof_rule(json_t *o, profile_rule *r, const char *where, char *err, size_t len)
{
    static const char *const known[] = { "http", "code", "means", "error", NULL };
    json_t *http = json_object_get(o, "http"), *code = json_object_get(o, "code");
    const char *means = json_string_value(json_object_get(o, "means"));
    json_t *error = json_object_get(o, "error");
    if (!json_is_object(o))
        return prof_fail(err, len, "%s: needs an object", where);
    if (prof_keys(o, where, known, err, len) < 0)
        return -1;
    if (http == NULL && code == NULL)
        return prof_fail(err, len, "%s: needs \"http\" or \"code\"", where);
    if ((http && prof_rule_http(http, r, where, err, len) < 0) ||
        (code && prof_rule_codes(code, r, where, err, len) < 0))
        return -1;
    for (size_t i = 0; means != NULL && i < sizeof(prof_meanings) / sizeof(prof_meanings[0]); i++)
        if (strcmp(means, prof_meanings[i].word) == 0)
            r->means = prof_meanings[i].code;
    if (r->means == 0)
        return prof_fail(err, len,
                         "%s.means: one of paid, processing, failed, invalid, "
                         "refused, absent, busy, mismatch, unknown",
                         where);
    if (error != NULL && prof_str(error, r->error, sizeof(r->error)) < 0)
        return prof_fail(err, len, "%s.error: a name of at most %d characters", where,
                         SIM_ERR_MAX - 1);
    return 0;
}

static int prof_rules(json_t *a, profile_rule *rules, size_t *n, const char *where, char *err,
                      size_t len)
{
    char at[80];
    if (!json_is_array(a) || json_array_size(a) > PROFILE_RULES_MAX)
        return prof_fail(err, len, "%s: a list of at most %d rules", where, PROFILE_RULES_MAX);
    for (size_t i = 0; i < json_array_size(a); i++) {
        snprintf(at, sizeof(at), "%s[%zu]", where, i);
        if (prof_rule(json_array_get(a, i), &rules[i], at, err, len) < 0)
            return -1;
        *n = i + 1;
    }
    return 0;
}

/* ---- one operation ---- */

/* Path placeholders {order_no} ... become PROF_IN_PATH slots. */
static int prof_path(profile_endpoint *ep, const char *op, char *err, size_t len)
{
    const char *p = ep->path;
    if (p[0] != '/' || strpbrk(p, " \t\r\n?#") != NULL)
        return prof_fail(err, len, "%s.path: '%s' must start with / and have no spaces, ? or #", op,
                         p);
    while ((p = strchr(p, '{')) != NULL) {
        const char *end = strchr(p, '}');
        char name[32];
        if (end == NULL || (size_t)(end - p - 1) >= sizeof(name))
            return prof_fail(err, len, "%s.path: unclosed or overlong placeholder", op);
        memcpy(name, p + 1, (size_t)(end - p - 1));
        name[end - p - 1] = '\0';
        int value = prof_index(prof_value_names, PROF_VAL_COUNT, name);
        if (value < 0 || value == PROF_VAL_AMOUNT || value == PROF_VAL_IDEM_KEY)
            return prof_fail(err, len,
                             "%s.path: unknown placeholder {%s} ({order_no}, "
                             "{user_id}, {token})",
                             op, name);
        if (ep->send[value].in != PROF_IN_NONE)
            return prof_fail(err, len, "%s: %s is in the path and in send", op, name);
        ep->send[value].in = PROF_IN_PATH;
        p = end + 1;
    }
    return 0;
}

static int prof_method(json_t *m, profile_endpoint *ep, int op, char *err, size_t len)
{
    static const char *const methods[] = { "GET", "POST", "PUT", "PATCH", "DELETE" };
    const char *s = m                                               ? json_string_value(m)
                    : (op == PROF_OP_PAY || op == PROF_OP_CALLBACK) ? "POST"
                                                                    : "GET";
    if (s == NULL || prof_index(methods, 5, s) < 0)
        return prof_fail(err, len, "%s.method: GET, POST, PUT, PATCH or DELETE", prof_op_names[op]);
    snprintf(ep->method, sizeof(ep->method), "%s", s);
    return 0;
}

static int prof_endpoint(json_t *o, profile_endpoint *ep, int op, char *err, size_t len)
{
    static const char *const known[] = { "method", "path", "send", "fields", "answers", NULL };
    const char *name = prof_op_names[op];
    json_t *send = json_object_get(o, "send"), *fields = json_object_get(o, "fields");
    json_t *answers = json_object_get(o, "answers");
    char where[32];
    if (!json_is_object(o))
        return prof_fail(err, len, "%s: needs an object", name);
    if (prof_keys(o, name, known, err, len) < 0 ||
        prof_method(json_object_get(o, "method"), ep, op, err, len) < 0)
        return -1;
    if (prof_str(json_object_get(o, "path"), ep->path, sizeof(ep->path)) < 0)
        return prof_fail(err, len, "%s.path: needs a path like \"/api/pay\"", name);
    if ((send && prof_send(send, ep, name, err, len) < 0) || prof_path(ep, name, err, len) < 0 ||
        (fields && prof_fields(fields, ep, name, err, len) < 0))
        return -1;
    snprintf(where, sizeof(where), "%s.answers", name);
    if (answers && prof_rules(answers, ep->rules, &ep->nrules, where, err, len) < 0)
        return -1;
    ep->present = 1;
    return 0;
}

/* ---- the top level ---- */

static int prof_features(json_t *o, sim_profile *p, char *err, size_t len)
{
    static const char *const names[] = { "tokens", "idempotency_key", "callbacks", "db" };
    const char *key;
    json_t *v;
    if (!json_is_object(o))
        return prof_fail(err, len, "features: needs an object of booleans");
    json_object_foreach(o, key, v)
    {
        int f = prof_index(names, 4, key);
        if (f < 0 || !json_is_boolean(v))
            return prof_fail(err, len, "features.%s: %s", key,
                             f < 0 ? "unknown feature (tokens, idempotency_key, callbacks, db)"
                                   : "needs true or false");
        if (json_is_true(v))
            p->features |= 1u << f;
    }
    return 0;
}

/* Whether spelling s is already taken by a status. */
static int prof_spelled(const sim_profile *p, const char *s)
{
    for (int st = 0; st < OST_NONE; st++)
        for (size_t i = 0; i < p->nspellings[st]; i++)
            if (strcmp(p->spelling[st][i], s) == 0)
                return 1;
    return 0;
}

static int prof_statuses(json_t *o, sim_profile *p, char *err, size_t len)
{
    const char *key;
    json_t *v;
    if (!json_is_object(o))
        return prof_fail(err, len, "statuses: needs an object");
    json_object_foreach(o, key, v)
    {
        int st = prof_index(prof_status_names, OST_NONE, key);
        if (st < 0)
            return prof_fail(err, len,
                             "statuses.%s: unknown (PENDING, PROCESSING, PAID, "
                             "FAILED)",
                             key);
        if (!json_is_array(v) || json_array_size(v) == 0 ||
            json_array_size(v) > PROFILE_SPELLINGS_MAX)
            return prof_fail(err, len, "statuses.%s: a list of 1 to %d spellings", key,
                             PROFILE_SPELLINGS_MAX);
        for (size_t i = 0; i < json_array_size(v); i++) {
            char *s = p->spelling[st][i];
            if (profile_scalar_text(json_array_get(v, i), s, PROFILE_NAME_MAX) < 0)
                return prof_fail(err, len, "statuses.%s: strings or integers", key);
            if (prof_spelled(p, s))
                return prof_fail(err, len, "statuses.%s: '%s' spells two statuses", key, s);
            p->nspellings[st] = i + 1;
        }
    }
    return 0;
}

static int prof_top(json_t *j, sim_profile *p, char *err, size_t len)
{
    static const char *const known[] = { "name",     "features", "statuses", "body_code",
                                         "answers",  "pay",      "read",     "token",
                                         "callback", "ping",     NULL };
    json_t *v;
    if (!json_is_object(j))
        return prof_fail(err, len, "a profile is a JSON object");
    if (prof_keys(j, "profile", known, err, len) < 0)
        return -1;
    if (prof_str(json_object_get(j, "name"), p->name, sizeof(p->name)) < 0)
        return prof_fail(err, len, "name: needs a name of 1 to %d characters",
                         PROFILE_NAME_MAX - 1);
    if ((v = json_object_get(j, "features")) != NULL && prof_features(v, p, err, len) < 0)
        return -1;
    if (prof_statuses(json_object_get(j, "statuses"), p, err, len) < 0)
        return -1;
    if ((v = json_object_get(j, "body_code")) != NULL &&
        prof_str(v, p->body_code, sizeof(p->body_code)) < 0)
        return prof_fail(err, len, "body_code: needs a JSON path like \"code\"");
    if ((v = json_object_get(j, "answers")) != NULL &&
        prof_rules(v, p->rules, &p->nrules, "answers", err, len) < 0)
        return -1;
    for (int op = 0; op < PROF_OP_COUNT; op++)
        if ((v = json_object_get(j, prof_op_names[op])) != NULL &&
            prof_endpoint(v, &p->ep[op], op, err, len) < 0)
            return -1;
    return 0;
}

/* ---- what the profile must have ---- */

static int prof_check_ops(const sim_profile *p, char *err, size_t len)
{
    const profile_endpoint *pay = &p->ep[PROF_OP_PAY], *read = &p->ep[PROF_OP_READ];
    if (!pay->present || !read->present)
        return prof_fail(err, len, "%s: the operation is required", pay->present ? "read" : "pay");
    for (int v = PROF_VAL_ORDER_NO; v <= PROF_VAL_AMOUNT; v++)
        if (pay->send[v].in == PROF_IN_NONE)
            return prof_fail(err, len, "pay.send.%s: required", prof_value_names[v]);
    if (read->send[PROF_VAL_ORDER_NO].in == PROF_IN_NONE)
        return prof_fail(err, len, "read: needs order_no (send or a {order_no} in the path)");
    if (!pay->field[PROF_FLD_STATUS][0] || !read->field[PROF_FLD_STATUS][0])
        return prof_fail(err, len, "%s.fields.status: required",
                         pay->field[PROF_FLD_STATUS][0] ? "read" : "pay");
    for (int op = 0; op < PROF_OP_COUNT; op++) {
        const profile_endpoint *ep = &p->ep[op];
        int nobody = strcmp(ep->method, "GET") == 0 || strcmp(ep->method, "DELETE") == 0;
        for (int v = 0; ep->present && nobody && v < PROF_VAL_COUNT; v++)
            if (ep->send[v].in == PROF_IN_BODY)
                return prof_fail(err, len, "%s.send.%s: a %s has no body", prof_op_names[op],
                                 prof_value_names[v], ep->method);
    }
    return 0;
}

/* A feature and what it needs agree: both there, or neither. */
static int prof_check_feature(const sim_profile *p, unsigned feat, int has, const char *feature,
                              const char *needs, char *err, size_t len)
{
    int on = (p->features & feat) != 0;
    if (on && !has)
        return prof_fail(err, len, "features.%s is true but %s is missing", feature, needs);
    if (!on && has)
        return prof_fail(err, len, "%s is given but features.%s is not true", needs, feature);
    return 0;
}

static int prof_check(const sim_profile *p, char *err, size_t len)
{
    const profile_endpoint *tok = &p->ep[PROF_OP_TOKEN], *pay = &p->ep[PROF_OP_PAY];
    int pay_token = pay->send[PROF_VAL_TOKEN].in != PROF_IN_NONE;
    int tokens = tok->present && tok->send[PROF_VAL_USER_ID].in != PROF_IN_NONE &&
                 tok->field[PROF_FLD_TOKEN][0] && pay_token;
    if (prof_check_ops(p, err, len) < 0)
        return -1;
    for (int st = OST_PROCESSING; st <= OST_FAILED; st++)
        if (p->nspellings[st] == 0)
            return prof_fail(err, len, "statuses.%s: required", prof_status_names[st]);
    if ((p->features & PROF_FEAT_TOKENS) && !tokens)
        return prof_fail(err, len,
                         "features.tokens needs the token operation (with send.user_id "
                         "and fields.token) and pay.send.token");
    if (prof_check_feature(p, PROF_FEAT_TOKENS, tok->present || pay_token, "tokens",
                           "the token operation or pay.send.token", err, len) < 0 ||
        prof_check_feature(p, PROF_FEAT_IDEM_KEY, pay->send[PROF_VAL_IDEM_KEY].in != PROF_IN_NONE,
                           "idempotency_key", "pay.send.idempotency_key", err, len) < 0 ||
        prof_check_feature(p, PROF_FEAT_CALLBACKS, p->ep[PROF_OP_CALLBACK].present, "callbacks",
                           "the callback operation", err, len) < 0)
        return -1;
    return 0;
}

/* ---- public ---- */

sim_profile *profile_parse(const char *text, size_t len, char *err, size_t errlen)
{
    json_error_t je;
    sim_profile *p = NULL;
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (j == NULL) {
        prof_fail(err, errlen, "not JSON: line %d: %s", je.line, je.text);
        return NULL;
    }
    p = calloc(1, sizeof(*p));
    if (p == NULL)
        prof_fail(err, errlen, "out of memory");
    else if (prof_top(j, p, err, errlen) < 0 || prof_check(p, err, errlen) < 0) {
        free(p);
        p = NULL;
    }
    json_decref(j);
    return p;
}

sim_profile *profile_load(const char *path, char *err, size_t errlen)
{
    char why[400];
    char *text = NULL;
    size_t n = 0;
    FILE *f = fopen(path, "r");
    sim_profile *p = NULL;
    if (f == NULL) {
        prof_fail(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    text = malloc(PROFILE_FILE_MAX + 1);
    if (text != NULL)
        n = fread(text, 1, PROFILE_FILE_MAX + 1, f);
    if (text == NULL || ferror(f) || n > PROFILE_FILE_MAX)
        prof_fail(err, errlen, "%s: %s", path,
                  text == NULL ? "out of memory"
                  : ferror(f)  ? "read error"
                               : "larger than 64 KiB");
    else if ((p = profile_parse(text, n, why, sizeof(why))) == NULL)
        prof_fail(err, errlen, "%s: %s", path, why);
    fclose(f);
    free(text);
    return p;
}

void profile_free(sim_profile *p)
{
    free(p);
}

static sim_profile prof_builtin;
static pthread_once_t prof_builtin_once = PTHREAD_ONCE_INIT;

static void prof_builtin_init(void)
{
    char err[256];
    sim_profile *p = profile_parse(profile_idempay_json, sizeof(profile_idempay_json) - 1, err,
                                   sizeof(err));
    if (p == NULL) { /* a broken built-in text is a bug of this file */
        fprintf(stderr, "idempay-sim: built-in profile: %s\n", err);
        abort();
    }
    memcpy(&prof_builtin, p, sizeof(prof_builtin));
    free(p);
}

const sim_profile *profile_builtin(void)
{
    pthread_once(&prof_builtin_once, prof_builtin_init);
    return &prof_builtin;
}

const char *profile_builtin_text(void)
{
    return profile_idempay_json;
}

int profile_has(const sim_profile *p, unsigned features)
{
    return (p->features & features) == features;
}

/* A need of profile_runnable that is no feature: pay names its flow. */
#define PROF_NEED_FLOWS 0x80000000u
/* ... and one that is idempay's own API (the merchant refund API the refunds scenario
 * speaks to, docs/API.md, has no profile operation). */
#define PROF_NEED_IDEMPAY 0x40000000u

unsigned profile_runnable(const sim_profile *p, unsigned mask, char *note, size_t notelen)
{
    static const struct {
        int scenario;
        unsigned feature; /* 0: the ping operation */
        const char *why;
    } needs[] = {
        { SC_CALLBACK_STORM, PROF_FEAT_CALLBACKS, "no callbacks" },
        { SC_TOKEN_REPLAY, PROF_FEAT_TOKENS, "no tokens" },
        { SC_FORGED_CALLBACK, PROF_FEAT_CALLBACKS, "no callbacks" },
        { SC_PING, 0, "no ping operation" },
        { SC_PAYER, PROF_NEED_FLOWS, "pay sends no trade_type" },
        { SC_PAYER_EDGE, PROF_NEED_FLOWS, "pay sends no trade_type" },
        { SC_REFUNDS, PROF_NEED_IDEMPAY, "not idempay's merchant refund API" },
    };
    size_t used = 0;
    if (notelen > 0)
        note[0] = '\0';
    for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
        unsigned bit = 1u << needs[i].scenario;
        int has = needs[i].feature == PROF_NEED_FLOWS
                      ? p->ep[PROF_OP_PAY].send[PROF_VAL_TRADE_TYPE].in != PROF_IN_NONE
                  : needs[i].feature == PROF_NEED_IDEMPAY
                      ? strcmp(p->name, profile_builtin()->name) == 0
                  : needs[i].feature ? profile_has(p, needs[i].feature)
                                     : p->ep[PROF_OP_PING].present;
        if (!(mask & bit) || has)
            continue;
        mask &= ~bit;
        int n = snprintf(note + used, notelen - used, "%s%s (%s)", used ? ", " : "",
                         sched_scenario_name(needs[i].scenario), needs[i].why);
        if (n > 0 && used + (size_t)n < notelen)
            used += (size_t)n;
    }
    return mask;
}
