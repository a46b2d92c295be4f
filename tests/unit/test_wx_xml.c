/* test_wx_xml.c - CUnit suite for wx_xml: the message container, strict
 * parsing of hostile input, and serialisation round trips. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wx_xml.h"

/* Field name of m equals want (a missing field fails instead of crashing). */
#define ASSERT_FIELD(m, name, want)                                                                \
    do {                                                                                           \
        const char *got_ = wx_msg_get((m), (name));                                                \
        CU_ASSERT_PTR_NOT_NULL(got_);                                                              \
        CU_ASSERT(got_ != NULL && strcmp(got_, (want)) == 0);                                      \
    } while (0)

/* Parses a NUL-terminated document; returns the parse result. */
static int parse(const char *doc, wx_msg *m, char *err, size_t errlen)
{
    return wx_xml_parse(doc, strlen(doc), m, err, errlen);
}

static void expect_refused(const char *doc, size_t len)
{
    wx_msg m;
    char err[128] = "unset";
    wx_msg_init(&m);
    wx_msg_set(&m, "stale", "x"); /* must be cleared even on failure */
    int rc = wx_xml_parse(doc, len, &m, err, sizeof(err));
    CU_ASSERT_EQUAL(rc, -1);
    CU_ASSERT_EQUAL(m.n, 0);
    CU_ASSERT(err[0] != '\0' && strcmp(err, "unset") != 0);
    if (rc != -1)
        fprintf(stderr, "  accepted: %.*s\n", (int)(len > 200 ? 200 : len), doc);
    wx_msg_free(&m);
}

/* Appends s at buf+at (the caller sized buf); returns the new length. */
static size_t put(char *buf, size_t at, const char *s)
{
    size_t l = strlen(s);
    memcpy(buf + at, s, l + 1);
    return at + l;
}

static void refuse(const char *doc)
{
    expect_refused(doc, strlen(doc));
}

/* ---- wx_msg container ---- */

static void test_msg_basics(void)
{
    wx_msg m;
    wx_msg_init(&m);
    CU_ASSERT_EQUAL(m.n, 0);
    CU_ASSERT_PTR_NULL(wx_msg_get(&m, "a"));
    CU_ASSERT_EQUAL(wx_msg_set(&m, "a", "1"), 0);
    CU_ASSERT_EQUAL(wx_msg_set(&m, "b", ""), 0);
    CU_ASSERT_EQUAL(wx_msg_set_int(&m, "c", -42), 0);
    CU_ASSERT_EQUAL(wx_msg_set_int(&m, "d", 9999999999LL), 0);
    CU_ASSERT_EQUAL(m.n, 4);
    ASSERT_FIELD(&m, "a", "1");
    ASSERT_FIELD(&m, "b", "");
    ASSERT_FIELD(&m, "c", "-42");
    ASSERT_FIELD(&m, "d", "9999999999");

    /* Replace keeps the position and the count. */
    CU_ASSERT_EQUAL(wx_msg_set(&m, "a", "one"), 0);
    CU_ASSERT_EQUAL(m.n, 4);
    CU_ASSERT_STRING_EQUAL(m.field[0].name, "a");
    CU_ASSERT_STRING_EQUAL(m.field[0].value, "one");

    /* Delete keeps the order of the others. */
    wx_msg_del(&m, "b");
    wx_msg_del(&m, "absent");
    CU_ASSERT_EQUAL(m.n, 3);
    CU_ASSERT_STRING_EQUAL(m.field[1].name, "c");
    CU_ASSERT_PTR_NULL(wx_msg_get(&m, "b"));

    /* The message owns copies. */
    char name[8] = "e", value[8] = "v";
    CU_ASSERT_EQUAL(wx_msg_set(&m, name, value), 0);
    name[0] = 'x';
    value[0] = 'y';
    ASSERT_FIELD(&m, "e", "v");

    wx_msg_free(&m);
    CU_ASSERT_EQUAL(m.n, 0);
    CU_ASSERT_EQUAL(wx_msg_set(&m, "again", "ok"), 0); /* reusable after free */
    wx_msg_free(&m);
    wx_msg_free(NULL);
}

