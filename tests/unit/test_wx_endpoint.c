/* test_wx_endpoint.c - CUnit suite for the list of WeChat Pay v2 endpoints. */
#include <CUnit/Basic.h>
#include "cu_suite.h"
#include <string.h>

#include "wx_endpoint.h"

static void test_round_trip(void)
{
    for (int ep = 0; ep < WX_EP_COUNT; ep++) {
        CU_ASSERT_EQUAL(wx_endpoint_of_name(wx_endpoint_name(ep)), ep);
        CU_ASSERT_EQUAL(wx_endpoint_of_path(wx_endpoint_path(ep)), ep);
        CU_ASSERT_EQUAL(wx_endpoint_path(ep)[0], '/');
    }
}

static void test_wechat_paths(void)
{
    CU_ASSERT_STRING_EQUAL(wx_endpoint_path(WX_EP_UNIFIEDORDER), "/pay/unifiedorder");
    CU_ASSERT_STRING_EQUAL(wx_endpoint_path(WX_EP_REFUND), "/secapi/pay/refund");
    CU_ASSERT_STRING_EQUAL(wx_endpoint_path(WX_EP_REVERSE), "/secapi/pay/reverse");
    CU_ASSERT_STRING_EQUAL(wx_endpoint_path(WX_EP_REFUNDQUERY), "/pay/refundquery");
    CU_ASSERT_STRING_EQUAL(wx_endpoint_name(WX_EP_DOWNLOADBILL), "downloadbill");
}

static void test_unknown(void)
{
    CU_ASSERT_EQUAL(wx_endpoint_of_path("/pay/unifiedorder/"), -1);
    CU_ASSERT_EQUAL(wx_endpoint_of_path("/pay/"), -1);
    CU_ASSERT_EQUAL(wx_endpoint_of_path(NULL), -1);
    CU_ASSERT_EQUAL(wx_endpoint_of_name("UNIFIEDORDER"), -1);
    CU_ASSERT_EQUAL(wx_endpoint_of_name(NULL), -1);
    CU_ASSERT_STRING_EQUAL(wx_endpoint_name(-1), "none");
    CU_ASSERT_STRING_EQUAL(wx_endpoint_name(WX_EP_COUNT), "none");
    CU_ASSERT_STRING_EQUAL(wx_endpoint_path(WX_EP_COUNT), "");
}

int main(void)
{
    static const cu_test tests[] = {
        { "every endpoint is found again by its name and its path", test_round_trip },
        { "the paths are WeChat Pay's, refund and reverse under secapi", test_wechat_paths },
        { "an unknown path or name, or a number out of range, names no endpoint", test_unknown },
    };
    return CU_SUITE_RUN("wx_endpoint", NULL, NULL, tests);
}
