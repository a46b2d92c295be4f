/* harness.h - what idempay's libFuzzer harnesses share: the development
 * merchant credentials (the documented dev key, never a real one), a
 * property check that aborts - so libFuzzer saves the input as a crash - and
 * small helpers on inputs and WeChat messages. Header-only, static inline. */
#ifndef IDEMPAY_FUZZ_HARNESS_H
#define IDEMPAY_FUZZ_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev_merchant.h"
#include "wx_xml.h"

#define FUZZ_APPID IDEMPAY_DEV_APPID
#define FUZZ_MCHID IDEMPAY_DEV_MCHID
#define FUZZ_KEY IDEMPAY_DEV_KEY

/* Aborts with the failed property (file:line and the expression) when cond
 * is false. */
#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* A malloc'd NUL-terminated copy of data[0..size). Aborts on out of memory
 * (a harness has nothing sensible to do then). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    FUZZ_CHECK(s != NULL);
    if (size > 0)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* true when buf[0..cap) holds a NUL (a bounded C string). */
static inline bool fuzz_terminated(const char *buf, size_t cap)
{
    return memchr(buf, '\0', cap) != NULL;
}

/* true when a and b hold the same fields, with the same values, in the
 * same order. */
static inline bool fuzz_msg_equal(const wx_msg *a, const wx_msg *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->field[i].name, b->field[i].name) != 0 ||
            strcmp(a->field[i].value, b->field[i].value) != 0)
            return false;
    return true;
}

#endif
