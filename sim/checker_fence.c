/* checker_fence.c - the fence against the service's own calls: no close or
 * reverse of an out_trade_no reaches the gateway while that out_trade_no's
 * payment call is still there and the service has not yet given up on it
 * (less than its gateway timeout since the call arrived). A service whose
 * lease is shorter than its calls fences an attempt that its own request
 * still waits for: the customer's payment is reversed, or the prepay closed,
 * under a request that would have been answered (checker.h). Judged from the
 * mock's journal (obs->calls); nothing when it was not read. */
#include "checker.h"
#include "checker_int.h"

#include <stdlib.h>
#include <string.h>

#include "gateway_calls.h"

/* A fence this close to the timeout is not judged (the call's arrival at
 * the mock and the service's own start differ by the connection's setup). */
#define CHK_FENCE_SLACK_US 250000

/* Orders calls by out_trade_no, then arrival (qsort over pointers). */
static int chk_fence_cmp(const void *a, const void *b)
{
    const sim_gwcall *x = *(const sim_gwcall *const *)a;
    const sim_gwcall *y = *(const sim_gwcall *const *)b;
    int c = strcmp(x->out_trade_no, y->out_trade_no);
    if (c != 0)
        return c;
    return x->at_us < y->at_us ? -1 : x->at_us > y->at_us;
}

/* The fence v[f] against the payment calls before it in its group [a, f). */
static void chk_fence_one(chk_ctx *c, const sim_gwcall *const *v, size_t a, size_t f,
                          int64_t timeout_us)
{
    const sim_gwcall *fc = v[f];
    for (size_t k = a; k < f; k++) {
        const sim_gwcall *p = v[k];
        int64_t d = fc->at_us - p->at_us;
        if (p->fence != GWCALL_PAY || d < 0 || d >= p->latency_us ||
            d + CHK_FENCE_SLACK_US >= timeout_us)
            continue;
        chk_violate(c, INV_NO_FENCE_WITHIN_CALL, fc->order, -1, -1,
                    "%s of %s at %.3f s, %.3f s after its %s arrived (answered %.3f s after it; "
                    "gateway timeout %.3f s)",
                    fc->endpoint, fc->out_trade_no, chk_s(fc->at_us), chk_s(d), p->endpoint,
                    chk_s(p->latency_us), chk_s(timeout_us));
        return;
    }
}

void chk_no_fence_within_call(chk_ctx *c)
{
    const sim_observations *o = c->o;
    if (o->calls == NULL || o->ncalls == 0 || o->gateway_timeout_us <= 0)
        return;
    const sim_gwcall **v = malloc(o->ncalls * sizeof(*v));
    if (v == NULL) {
        c->oom = 1;
        return;
    }
    for (size_t i = 0; i < o->ncalls; i++)
        v[i] = &o->calls[i];
    qsort(v, o->ncalls, sizeof(*v), chk_fence_cmp);
    for (size_t a = 0, b; a < o->ncalls; a = b) {
        for (b = a + 1; b < o->ncalls && strcmp(v[b]->out_trade_no, v[a]->out_trade_no) == 0; b++)
            ;
        for (size_t f = a; f < b; f++)
            if (v[f]->fence == GWCALL_FENCE)
                chk_fence_one(c, v, a, f, o->gateway_timeout_us);
    }
    free(v);
}
