/* wx_xml.c - WeChat Pay v2 flat <xml> messages: strict parsing (raw-byte
 * pre-scan, then mxml 3.3 with a SAX pass that proves the root was closed)
 * and serialisation (CDATA, or bare escaped text for fields set bare). A
 * wx_msg always owns its names and values. */
#include "wx_xml.h"

#include <mxml.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

/* ---- wx_msg ----------------------------------------------------------- */

void wx_msg_init(wx_msg *m)
{
    memset(m, 0, sizeof(*m));
}

void wx_msg_free(wx_msg *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->field[i].name);
        free(m->field[i].value);
        m->field[i].name = NULL;
        m->field[i].value = NULL;
    }
    m->n = 0;
}

/* A field name is an XML name we can write back verbatim and that cannot
 * confuse the signed string: [A-Za-z_][A-Za-z0-9_.-]*, 1..WX_FIELD_MAX_NAME. */
static bool wx_name_ok(const char *name, size_t len)
{
    if (len == 0 || len > WX_FIELD_MAX_NAME)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        bool digit = (c >= '0' && c <= '9') || c == '.' || c == '-';
        if (!alpha && !(i > 0 && digit))
            return false;
    }
    return true;
}

static ssize_t wx_msg_find(const wx_msg *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->field[i].name, name) == 0)
            return (ssize_t)i;
    return -1;
}

/* Sets name=value, written bare or as CDATA. */
static int wx_msg_put(wx_msg *m, const char *name, const char *value, bool bare)
{
    if (m == NULL || name == NULL || value == NULL)
        return -1;
    size_t vlen = strnlen(value, WX_FIELD_MAX_VALUE + 1);
    if (!wx_name_ok(name, strnlen(name, WX_FIELD_MAX_NAME + 1)) || vlen > WX_FIELD_MAX_VALUE)
        return -1;

    char *v = strndup(value, vlen);
    if (v == NULL)
        return -1;
    ssize_t at = wx_msg_find(m, name);
    if (at >= 0) {
        free(m->field[at].value);
        m->field[at].value = v;
        m->field[at].bare = bare;
        return 0;
    }
    if (m->n >= WX_MSG_MAX_FIELDS) {
        free(v);
        return -1;
    }
    char *n = strdup(name);
    if (n == NULL) {
        free(v);
        return -1;
    }
    m->field[m->n].name = n;
    m->field[m->n].value = v;
    m->field[m->n].bare = bare;
    m->n++;
    return 0;
}

int wx_msg_set(wx_msg *m, const char *name, const char *value)
{
    return wx_msg_put(m, name, value, false);
}

int wx_msg_set_bare(wx_msg *m, const char *name, const char *value)
{
    return wx_msg_put(m, name, value, true);
}

int wx_msg_merge(wx_msg *m, const wx_msg *from)
{
    for (size_t i = 0; i < from->n; i++)
        if (wx_msg_put(m, from->field[i].name, from->field[i].value, from->field[i].bare) != 0)
            return -1;
    return 0;
}

int wx_msg_set_pairs(wx_msg *m, const wx_pair *pairs, size_t n)
{
    char number[32];

    for (size_t i = 0; i < n; i++) {
        const wx_pair *p = &pairs[i];
        int rc;
        if (p->kind == WX_PAIR_TEXT) {
            if (p->text == NULL)
                continue;
            rc = wx_msg_put(m, p->name, p->text, false);
        } else {
            snprintf(number, sizeof(number), "%lld", p->number);
            rc = wx_msg_put(m, p->name, number, p->kind == WX_PAIR_BARE_NUM);
        }
        if (rc != 0)
            return -1;
    }
    return 0;
}

int wx_msg_set_int(wx_msg *m, const char *name, long long v)
{
    char text[32];
    snprintf(text, sizeof(text), "%lld", v);
    return wx_msg_set(m, name, text);
}

const char *wx_msg_get(const wx_msg *m, const char *name)
{
    if (m == NULL || name == NULL)
        return NULL;
    ssize_t at = wx_msg_find(m, name);
    return at >= 0 ? m->field[at].value : NULL;
}

void wx_msg_del(wx_msg *m, const char *name)
{
    if (m == NULL || name == NULL)
        return;
    ssize_t at = wx_msg_find(m, name);
    if (at < 0)
        return;
    free(m->field[at].name);
    free(m->field[at].value);
    memmove(&m->field[at], &m->field[at + 1], (m->n - (size_t)at - 1) * sizeof(wx_field));
    m->n--;
    m->field[m->n].name = NULL;
    m->field[m->n].value = NULL;
    m->field[m->n].bare = false;
}

