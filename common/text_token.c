/* text_token.c - letters, digits and a field's punctuation, min..max long. */
#include "text_token.h"

#include <string.h>

bool text_token_valid(const char *s, size_t min, size_t max, const char *punct)
{
    size_t n = 0;

    if (s == NULL)
        return false;
    for (; s[n] != '\0'; n++) {
        char c = s[n];
        bool alnum = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
        if (n >= max || !(alnum || strchr(punct, c) != NULL))
            return false;
    }
    return n >= min;
}
