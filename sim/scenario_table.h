/* scenario_table - the simulator's scenarios, one row each:
 *
 *     X(ID, name, code, weight, generate, flags)
 *
 * ID gives the enum constant SC_<ID> (schedule.h); name is how the command
 * line, the report and scenario files spell it; code the two letters that
 * start its order numbers (unique); weight its share of a mix's orders and
 * time; generate its generator (scenarios.h: the one signature every
 * generator has, declared there from this row); flags (SCF_*) how it takes
 * part in a mix. The row order is the contract's order, in which a run
 * builds its scenarios, and each row's place is its bit in a --scenario mask
 * and in the digest: append a new scenario at the end, so that the
 * schedules (and digests) of the others stay the same. Adding a scenario is
 * one row here plus its generator (docs/SIMULATOR.md, "Adding a scenario"). */
#ifndef IDEMPAY_SIM_SCENARIO_TABLE_H
#define IDEMPAY_SIM_SCENARIO_TABLE_H

/* flags */
#define SCF_IN_ALL 0x01u      /* part of --scenario all */
#define SCF_NEEDS_CHAOS 0x02u /* needs --chaos-cmd (in all only with one) */
#define SCF_NO_ORDERS 0x04u   /* takes no share of the orders */
#define SCF_OWN_LENGTH 0x08u  /* takes no share of the duration: its length is its own */

#define SIM_SCENARIOS(X)                                                                           \
    X(DOUBLE_CLICK, "double-click", "dc", 22, gen_double_click, SCF_IN_ALL)                        \
    X(RETRY_STORM, "retry-storm", "rs", 10, gen_retry_storm, SCF_IN_ALL)                           \
    X(CALLBACK_STORM, "callback-storm", "cs", 15, gen_callback_storm, SCF_IN_ALL)                  \
    X(TOKEN_REPLAY, "token-replay", "tr", 12, gen_token_replay, SCF_IN_ALL)                        \
    X(FORGED_CALLBACK, "forged-callback", "fc", 6, gen_forged_callback, SCF_IN_ALL)                \
    X(ORDER_MISMATCH, "order-mismatch", "om", 8, gen_order_mismatch, SCF_IN_ALL)                   \
    X(GATEWAY_CHAOS, "gateway-chaos", "gc", 17, gen_gateway_chaos, SCF_IN_ALL)                     \
    X(CRASH, "crash", "cr", 10, gen_crash, SCF_IN_ALL | SCF_NEEDS_CHAOS)                           \
    /* the length of the nemesis follows the service's windows */                                  \
    X(NEMESIS, "nemesis", "nm", 8, gen_nemesis, SCF_IN_ALL | SCF_OWN_LENGTH)                       \
    X(PING, "ping", "pg", 10, gen_ping, SCF_NO_ORDERS)                                             \
    /* the real flows' customer (not in all: its draws would change the digests) */                \
    X(PAYER, "payer", "py", 10, gen_payer, 0)                                                      \
    /* the real flows' edges: payments across a refused close, reloads, payment codes              \
     * that stay USERPAYING */                                                                     \
    X(PAYER_EDGE, "payer-edge", "pe", 8, gen_payer_edge, 0)                                        \
    /* merchant refunds: twice, concurrent, partial and full, with the mock's refund               \
     * faults */                                                                                   \
    X(REFUNDS, "refunds", "rf", 8, gen_refunds, 0)                                                 \
    /* APIv3 notifications that must change nothing, the platform key rotated mid-run              \
     * (scenario_v3.h; --gateway v3 only) */                                                       \
    X(V3_ATTACKS, "v3-attacks", "v3", 6, gen_v3_attacks, 0)

#endif
