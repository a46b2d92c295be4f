/* args - idempay-sim's command line: one table of options (name, value
 * type, bounds, where it goes in sim_args, its help), from which parsing
 * and the usage text both come. Adding an option is one row (and its field
 * in sim_args). Unset options keep the defaults: target and gateway from
 * IDEMPAY_HTTP_PORT / IDEMPAY_MOCK_PORT, a seed from the time and the OS
 * random source, a unique order prefix. */
#ifndef IDEMPAY_SIM_ARGS_H
#define IDEMPAY_SIM_ARGS_H

#include <stdint.h>
#include <stdio.h>

#include "run.h"

typedef enum {
    ARGS_RUN = 0,  /* parsed: run the simulator */
    ARGS_DONE = 1, /* --help or --version was printed on stdout: exit 0 */
    ARGS_BAD = 2   /* bad arguments, said on stderr: exit 2 */
} args_result;

/* Parses argv into a (all of it overwritten); loads --profile and
 * --scenario-file (the caller frees a->profile and a->scenario_file). */
args_result args_parse(int argc, char **argv, sim_args *a);
/* How many of --json, --junit, --history write to stdout ('-'). */
int args_stdout_reports(int argc, char **argv);
/* The usage text (synopsis and one entry per option). */
void args_usage(FILE *out);
/* 64 bits from the clock, the pid and the OS random source. */
uint64_t args_entropy(void);
/* A new order prefix: 's' and 7 random base-36 characters. */
void args_make_prefix(char out[SCHED_PREFIX_MAX + 1]);

#endif
