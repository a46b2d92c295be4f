/* text_copy - the one bounded copy of text into a fixed buffer.
 *
 * The destination is always NUL-terminated and never holds a broken UTF-8
 * character: a copy that must be cut is cut before the character that does
 * not fit whole (so a cut name or message still goes into JSON, which
 * jansson refuses when it is not valid UTF-8). Input that is not UTF-8 at
 * all is cut at the byte that fits (continuation bytes after the limit are
 * skipped back over, at most to the start). */
#ifndef IDEMPAY_TEXT_COPY_H
#define IDEMPAY_TEXT_COPY_H

#include <stdbool.h>
#include <stddef.h>

/* Copies src (NULL copies "") into dst[cap]. Returns true when all of src
 * fitted, false when it was cut (dst then holds the longest prefix that
 * fits, ending on a character boundary). cap 0: nothing is written and
 * false is returned unless src is empty. */
bool text_copy(char *dst, size_t cap, const char *src);

/* The same for the len bytes at src (which need not be NUL-terminated and
 * must not contain a NUL). */
bool text_copy_n(char *dst, size_t cap, const char *src, size_t len);

#endif