/* ---- raw-byte pre-scan -------------------------------------------------- */

/* Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, <= U+10FFFF. */
static bool wx_utf8_valid(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t need;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0)
                lo = 0xA0;
            else if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F;
        } else {
            return false;
        }
        if (len - i - 1 < need)
            return false;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return false;
        for (size_t k = 2; k <= need; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF)
                return false;
        i += need + 1;
    }
    return true;
}

/* Offset of needle in hay[0..len) ignoring ASCII case, or -1. */
static ssize_t wx_find_ci(const char *hay, size_t len, size_t from, const char *needle)
{
    size_t nl = strlen(needle);
    for (size_t i = from; i + nl <= len; i++)
        if (strncasecmp(hay + i, needle, nl) == 0)
            return (ssize_t)i;
    return -1;
}

static ssize_t wx_find(const char *hay, size_t len, size_t from, const char *needle)
{
    size_t nl = strlen(needle);
    if (from > len)
        return -1;
    const char *p = memmem(hay + from, len - from, needle, nl);
    return p ? p - hay : -1;
}

static bool wx_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void wx_set_err(char *err, size_t errlen, const char *reason)
{
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", reason);
}

static const char *wx_scan_markup(const char *body, size_t len, size_t i);

/* Refuses what must never reach mxml: the bytes (size, NUL, UTF-8,
 * declarations), then the markup (wx_scan_markup). *start is set past a
 * UTF-8 BOM and leading whitespace.
 * Returns NULL when acceptable, else the reason. */
