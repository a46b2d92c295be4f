/* wx_xml - WeChat Pay v2 messages: a flat <xml> of named leaf fields.
 *
 * A wx_msg owns copies of every name and value. Parsing is strict by
 * construction: body <= WX_XML_MAX_BODY bytes, one <xml> root that is really
 * closed, only leaf children (depth <= 2), no DOCTYPE/ENTITY declarations, no
 * processing instructions beyond the XML declaration, no repeated field names,
 * values from CDATA or plain text, valid UTF-8. Entity expansion beyond the
 * five predefined ones is impossible (documents with DTDs are refused before
 * mxml sees them). */
#ifndef IDEMPAY_WX_XML_H
#define IDEMPAY_WX_XML_H

#include <stdbool.h>
#include <stddef.h>

#define WX_XML_MAX_BODY 65536 /* bytes; larger bodies are refused */
#define WX_MSG_MAX_FIELDS                                                                          \
    128                         /* more fields than this: refused (a refundquery page of           \
                                   10 refunds has ~90) */
#define WX_FIELD_MAX_NAME 64    /* bytes of a field name */
#define WX_FIELD_MAX_VALUE 4096 /* bytes of a field value */

typedef struct {
    char *name;
    char *value;
    bool bare; /* written as plain text, not CDATA (see wx_msg_set_bare) */
} wx_field;

typedef struct {
    wx_field field[WX_MSG_MAX_FIELDS];
    size_t n;
} wx_msg;

/* An empty message. Never fails. */
void wx_msg_init(wx_msg *m);
/* Frees every field and leaves m empty (reusable). NULL is accepted. */
void wx_msg_free(wx_msg *m);
/* Sets name=value, replacing an existing field of that name.
 * Returns 0, or -1 (message full, name/value too long, name empty or not of
 * [A-Za-z_][A-Za-z0-9_.-]*, or out of memory) with m unchanged. */
int wx_msg_set(wx_msg *m, const char *name, const char *value);
/* Sets name to the decimal text of v. Same returns as wx_msg_set. */
int wx_msg_set_int(wx_msg *m, const char *name, long long v);
/* Sets name=value like wx_msg_set, but the field is written bare: plain
 * text with &, < and > escaped, no CDATA (as WeChat writes its numbers,
 * e.g. <total_fee>10</total_fee>). wx_msg_set on the name makes it CDATA
 * again. Parsed fields are never bare. Same returns as wx_msg_set. */
int wx_msg_set_bare(wx_msg *m, const char *name, const char *value);

/* One field of a message being built, for wx_msg_set_pairs. Write them
 * with the macros: WX_TEXT("out_trade_no", no) (left out when the text is
 * NULL), WX_NUM("total_fee", fen) (decimal, CDATA), WX_BARE_NUM("cash_fee",
 * fen) (decimal, bare). */
typedef struct {
    const char *name;
    const char *text;   /* WX_TEXT: NULL leaves the field out */
    long long number;   /* WX_NUM, WX_BARE_NUM */
    unsigned char kind; /* WX_PAIR_TEXT, WX_PAIR_NUM, WX_PAIR_BARE_NUM */
} wx_pair;

enum { WX_PAIR_TEXT = 0, WX_PAIR_NUM = 1, WX_PAIR_BARE_NUM = 2 };
/* clang-format off */
#define WX_TEXT(name, text) { (name), (text), 0, WX_PAIR_TEXT }
#define WX_NUM(name, n) { (name), NULL, (n), WX_PAIR_NUM }
#define WX_BARE_NUM(name, n) { (name), NULL, (n), WX_PAIR_BARE_NUM }
/* clang-format on */

/* Sets the n pairs in order (replacing fields of the same name): the one
 * way idempay fills a message. Returns 0, or -1 at the first pair that
 * wx_msg_set refuses; m then holds the pairs before it (free it). */
int wx_msg_set_pairs(wx_msg *m, const wx_pair *pairs, size_t n);
/* Sets every field of from in m, in from's order (bare fields stay bare).
 * Returns 0, or -1 at the first refusal (m then holds the fields before it). */
int wx_msg_merge(wx_msg *m, const wx_msg *from);
/* wx_msg_set_pairs over a whole array. */
#define WX_MSG_SET_PAIRS(m, pairs)                                                                 \
    wx_msg_set_pairs((m), (pairs), sizeof(pairs) / sizeof((pairs)[0]))
/* The value of field name, or NULL when absent. Owned by m. */
const char *wx_msg_get(const wx_msg *m, const char *name);
/* Removes field name if present. */
void wx_msg_del(wx_msg *m, const char *name);

/* Parses body[0..len) into out (which must be initialised; it is cleared
 * first). Returns 0 on success; -1 on any violation of the rules above, with
 * out left empty and a short English reason in err (always NUL-terminated
 * when errlen > 0). */
int wx_xml_parse(const char *body, size_t len, wx_msg *out, char *err, size_t errlen);

/* Serialises m as compact WeChat XML: <xml><name><![CDATA[value]]></name>...</xml>
 * in field order (bare fields as <name>value</name>, escaped). Values that
 * contain "]]>" are split across CDATA sections.
 * Returns a malloc'd NUL-terminated string (caller frees), or NULL on OOM. */
char *wx_xml_build(const wx_msg *m);

/* The merchant's reply to a notification: return_code SUCCESS/FAIL and msg.
 * Returns a malloc'd string (caller frees) or NULL on OOM. */
char *wx_xml_notify_reply(int success, const char *msg);

#endif
