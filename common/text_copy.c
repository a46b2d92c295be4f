/* text_copy.c - a bounded copy that ends on a UTF-8 character boundary. */
#include "text_copy.h"

#include <string.h>

bool text_copy_n(char *dst, size_t cap, const char *src, size_t len)
{
    size_t n = len;

    if (cap == 0)
        return len == 0;
    if (n >= cap) {
        n = cap - 1;
        /* src[n] is the first byte left out: never split its character. */
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
            n--;
    }
    if (n > 0)
        memcpy(dst, src, n);
    dst[n] = '\0';
    return n == len;
}

bool text_copy(char *dst, size_t cap, const char *src)
{
    if (src == NULL)
        src = "";
    return text_copy_n(dst, cap, src, strlen(src));
}