static const char *wx_prescan(const char *body, size_t len, size_t *start)
{
    if (len == 0)
        return "empty body";
    if (len > WX_XML_MAX_BODY)
        return "body too large";
    if (memchr(body, '\0', len) != NULL)
        return "NUL byte in body";
    if (!wx_utf8_valid((const unsigned char *)body, len))
        return "invalid UTF-8";
    if (wx_find_ci(body, len, 0, "<!DOCTYPE") >= 0)
        return "DOCTYPE is not allowed";
    if (wx_find_ci(body, len, 0, "<!ENTITY") >= 0)
        return "ENTITY declarations are not allowed";

    size_t i = 0;
    if (len >= 3 && memcmp(body, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    /* mxml wants '<' first; whitespace before a root without declaration is
     * legal XML, so it is skipped too. */
    *start = i;
    while (*start < len && wx_is_space(body[*start]))
        (*start)++;
    /* A leading XML declaration is the only "<?" allowed. */
    if (len - i >= 6 && memcmp(body + i, "<?xml", 5) == 0 && wx_is_space(body[i + 5])) {
        ssize_t end = wx_find(body, len, i + 5, "?>");
        if (end < 0)
            return "unterminated XML declaration";
        i = (size_t)end + 2;
    }
    return wx_scan_markup(body, len, i);
}

/* Reads the bare tag whose '<' is at body[*at]: "<name>", "<name/>" or
 * "</name>", whitespace allowed before the '>'. Advances *at past the '>'
 * and says whether it was an end tag or an empty one. NULL, or why the tag
 * is refused. */
static const char *wx_scan_tag(const char *body, size_t len, size_t *at, bool *end_tag,
                               bool *empty_tag)
{
    size_t i = *at + 1;

    *end_tag = i < len && body[i] == '/';
    *empty_tag = false;
    if (*end_tag)
        i++;
    size_t name = i;
    while (i < len && !wx_is_space(body[i]) && body[i] != '/' && body[i] != '>' && body[i] != '<')
        i++;
    if (i == name)
        return "malformed tag";
    while (i < len && wx_is_space(body[i]))
        i++;
    if (!*end_tag && len - i >= 2 && body[i] == '/' && body[i + 1] == '>') {
        *empty_tag = true;
        i++;
    }
    if (i >= len || body[i] != '>')
        return i < len && body[i] != '/' && body[i] != '<' ? "attributes are not allowed"
                                                           : "malformed tag";
    *at = i + 1;
    return NULL;
}

/* The markup of body from i on (after any XML declaration): every markup
 * is a CDATA section or a bare tag (wx_scan_tag), nested at most two deep
 * under one root, with only whitespace outside the root. So mxml never
 * sees a processing instruction, a comment, an attribute or stray text
 * around the root (its error paths for a bad attribute on the first
 * element, or text then an end tag after the root, leak). NULL, or why the
 * body is refused. */
static const char *wx_scan_markup(const char *body, size_t len, size_t i)
{
    int depth = 0;
    bool root_seen = false;
    while (i < len) {
        const char *lt = memchr(body + i, '<', len - i);
        size_t text_end = lt != NULL ? (size_t)(lt - body) : len;
        if (depth == 0)
            for (size_t k = i; k < text_end; k++)
                if (!wx_is_space(body[k]))
                    return "text outside the root element";
        if (lt == NULL)
            break;
        i = text_end;
        if (len - i >= 9 && memcmp(body + i, "<![CDATA[", 9) == 0) {
            if (depth == 0)
                return "text outside the root element";
            ssize_t end = wx_find(body, len, i + 9, "]]>");
            if (end < 0)
                return "unterminated CDATA section";
            i = (size_t)end + 3;
            continue;
        }
        if (len - i >= 2 && body[i + 1] == '?')
            return "processing instructions are not allowed";
        if (len - i >= 4 && memcmp(body + i, "<!--", 4) == 0)
            return "comments are not allowed";
        if (len - i >= 2 && body[i + 1] == '!')
            return "markup declarations are not allowed";
        bool end_tag, empty_tag;
        const char *bad = wx_scan_tag(body, len, &i, &end_tag, &empty_tag);
        if (bad != NULL)
            return bad;
        if (end_tag) {
            if (depth == 0)
                return "end tag without start tag";
            depth--;
        } else {
            if (depth == 0 && root_seen)
                return "more than one root element";
            root_seen = true;
            if (!empty_tag && ++depth > 2)
                return "nested element";
        }
    }
    if (!root_seen)
        return "no root element";
    if (depth != 0)
        return "root element not closed";
    return NULL;
}

/* The text after the last '<' (trailing whitespace ignored) must be the
 * root's end tag: "</xml>" (optional whitespace before '>') or "<xml/>". */
static bool wx_tail_is_root_end(const char *body, size_t len)
{
    while (len > 0 && wx_is_space(body[len - 1]))
        len--;
    if (len == 0 || body[len - 1] != '>')
        return false;
    const char *lt = memrchr(body, '<', len);
    if (lt == NULL)
        return false;
    size_t tl = len - (size_t)(lt - body); /* "<...>" */
    size_t k;
    if (tl >= 6 && memcmp(lt, "</xml", 5) == 0)
        k = 5;
    else if (tl >= 6 && memcmp(lt, "<xml", 4) == 0 && lt[tl - 2] == '/')
        k = 4, tl--; /* self-closing root, "/>" */
    else
        return false;
    for (; k < tl - 1; k++)
        if (!wx_is_space(lt[k]))
            return false;
    return true;
}

/* ---- mxml load ---------------------------------------------------------- */

/* mxml's error callback is per thread in Debian's build (and global in
 * others): it is set before every load and writes into a per-thread buffer. */
static _Thread_local char wx_mxml_error[160];

static void wx_mxml_error_cb(const char *message)
{
    if (wx_mxml_error[0] == '\0')
        snprintf(wx_mxml_error, sizeof(wx_mxml_error), "%s", message);
}

typedef struct {
    int depth; /* element nesting at this point of the document */
    int max_depth;
    bool root_closed; /* the outermost element's end tag was seen */
    bool after_root;  /* some node followed the root's end */
} wx_sax_state;

static void wx_sax_cb(mxml_node_t *node, mxml_sax_event_t event, void *data)
{
    wx_sax_state *st = data;
    if (event == MXML_SAX_ELEMENT_CLOSE) {
        if (--st->depth == 0)
            st->root_closed = true;
        return;
    }
    /* Keep every node, so the whole tree is there after the load. */
    mxmlRetain(node);
    if (st->root_closed)
        st->after_root = true;
    if (event == MXML_SAX_ELEMENT_OPEN && ++st->depth > st->max_depth)
        st->max_depth = st->depth;
}

static bool wx_space_only(const char *s)
{
    for (; *s; s++)
        if (!wx_is_space(*s))
            return false;
    return true;
}

/* Appends text to a value being assembled; false when it gets too long. */
static bool wx_value_append(char *buf, size_t *len, const char *text)
{
    size_t tl = strlen(text);
    if (tl > WX_FIELD_MAX_VALUE - *len)
        return false;
    memcpy(buf + *len, text, tl);
    *len += tl;
    buf[*len] = '\0';
    return true;
}

/* Collects the fields of root into out. Returns NULL or the reason. */
static const char *wx_collect(mxml_node_t *root, wx_msg *out, char *value)
{
    if (mxmlGetType(root) != MXML_ELEMENT || strcmp(mxmlGetElement(root), "xml") != 0)
        return "root element is not <xml>";
    if (mxmlElementGetAttrCount(root) != 0)
        return "attributes are not allowed";

    for (mxml_node_t *f = mxmlGetFirstChild(root); f != NULL; f = mxmlGetNextSibling(f)) {
        if (mxmlGetType(f) == MXML_OPAQUE) {
            if (!wx_space_only(mxmlGetOpaque(f)))
                return "text outside a field";
            continue;
        }
        if (mxmlGetType(f) != MXML_ELEMENT)
            return "unexpected node";
        const char *name = mxmlGetElement(f);
        if (strncmp(name, "![CDATA[", 8) == 0)
            return "text outside a field";
        if (strncmp(name, "!--", 3) == 0)
            return "comments are not allowed";
        if (!wx_name_ok(name, strlen(name)))
            return "bad field name";
        if (mxmlElementGetAttrCount(f) != 0)
            return "attributes are not allowed";
        if (wx_msg_get(out, name) != NULL)
            return "repeated field";
        if (out->n >= WX_MSG_MAX_FIELDS)
            return "too many fields";

        size_t vlen = 0;
        value[0] = '\0';
        for (mxml_node_t *t = mxmlGetFirstChild(f); t != NULL; t = mxmlGetNextSibling(t)) {
            const char *text = NULL;
            if (mxmlGetType(t) == MXML_OPAQUE) {
                text = mxmlGetOpaque(t);
            } else if (mxmlGetType(t) == MXML_ELEMENT) {
                const char *tn = mxmlGetElement(t);
                if (strncmp(tn, "![CDATA[", 8) == 0)
                    text = mxmlGetCDATA(t);
                else if (strncmp(tn, "!--", 3) == 0)
                    return "comments are not allowed";
                else
                    return "nested element";
            }
            if (text == NULL)
                return "unexpected node";
            if (!wx_value_append(value, &vlen, text))
                return "field value too long";
        }
        /* Character references can encode surrogates or > U+10FFFF. */
        if (!wx_utf8_valid((const unsigned char *)value, vlen))
            return "invalid UTF-8";
        if (wx_msg_set(out, name, value) != 0)
            return "out of memory";
    }
    return NULL;
}

/* What the SAX pass saw of the document's shape: NULL when the root was
 * really closed with nothing after it and no element nested deeper than
 * two, else why not. */
static const char *wx_sax_verdict(const wx_sax_state *st)
{
    if (!st->root_closed || st->depth != 0)
        return "root element not closed";
    if (st->after_root)
        return "content after the root element";
    if (st->max_depth > 2)
        return "nested element";
    return NULL;
}

/* The one root element of the document mxml loaded as top into *root (a
 * leading declaration is loaded as a node holding the document). NULL, or
 * why there is not exactly one. */
static const char *wx_root_of(mxml_node_t *top, mxml_node_t **root)
{
    const char *tn = mxmlGetType(top) == MXML_ELEMENT ? mxmlGetElement(top) : "";

    *root = top;
    if (tn[0] == '?') {
        *root = NULL;
        for (mxml_node_t *c = mxmlGetFirstChild(top); c != NULL; c = mxmlGetNextSibling(c)) {
            if (mxmlGetType(c) == MXML_OPAQUE && wx_space_only(mxmlGetOpaque(c)))
                continue;
            if (*root != NULL)
                return "more than one root element";
            *root = c;
        }
        if (*root == NULL)
            return "no root element";
    }
    if (mxmlGetNextSibling(top) != NULL)
        return "more than one root element";
    return NULL;
}

int wx_xml_parse(const char *body, size_t len, wx_msg *out, char *err, size_t errlen)
{
    const char *reason = NULL;
    char *copy = NULL;
    char *value = NULL;
    mxml_node_t *top = NULL;
    size_t start = 0;

    wx_msg_free(out);
    wx_set_err(err, errlen, "");
    if (body == NULL) {
        reason = "empty body";
        goto fail;
    }
    reason = wx_prescan(body, len, &start);
    if (reason != NULL)
        goto fail;
    if (!wx_tail_is_root_end(body, len)) {
        reason = "document does not end with </xml>";
        goto fail;
    }

    copy = malloc(len - start + 1);
    value = malloc(WX_FIELD_MAX_VALUE + 1);
    if (copy == NULL || value == NULL) {
        reason = "out of memory";
        goto fail;
    }
    memcpy(copy, body + start, len - start);
    copy[len - start] = '\0';

    wx_sax_state st = { 0, 0, false, false };
    wx_mxml_error[0] = '\0';
    mxmlSetErrorCallback(wx_mxml_error_cb);
    top = mxmlSAXLoadString(NULL, copy, MXML_OPAQUE_CALLBACK, wx_sax_cb, &st);
    if (top == NULL || wx_mxml_error[0] != '\0') {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "malformed XML: %s",
                     wx_mxml_error[0] ? wx_mxml_error : "no document");
        wx_mxml_error[0] = '\0';
        goto fail_reported;
    }
    mxml_node_t *root = NULL;
    reason = wx_sax_verdict(&st);
    if (reason == NULL)
        reason = wx_root_of(top, &root);
    if (reason == NULL)
        reason = wx_collect(root, out, value);
    if (reason != NULL)
        goto fail;

    mxmlDelete(top);
    free(copy);
    free(value);
    return 0;

fail:
    wx_set_err(err, errlen, reason);
fail_reported:
    if (top != NULL)
        mxmlDelete(top);
    free(copy);
    free(value);
    wx_msg_free(out);
    return -1;
}

/* ---- building ------------------------------------------------------------ */

/* Bytes needed for "<![CDATA[" v "]]>", splitting at every "]]>". */
static size_t wx_cdata_len(const char *v)
{
    size_t n = strlen(v) + 12;
    for (const char *p = strstr(v, "]]>"); p != NULL; p = strstr(p + 3, "]]>"))
        n += 12; /* "]]]]><![CDATA[>" replaces "]]>" */
    return n;
}

static char *wx_put(char *o, const char *s)
{
    size_t l = strlen(s);
    memcpy(o, s, l);
    return o + l;
}

static char *wx_put_cdata(char *o, const char *v)
{
    o = wx_put(o, "<![CDATA[");
    for (const char *p = strstr(v, "]]>"); p != NULL; p = strstr(v, "]]>")) {
        memcpy(o, v, (size_t)(p - v));
        o += p - v;
        o = wx_put(o, "]]]]><![CDATA[>");
        v = p + 3;
    }
    o = wx_put(o, v);
    return wx_put(o, "]]>");
}

/* The escape of c in bare text, or NULL when c stands as it is. */
static const char *wx_bare_escape(char c)
{
    return c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : NULL;
}

/* Bytes needed for v as bare, escaped text. */
static size_t wx_bare_len(const char *v)
{
    size_t n = 0;
    for (; *v != '\0'; v++) {
        const char *e = wx_bare_escape(*v);
        n += e != NULL ? strlen(e) : 1;
    }
    return n;
}

static char *wx_put_bare(char *o, const char *v)
{
    for (; *v != '\0'; v++) {
        const char *e = wx_bare_escape(*v);
        if (e != NULL)
            o = wx_put(o, e);
        else
            *o++ = *v;
    }
    return o;
}

static char *wx_build_fields(const wx_field *fields, size_t n)
{
    size_t total = strlen("<xml></xml>") + 1;
    for (size_t i = 0; i < n; i++)
        total += 2 * strlen(fields[i].name) + 5 +
                 (fields[i].bare ? wx_bare_len(fields[i].value) : wx_cdata_len(fields[i].value));
    char *doc = malloc(total);
    if (doc == NULL)
        return NULL;
    char *o = wx_put(doc, "<xml>");
    for (size_t i = 0; i < n; i++) {
        *o++ = '<';
        o = wx_put(o, fields[i].name);
        *o++ = '>';
        o = fields[i].bare ? wx_put_bare(o, fields[i].value) : wx_put_cdata(o, fields[i].value);
        o = wx_put(o, "</");
        o = wx_put(o, fields[i].name);
        *o++ = '>';
    }
    o = wx_put(o, "</xml>");
    *o = '\0';
    return doc;
}

char *wx_xml_build(const wx_msg *m)
{
    return wx_build_fields(m->field, m->n);
}

char *wx_xml_notify_reply(int success, const char *msg)
{
    if (msg == NULL)
        msg = success ? "OK" : "FAIL";
    wx_field fields[2] = {
        { (char *)"return_code", (char *)(success ? "SUCCESS" : "FAIL"), false },
        { (char *)"return_msg", (char *)msg, false },
    };
    return wx_build_fields(fields, 2);
}
