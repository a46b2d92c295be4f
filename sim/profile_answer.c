/* profile_answer.c - reads a service's answer through a target profile
 * (profile.h): the fields at the profile's JSON paths, the status by its
 * spellings, and the answer's meaning as an idempay HTTP code (rules first,
 * then the status of a 2xx answer, else the HTTP code itself). */
#include "profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "money.h"
#include "text_copy.h"

/* The field f of the answer as text ("" when absent or not a scalar). */
static int pans_text(const profile_endpoint *ep, json_t *j, int f, char *out, size_t len)
{
    char buf[512];
    json_t *v = ep->field[f][0] ? profile_json_at(j, ep->field[f]) : NULL;
    out[0] = '\0';
    if (v == NULL || profile_scalar_text(v, buf, sizeof(buf)) < 0)
        return -1;
    (void)text_copy(out, len, buf);
    return 0;
}

static uint8_t pans_status(const sim_profile *p, const char *text)
{
    for (int st = 0; st < OST_NONE; st++)
        for (size_t i = 0; i < p->nspellings[st]; i++)
            if (strcmp(p->spelling[st][i], text) == 0)
                return (uint8_t)st;
    return OST_NONE;
}

/* An amount: decimal yuan text, or a JSON number of yuan. -1 when neither. */
static int64_t pans_amount(const profile_endpoint *ep, json_t *j)
{
    json_t *v = ep->field[PROF_FLD_AMOUNT][0] ? profile_json_at(j, ep->field[PROF_FLD_AMOUNT])
                                              : NULL;
    int64_t fen;
    if (json_is_string(v))
        return money_parse_yuan(json_string_value(v), &fen) == 0 ? fen : -1;
    if (!json_is_number(v))
        return -1;
    double cents = json_number_value(v) * 100.0;
    if (!(cents >= 1.0 && cents < 1e13) || fabs(cents - round(cents)) > 1e-6)
        return -1;
    return (int64_t)llround(cents);
}

static void pans_fields(const sim_profile *p, const profile_endpoint *ep, json_t *j,
                        profile_answer *out)
{
    char text[PROFILE_NAME_MAX], num[32];
    if (pans_text(ep, j, PROF_FLD_STATUS, text, sizeof(text)) == 0)
        out->status = pans_status(p, text);
    pans_text(ep, j, PROF_FLD_TXN, out->txn, sizeof(out->txn));
    pans_text(ep, j, PROF_FLD_ERROR, out->error, sizeof(out->error));
    pans_text(ep, j, PROF_FLD_UPDATED_AT, out->updated_at, sizeof(out->updated_at));
    pans_text(ep, j, PROF_FLD_CODE_URL, out->code_url, sizeof(out->code_url));
    pans_text(ep, j, PROF_FLD_PREPAY_ID, out->prepay_id, sizeof(out->prepay_id));
    if (pans_text(ep, j, PROF_FLD_USER_ID, num, sizeof(num)) == 0)
        out->user_id = strtoll(num, NULL, 10);
    out->amount_fen = pans_amount(ep, j);
    json_t *tok = ep->field[PROF_FLD_TOKEN][0] ? profile_json_at(j, ep->field[PROF_FLD_TOKEN])
                                               : NULL;
    if (json_is_string(tok) && strlen(json_string_value(tok)) < sizeof(out->token))
        memcpy(out->token, json_string_value(tok), strlen(json_string_value(tok)) + 1);
    json_t *expires = ep->field[PROF_FLD_EXPIRES_IN][0]
                          ? profile_json_at(j, ep->field[PROF_FLD_EXPIRES_IN])
                          : NULL;
    if (json_is_integer(expires))
        out->expires_in = (long)json_integer_value(expires);
}

static int pans_rule_matches(const profile_rule *r, long http_code, const char *code, int has_code)
{
    int http_ok = r->nhttp == 0, code_ok = r->ncodes == 0;
    for (size_t i = 0; !http_ok && i < r->nhttp; i++)
        http_ok = r->http[i] == http_code;
    for (size_t i = 0; !code_ok && has_code && i < r->ncodes; i++)
        code_ok = strcmp(r->codes[i], code) == 0;
    return http_ok && code_ok;
}

/* The first matching rule of rules[0..n), or NULL. */
static const profile_rule *pans_rule(const profile_rule *rules, size_t n, long http_code,
                                     const char *code, int has_code)
{
    for (size_t i = 0; i < n; i++)
        if (pans_rule_matches(&rules[i], http_code, code, has_code))
            return &rules[i];
    return NULL;
}

/* The meaning of the answer (see profile_answer_read). */
static int pans_code(const sim_profile *p, profile_op op, long http_code, json_t *j,
                     profile_answer *out)
{
    char code[PROFILE_NAME_MAX];
    json_t *c = j != NULL && p->body_code[0] ? profile_json_at(j, p->body_code) : NULL;
    int has_code = c != NULL && profile_scalar_text(c, code, sizeof(code)) == 0;
    const profile_rule *r = pans_rule(p->ep[op].rules, p->ep[op].nrules, http_code, code, has_code);
    if (r == NULL)
        r = pans_rule(p->rules, p->nrules, http_code, code, has_code);
    if (r != NULL) {
        if (r->error[0])
            (void)text_copy(out->error, sizeof(out->error), r->error);
        return r->means;
    }
    if ((op != PROF_OP_PAY && op != PROF_OP_READ) || http_code < 200 || http_code > 299)
        return (int)http_code;
    switch (out->status) {
    case OST_PAID:
        return 200;
    case OST_PENDING:
    case OST_PROCESSING:
        return op == PROF_OP_READ ? 200 : 202;
    case OST_FAILED:
        return op == PROF_OP_READ ? 200 : 402;
    default:
        return 500;
    }
}

void profile_answer_read(const sim_profile *p, profile_op op, long http_code, const char *body,
                         size_t len, profile_answer *out)
{
    json_t *j = NULL;
    memset(out, 0, sizeof(*out));
    out->status = OST_NONE;
    out->amount_fen = -1;
    out->code = (int)http_code;
    if ((unsigned)op >= PROF_OP_COUNT || !p->ep[op].present)
        return;
    if (len > 0) {
        j = json_loadb(body, len, 0, NULL);
        if (j == NULL)
            (void)text_copy(out->error, sizeof(out->error), "unparseable body");
        else
            pans_fields(p, &p->ep[op], j, out);
    }
    out->code = pans_code(p, op, http_code, j, out);
    json_decref(j);
}

int profile_answer_row(const profile_answer *a, sim_row *row)
{
    memset(row, 0, sizeof(*row));
    row->status = OST_NONE;
    row->amount_fen = -1;
    if (a->code == 404) {
        row->state = ROW_ABSENT;
        return 0;
    }
    if (a->code != 200 || a->status == OST_NONE) {
        row->state = ROW_ERROR;
        return -1;
    }
    row->state = ROW_PRESENT;
    row->status = a->status;
    row->user_id = a->user_id;
    row->amount_fen = a->amount_fen;
    (void)text_copy(row->transaction_id, sizeof(row->transaction_id), a->txn);
    (void)text_copy(row->updated_at, sizeof(row->updated_at), a->updated_at);
    return 1;
}