static void test_msg_limits(void)
{
    wx_msg m;
    char name[WX_FIELD_MAX_NAME + 2];
    char *value = malloc(WX_FIELD_MAX_VALUE + 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(value);
    wx_msg_init(&m);

    memset(name, 'n', sizeof(name));
    name[WX_FIELD_MAX_NAME] = '\0';
    CU_ASSERT_EQUAL(wx_msg_set(&m, name, "x"), 0);
    name[WX_FIELD_MAX_NAME] = 'n';
    name[WX_FIELD_MAX_NAME + 1] = '\0';
    CU_ASSERT_EQUAL(wx_msg_set(&m, name, "x"), -1);

    memset(value, 'v', WX_FIELD_MAX_VALUE + 1);
    value[WX_FIELD_MAX_VALUE] = '\0';
    CU_ASSERT_EQUAL(wx_msg_set(&m, "big", value), 0);
    value[WX_FIELD_MAX_VALUE] = 'v';
    value[WX_FIELD_MAX_VALUE + 1] = '\0';
    CU_ASSERT_EQUAL(wx_msg_set(&m, "big", value), -1);
    CU_ASSERT_EQUAL(strlen(wx_msg_get(&m, "big")), WX_FIELD_MAX_VALUE); /* unchanged */

    CU_ASSERT_EQUAL(wx_msg_set(&m, "", "x"), -1);
    CU_ASSERT_EQUAL(wx_msg_set(&m, "a b", "x"), -1);
    CU_ASSERT_EQUAL(wx_msg_set(&m, "a<b", "x"), -1);
    CU_ASSERT_EQUAL(wx_msg_set(&m, "a=b", "x"), -1);
    CU_ASSERT_EQUAL(wx_msg_set(&m, "1a", "x"), -1);
    CU_ASSERT_EQUAL(wx_msg_set(&m, NULL, "x"), -1);
    CU_ASSERT_EQUAL(wx_msg_set(&m, "a", NULL), -1);
    CU_ASSERT_EQUAL(m.n, 2);

    wx_msg_free(&m);
    char fname[16];
    for (int i = 0; i < WX_MSG_MAX_FIELDS; i++) {
        snprintf(fname, sizeof(fname), "f%d", i);
        CU_ASSERT_EQUAL(wx_msg_set(&m, fname, "x"), 0);
    }
    CU_ASSERT_EQUAL(wx_msg_set(&m, "one_more", "x"), -1);
    CU_ASSERT_EQUAL(wx_msg_set(&m, "f0", "replaced"), 0); /* replacing still works when full */
    CU_ASSERT_EQUAL(m.n, WX_MSG_MAX_FIELDS);
    wx_msg_free(&m);
    free(value);
}

/* ---- parsing: accepted documents ---- */

static void test_parse_notification(void)
{
    static const char doc[] =
        "<xml>\n"
        "  <appid><![CDATA[wx2421b1c4370ec43b]]></appid>\n"
        "  <attach><![CDATA[支付测试]]></attach>\n"
        "  <bank_type><![CDATA[CFT]]></bank_type>\n"
        "  <fee_type><![CDATA[CNY]]></fee_type>\n"
        "  <is_subscribe><![CDATA[Y]]></is_subscribe>\n"
        "  <mch_id><![CDATA[10000100]]></mch_id>\n"
        "  <nonce_str><![CDATA[5d2b6c2a8db53831f7eda20af46e531c]]></nonce_str>\n"
        "  <openid><![CDATA[oUpF8uMEb4qRXf22hE3X68TekukE]]></openid>\n"
        "  <out_trade_no><![CDATA[1409811653]]></out_trade_no>\n"
        "  <result_code><![CDATA[SUCCESS]]></result_code>\n"
        "  <return_code><![CDATA[SUCCESS]]></return_code>\n"
        "  <sign><![CDATA[B552ED6B279343CB493C5DD0D78AB241]]></sign>\n"
        "  <time_end><![CDATA[20140903131540]]></time_end>\n"
        "  <total_fee>1</total_fee>\n"
        "  <coupon_fee_0><![CDATA[10]]></coupon_fee_0>\n"
        "  <coupon_count><![CDATA[1]]></coupon_count>\n"
        "  <trade_type><![CDATA[JSAPI]]></trade_type>\n"
        "  <transaction_id><![CDATA[1004400740201409030005092168]]></transaction_id>\n"
        "</xml>\n";
    wx_msg m;
    char err[128];
    wx_msg_init(&m);
    CU_ASSERT_EQUAL_FATAL(parse(doc, &m, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(err, "");
    CU_ASSERT_EQUAL(m.n, 18);
    CU_ASSERT_STRING_EQUAL(m.field[0].name, "appid"); /* document order */
    ASSERT_FIELD(&m, "appid", "wx2421b1c4370ec43b");
    ASSERT_FIELD(&m, "attach", "支付测试");
    ASSERT_FIELD(&m, "total_fee", "1");
    ASSERT_FIELD(&m, "coupon_fee_0", "10");
    ASSERT_FIELD(&m, "transaction_id", "1004400740201409030005092168");
    wx_msg_free(&m);
}

static void test_parse_text_forms(void)
{
    wx_msg m;
    char err[128];
    wx_msg_init(&m);

    /* Entities decoded in plain text, kept literally in CDATA. */
    CU_ASSERT_EQUAL(parse("<xml><a>x &amp; y &lt;z&gt; &quot;&apos;</a>"
                          "<b><![CDATA[x &amp; <y>]]></b><c>&#65;&#x42;&#x4E2D;</c></xml>",
                          &m, err, sizeof(err)),
                    0);
    ASSERT_FIELD(&m, "a", "x & y <z> \"'");
    ASSERT_FIELD(&m, "b", "x &amp; <y>");
    ASSERT_FIELD(&m, "c", "AB中");

    /* Mixed CDATA and text concatenate; split CDATA carries "]]>". */
    CU_ASSERT_EQUAL(parse("<xml><a>pre<![CDATA[mid]]>post</a>"
                          "<b><![CDATA[x]]]]><![CDATA[>y]]></b></xml>",
                          &m, err, sizeof(err)),
                    0);
    ASSERT_FIELD(&m, "a", "premidpost");
    ASSERT_FIELD(&m, "b", "x]]>y");

    /* Empty values are kept as "". */
    CU_ASSERT_EQUAL(parse("<xml><a></a><b><![CDATA[]]></b><c/><d>1</d></xml>", &m, err,
                          sizeof(err)),
                    0);
    CU_ASSERT_EQUAL(m.n, 4);
    ASSERT_FIELD(&m, "a", "");
    ASSERT_FIELD(&m, "b", "");
    ASSERT_FIELD(&m, "c", "");

    /* Whitespace inside a value is data; between fields it is not. */
    CU_ASSERT_EQUAL(parse("\r\n <xml>\r\n\t<a> 1 </a>\r\n</xml >\r\n\t ", &m, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(m.n, 1);
    ASSERT_FIELD(&m, "a", " 1 ");

    /* XML declaration (optionally after a BOM) and an empty root. */
    CU_ASSERT_EQUAL(parse("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xml><a>1</a></xml>", &m,
                          err, sizeof(err)),
                    0);
    ASSERT_FIELD(&m, "a", "1");
    CU_ASSERT_EQUAL(parse("\xEF\xBB\xBF<?xml version=\"1.0\"?><xml><a>2</a></xml>", &m, err,
                          sizeof(err)),
                    0);
    ASSERT_FIELD(&m, "a", "2");
    CU_ASSERT_EQUAL(parse("<xml></xml>", &m, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(m.n, 0);
    CU_ASSERT_EQUAL(parse("<xml/>", &m, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(m.n, 0);

    /* Whitespace inside tags. */
    CU_ASSERT_EQUAL(parse("<xml\n><a >1</a\t><b\r\n/></xml\n>", &m, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(m.n, 2);
    ASSERT_FIELD(&m, "a", "1");

    /* "<?" inside CDATA is data, not a processing instruction. */
    CU_ASSERT_EQUAL(parse("<xml><a><![CDATA[<?php echo 1; ?>]]></a></xml>", &m, err, sizeof(err)),
                    0);
    ASSERT_FIELD(&m, "a", "<?php echo 1; ?>");

    /* Parsing clears what out held before. */
    CU_ASSERT_EQUAL(parse("<xml><z>1</z></xml>", &m, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(m.n, 1);
    CU_ASSERT_PTR_NULL(wx_msg_get(&m, "a"));

    /* The length bounds the input: bytes after len are not read. */
    const char *longer = "<xml><a>1</a></xml>GARBAGE";
    CU_ASSERT_EQUAL(wx_xml_parse(longer, strlen("<xml><a>1</a></xml>"), &m, err, sizeof(err)), 0);
    wx_msg_free(&m);
}

/* ---- parsing: refused documents ---- */

static void test_refuse_structure(void)
{
    refuse("");
    refuse("   ");
    refuse("not xml");
    refuse("<xml><a>1</a>"); /* truncated: mxml accepts it */
    refuse("<xml><a>1</a></xm");
    refuse("<xml><a>1");
    refuse("<xml><a>1</a><b>");
    refuse("<xml><xml></xml>"); /* inner closed, root not */
    refuse("<xml><a>1</a></xml>junk");
    refuse("<xml><a>1</a></xml>junk>");
    refuse("<xml><a>1</a></xml><xml></xml>");
    refuse("<xml><a>1</a></xml></xml>");
    refuse("<xml><a>1</a></xml><!-- after -->");
    refuse("<!-- before --><xml><a>1</a></xml>");
    refuse("<root><a>1</a></root>");
    refuse("<XML><a>1</a></XML>");
    refuse("<xml><a><b>1</b></a></xml>"); /* depth 3 */
    refuse("<xml><a>1<b/></a></xml>");
    refuse("<xml><a>1</b></xml>");
    refuse("<xml>text<a>1</a></xml>"); /* text outside a field */
    refuse("<xml><![CDATA[x]]><a>1</a></xml>");
    refuse("<xml><a>1</a><a>2</a></xml>"); /* repeated field */
    refuse("<xml><a>1</a><b>2</b><a></a></xml>");
    refuse("<xml><a x=\"1\">1</a></xml>"); /* attributes */
    refuse("<xml v=\"1\"><a>1</a></xml>");
    refuse("<xml><a>1<!-- c --></a></xml>");
    refuse("<xml><!-- c --><a>1</a></xml>");
    refuse("<xml><a b>1</a></xml>");
    refuse("<xml a><a>1</a></xml>");
    refuse("<x?ml ve[x]]></b>0\"?>\na<>&amp;</a>\n</xml>"); /* fuzzer find: leaked in mxml */
    refuse("<xml><a>1</a></xml>x</b>");                     /* fuzzer find: leaked in mxml */
    refuse("<xml></xml>x</xml>");
    refuse("<xml><>1</></xml>");
    refuse("<xml><a>1</a><</xml>");
    refuse("<xml><a/ ></xml>");
    refuse("<xml><a>1</a b></xml>");
    refuse("<xml><a=b>1</a=b></xml>"); /* not a field name */
    refuse("<xml><ns:a>1</ns:a></xml>");
    refuse("<xml><a><![CDATA[1</a></xml>"); /* unterminated CDATA */
    refuse("<xml><a>&bogus;</a></xml>");
    refuse("<xml><a>&</a></xml>");
    refuse("<xml><a>&#0;</a></xml>");
    refuse("<xml><a>&#1;</a></xml>");
    refuse("<xml><a>&#xD800;</a></xml>"); /* surrogate through a reference */
    refuse("<xml><a>&#x110000;</a></xml>");
    refuse("<xml><a>\x01</a></xml>");

    /* Deep nesting is refused, not recursed into. */
    size_t depth = 5000, len = 0;
    char *deep = malloc(depth * 7 + 32);
    CU_ASSERT_PTR_NOT_NULL_FATAL(deep);
    len = put(deep, len, "<xml>");
    for (size_t i = 0; i < depth; i++)
        len = put(deep, len, "<a>");
    for (size_t i = 0; i < depth; i++)
        len = put(deep, len, "</a>");
    len = put(deep, len, "</xml>");
    expect_refused(deep, len);
    free(deep);
}

static void test_refuse_declarations(void)
{
    refuse("<!DOCTYPE xml><xml><a>1</a></xml>");
    refuse("<!doctype xml><xml><a>1</a></xml>");
    refuse("<?xml version=\"1.0\"?><!DoCtYpE xml [<!ENTITY x \"y\">]><xml><a>&x;</a></xml>");
    refuse("<xml><a><![CDATA[<!DOCTYPE]]></a></xml>"); /* anywhere */
    refuse("<xml><a><![CDATA[<!entity]]></a></xml>");
    /* Billion laughs: refused before any expansion. */
    refuse("<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">"
           "<!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>"
           "<xml><a>&lol2;</a></xml>");
    /* External entity (XXE). */
    refuse("<!DOCTYPE foo [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]><xml><a>&xxe;</a></xml>");
    /* Processing instructions other than a leading declaration. */
    refuse("<?pi x?><xml><a>1</a></xml>");
    refuse("<xml><?pi x?><a>1</a></xml>");
    refuse("<xml><a>1<?pi?></a></xml>");
    refuse("<xml><a>1</a></xml><?pi?>");
    refuse(" <?xml version=\"1.0\"?><xml><a>1</a></xml>"); /* not leading */
    refuse("<?xml version=\"1.0\"?><?xml version=\"1.0\"?><xml><a>1</a></xml>");
    refuse("<?xml-stylesheet href=\"a\"?><xml><a>1</a></xml>");
    refuse("<?xml version=\"1.0\"<xml><a>1</a></xml>");
}

static void test_refuse_bytes(void)
{
    /* NUL bytes anywhere. */
    static const char with_nul[] = "<xml><a>1\0</a></xml>";
    expect_refused(with_nul, sizeof(with_nul) - 1);
    static const char nul_after[] = "<xml><a>1</a></xml>\0";
    expect_refused(nul_after, sizeof(nul_after) - 1);

    /* Invalid UTF-8: stray continuation, overlong, surrogate, > U+10FFFF, truncated. */
    refuse("<xml><a>\x80</a></xml>");
    refuse("<xml><a>\xC0\xAF</a></xml>");
    refuse("<xml><a>\xC1\xBF</a></xml>");
    refuse("<xml><a>\xE0\x80\xAF</a></xml>");
    refuse("<xml><a>\xED\xA0\x80</a></xml>");
    refuse("<xml><a>\xF4\x90\x80\x80</a></xml>");
    refuse("<xml><a>\xF5\x80\x80\x80</a></xml>");
    refuse("<xml><a>\xFF</a></xml>");
    refuse("<xml><a>\xE4\xB8</a></xml>");
    refuse("<xml><a>1</a></xml>\xE4");
    refuse("<xml><a><![CDATA[\xC3]]></a></xml>");

    /* Valid multi-byte UTF-8 of every length is fine. */
    wx_msg m;
    char err[64];
    wx_msg_init(&m);
    CU_ASSERT_EQUAL(parse("<xml><a>\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF</a></xml>",
                          &m, err, sizeof(err)),
                    0);
    wx_msg_free(&m);
}

/* A document of n fields f0..f{n-1}, each with value of vlen 'v's. */
static char *make_doc(int n, size_t vlen, size_t pad, size_t *len)
{
    size_t cap = 64 + pad + (size_t)n * (vlen + 64);
    char *doc = malloc(cap);
    if (doc == NULL)
        return NULL;
    size_t at = (size_t)snprintf(doc, cap, "<xml>");
    for (int i = 0; i < n; i++) {
        at += (size_t)snprintf(doc + at, cap - at, "<f%d>", i);
        memset(doc + at, 'v', vlen);
        at += vlen;
        at += (size_t)snprintf(doc + at, cap - at, "</f%d>", i);
    }
    memset(doc + at, ' ', pad);
    at += pad;
    at += (size_t)snprintf(doc + at, cap - at, "</xml>");
    *len = at;
    return doc;
}

static void test_limits(void)
{
    wx_msg m;
    char err[128];
    size_t len;
    char *doc;
    wx_msg_init(&m);

    doc = make_doc(WX_MSG_MAX_FIELDS, 1, 0, &len);
    CU_ASSERT_EQUAL(wx_xml_parse(doc, len, &m, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(m.n, WX_MSG_MAX_FIELDS);
    free(doc);
    doc = make_doc(WX_MSG_MAX_FIELDS + 1, 1, 0, &len);
    expect_refused(doc, len);
    free(doc);

    doc = make_doc(1, WX_FIELD_MAX_VALUE, 0, &len);
    CU_ASSERT_EQUAL(wx_xml_parse(doc, len, &m, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(strlen(wx_msg_get(&m, "f0")), WX_FIELD_MAX_VALUE);
    free(doc);
    doc = make_doc(1, WX_FIELD_MAX_VALUE + 1, 0, &len);
    expect_refused(doc, len);
    free(doc);

    /* Body size: exactly the limit passes, one byte more is refused. */
    size_t base;
    doc = make_doc(1, 1, 0, &base);
    free(doc);
    doc = make_doc(1, 1, WX_XML_MAX_BODY - base, &len);
    CU_ASSERT_EQUAL(len, WX_XML_MAX_BODY);
    CU_ASSERT_EQUAL(wx_xml_parse(doc, len, &m, err, sizeof(err)), 0);
    free(doc);
    doc = make_doc(1, 1, WX_XML_MAX_BODY - base + 1, &len);
    expect_refused(doc, len);
    free(doc);

    /* Name length limit. */
    char name[WX_FIELD_MAX_NAME + 2], xml[256];
    memset(name, 'n', WX_FIELD_MAX_NAME);
    name[WX_FIELD_MAX_NAME] = '\0';
    snprintf(xml, sizeof(xml), "<xml><%s>1</%s></xml>", name, name);
    CU_ASSERT_EQUAL(parse(xml, &m, err, sizeof(err)), 0);
    name[WX_FIELD_MAX_NAME] = 'n';
    name[WX_FIELD_MAX_NAME + 1] = '\0';
    snprintf(xml, sizeof(xml), "<xml><%s>1</%s></xml>", name, name);
    refuse(xml);

    /* A value is bounded after decoding: entities count as what they decode to. */
    size_t n_amp = WX_FIELD_MAX_VALUE + 1;
    doc = malloc(n_amp * 5 + 32);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    len = put(doc, 0, "<xml><a>");
    for (size_t i = 0; i < n_amp; i++)
        len = put(doc, len, "&amp;");
    len = put(doc, len, "</a></xml>");
    expect_refused(doc, len);
    free(doc);
    wx_msg_free(&m);
}

static void test_err_buffer(void)
{
    wx_msg m;
    char small[8];
    wx_msg_init(&m);
    memset(small, 'x', sizeof(small));
    CU_ASSERT_EQUAL(parse("<xml><a>1</a>", &m, small, sizeof(small)), -1);
    CU_ASSERT_EQUAL(strlen(small), sizeof(small) - 1); /* truncated, terminated */
    CU_ASSERT_EQUAL(parse("<xml><a>1</a>", &m, NULL, 0), -1);
    CU_ASSERT_EQUAL(parse("<xml><a>&bogus;</a></xml>", &m, NULL, 0), -1);
    char err[128];
    CU_ASSERT_EQUAL(parse("<xml><a>&bogus;</a></xml>", &m, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "malformed"));
    CU_ASSERT_EQUAL(wx_xml_parse(NULL, 0, &m, err, sizeof(err)), -1);
    /* A failed parse does not leave an error behind for the next one. */
    CU_ASSERT_EQUAL(parse("<xml><a>1</a></xml>", &m, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(err, "");
    wx_msg_free(&m);
}

/* ---- building ---- */

static void test_build(void)
{
    wx_msg m, back;
    char err[128];
    wx_msg_init(&m);
    wx_msg_init(&back);

    char *xml = wx_xml_build(&m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    CU_ASSERT_STRING_EQUAL(xml, "<xml></xml>");
    free(xml);

    wx_msg_set(&m, "return_code", "SUCCESS");
    wx_msg_set(&m, "empty", "");
    wx_msg_set(&m, "tricky", "a]]>b]]>]]>c<&>\"'");
    wx_msg_set(&m, "cjk", "中文");
    xml = wx_xml_build(&m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    CU_ASSERT_STRING_EQUAL(
        xml, "<xml><return_code><![CDATA[SUCCESS]]></return_code><empty><![CDATA[]]></empty>"
             "<tricky><![CDATA[a]]]]><![CDATA[>b]]]]><![CDATA[>]]]]><![CDATA[>c<&>\"']]></tricky>"
             "<cjk><![CDATA[中文]]></cjk></xml>");

    /* Round trip: same fields, same order, same values. */
    CU_ASSERT_EQUAL_FATAL(parse(xml, &back, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(back.n, m.n);
    for (size_t i = 0; i < m.n && i < back.n; i++) {
        CU_ASSERT_STRING_EQUAL(back.field[i].name, m.field[i].name);
        CU_ASSERT_STRING_EQUAL(back.field[i].value, m.field[i].value);
    }
    free(xml);

    /* The largest message builds and parses back within the body limit. */
    wx_msg_free(&m);
    char name[32];
    char *value = malloc(WX_FIELD_MAX_VALUE / 16 + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(value);
    memset(value, 'x', WX_FIELD_MAX_VALUE / 16);
    value[WX_FIELD_MAX_VALUE / 16] = '\0';
    for (int i = 0; i < WX_MSG_MAX_FIELDS; i++) {
        snprintf(name, sizeof(name), "field_%d", i);
        CU_ASSERT_EQUAL(wx_msg_set(&m, name, value), 0);
    }
    xml = wx_xml_build(&m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    CU_ASSERT_EQUAL(parse(xml, &back, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(back.n, WX_MSG_MAX_FIELDS);
    free(xml);
    free(value);
    wx_msg_free(&m);
    wx_msg_free(&back);
}

static void test_notify_reply(void)
{
    char *r = wx_xml_notify_reply(1, "OK");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_STRING_EQUAL(r, "<xml><return_code><![CDATA[SUCCESS]]></return_code>"
                              "<return_msg><![CDATA[OK]]></return_msg></xml>");
    free(r);
    r = wx_xml_notify_reply(0, "signature mismatch");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_STRING_EQUAL(r, "<xml><return_code><![CDATA[FAIL]]></return_code>"
                              "<return_msg><![CDATA[signature mismatch]]></return_msg></xml>");
    free(r);
    r = wx_xml_notify_reply(0, "bad ]]> input");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    wx_msg m;
    char err[64];
    wx_msg_init(&m);
    CU_ASSERT_EQUAL(parse(r, &m, err, sizeof(err)), 0);
    ASSERT_FIELD(&m, "return_msg", "bad ]]> input");
    free(r);
    r = wx_xml_notify_reply(1, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(parse(r, &m, err, sizeof(err)), 0);
    ASSERT_FIELD(&m, "return_code", "SUCCESS");
    ASSERT_FIELD(&m, "return_msg", "OK");
    free(r);
    wx_msg_free(&m);
}

/* ---- threads: errors stay in the thread that caused them ---- */

static void *parse_worker(void *arg)
{
    int good = *(int *)arg;
    long failures = 0;
    wx_msg m;
    char err[128];
    wx_msg_init(&m);
    for (int i = 0; i < 300; i++) {
        if (good) {
            if (parse("<xml><a>1</a><b><![CDATA[2]]></b></xml>", &m, err, sizeof(err)) != 0 ||
                err[0] != '\0')
                failures++;
        } else {
            if (parse("<xml><a>&bogus;</a></xml>", &m, err, sizeof(err)) != -1 ||
                strstr(err, "malformed") == NULL)
                failures++;
        }
    }
    wx_msg_free(&m);
    return (void *)failures;
}

static void test_threads(void)
{
    pthread_t t[4];
    int kind[4] = { 1, 0, 1, 0 };
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, parse_worker, &kind[i]), 0);
    for (int i = 0; i < 4; i++) {
        void *res = NULL;
        pthread_join(t[i], &res);
        CU_ASSERT_EQUAL((long)res, 0);
    }
}

static void test_build_bare(void)
{
    wx_msg m, back;
    char err[128];
    wx_msg_init(&m);
    CU_ASSERT_EQUAL(wx_msg_set_bare(&m, "total_fee", "10"), 0);
    CU_ASSERT_EQUAL(wx_msg_set_bare(&m, "note", "a&b<c>d]]>e"), 0);
    CU_ASSERT_EQUAL(wx_msg_set_bare(&m, "empty", ""), 0);
    CU_ASSERT_EQUAL(wx_msg_set(&m, "cdata", "x"), 0);
    char *xml = wx_xml_build(&m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    CU_ASSERT_STRING_EQUAL(xml,
                           "<xml><total_fee>10</total_fee><note>a&amp;b&lt;c&gt;d]]&gt;e</note>"
                           "<empty></empty><cdata><![CDATA[x]]></cdata></xml>");
    wx_msg_init(&back);
    CU_ASSERT_EQUAL_FATAL(wx_xml_parse(xml, strlen(xml), &back, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&back, "note"), "a&b<c>d]]>e");
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&back, "total_fee"), "10");
    CU_ASSERT_FALSE(back.field[0].bare); /* parsed fields are never bare */
    free(xml);
    /* wx_msg_set on a bare field makes it CDATA again, in place. */
    CU_ASSERT_EQUAL(wx_msg_set(&m, "total_fee", "11"), 0);
    xml = wx_xml_build(&m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    CU_ASSERT_NSTRING_EQUAL(xml, "<xml><total_fee><![CDATA[11]]></total_fee>", 42);
    free(xml);
    /* The same limits as wx_msg_set. */
    CU_ASSERT_EQUAL(wx_msg_set_bare(&m, "1bad", "1"), -1);
    CU_ASSERT_EQUAL(wx_msg_set_bare(&m, "ok", NULL), -1);
    wx_msg_free(&back);
    wx_msg_free(&m);
}

static void test_set_pairs(void)
{
    wx_msg m, copy;
    const char *absent = NULL;
    const wx_pair fields[] = {
        WX_TEXT("out_trade_no", "N1"), WX_TEXT("begin_time", absent), /* left out */
        WX_NUM("total_fee", -12),      WX_BARE_NUM("cash_fee", 9223372036854775807LL),
        WX_TEXT("out_trade_no", "N2"), /* replaces in place */
    };
    const wx_pair bad[] = {
        WX_TEXT("a", "1"),
        WX_TEXT("not a name", "2"),
        WX_TEXT("c", "3"),
    };
    wx_msg_init(&m);
    CU_ASSERT_EQUAL(WX_MSG_SET_PAIRS(&m, fields), 0);
    CU_ASSERT_EQUAL(m.n, 3);
    CU_ASSERT_STRING_EQUAL(m.field[0].value, "N2");
    CU_ASSERT_PTR_NULL(wx_msg_get(&m, "begin_time"));
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "total_fee"), "-12");
    CU_ASSERT_FALSE(m.field[1].bare);
    CU_ASSERT_STRING_EQUAL(wx_msg_get(&m, "cash_fee"), "9223372036854775807");
    CU_ASSERT_TRUE(m.field[2].bare);
    CU_ASSERT_EQUAL(wx_msg_set_pairs(&m, fields, 0), 0);
    /* merge keeps order and bareness */
    wx_msg_init(&copy);
    CU_ASSERT_EQUAL(wx_msg_set(&copy, "appid", "wx"), 0);
    CU_ASSERT_EQUAL(wx_msg_merge(&copy, &m), 0);
    CU_ASSERT_EQUAL(copy.n, 4);
    CU_ASSERT_STRING_EQUAL(copy.field[3].name, "cash_fee");
    CU_ASSERT_TRUE(copy.field[3].bare);
    wx_msg_free(&copy);
    /* the first refusal stops: the pairs before it are set */
    wx_msg_free(&m);
    CU_ASSERT_EQUAL(WX_MSG_SET_PAIRS(&m, bad), -1);
    CU_ASSERT_EQUAL(m.n, 1);
    CU_ASSERT_PTR_NULL(wx_msg_get(&m, "c"));
    wx_msg_free(&m);
}

int main(void)
{
    static const cu_test tests[] = {
        { "a message sets, gets and replaces fields", test_msg_basics },
        { "a message refuses fields over its limits", test_msg_limits },
        { "a notification parses into its fields", test_parse_notification },
        { "CDATA, bare text and entities parse alike", test_parse_text_forms },
        { "a document of the wrong structure is refused", test_refuse_structure },
        { "declarations and processing instructions are refused", test_refuse_declarations },
        { "bad bytes are refused", test_refuse_bytes },
        { "a document at its limits parses, over them is refused", test_limits },
        { "the error text is cut to its buffer and terminated", test_err_buffer },
        { "a message builds to XML that parses back", test_build },
        { "the notification reply is built as WeChat expects", test_notify_reply },
        { "bare fields build without CDATA", test_build_bare },
        { "pairs set a message and merge into one", test_set_pairs },
        { "parsing is safe from several threads", test_threads },
    };
    return CU_SUITE_RUN("wx_xml", NULL, NULL, tests);
}
