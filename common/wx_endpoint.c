/* wx_endpoint.c - the WeChat Pay v2 endpoints' table (see wx_endpoint.h). */
#include "wx_endpoint.h"

#include <string.h>

static const struct {
    const char *name;
    const char *path;
} wx_endpoints[WX_EP_COUNT] = {
    [WX_EP_UNIFIEDORDER] = { "unifiedorder", "/pay/unifiedorder" },
    [WX_EP_ORDERQUERY] = { "orderquery", "/pay/orderquery" },
    [WX_EP_REFUND] = { "refund", "/secapi/pay/refund" },
    [WX_EP_CLOSEORDER] = { "closeorder", "/pay/closeorder" },
    [WX_EP_DOWNLOADBILL] = { "downloadbill", "/pay/downloadbill" },
    [WX_EP_MICROPAY] = { "micropay", "/pay/micropay" },
    [WX_EP_REVERSE] = { "reverse", "/secapi/pay/reverse" },
    [WX_EP_REFUNDQUERY] = { "refundquery", "/pay/refundquery" },
};

const char *wx_endpoint_name(int ep)
{
    return ep >= 0 && ep < WX_EP_COUNT ? wx_endpoints[ep].name : "none";
}

const char *wx_endpoint_path(int ep)
{
    return ep >= 0 && ep < WX_EP_COUNT ? wx_endpoints[ep].path : "";
}

int wx_endpoint_of_path(const char *path)
{
    for (int i = 0; path != NULL && i < WX_EP_COUNT; i++)
        if (strcmp(wx_endpoints[i].path, path) == 0)
            return i;
    return -1;
}

int wx_endpoint_of_name(const char *name)
{
    for (int i = 0; name != NULL && i < WX_EP_COUNT; i++)
        if (strcmp(wx_endpoints[i].name, name) == 0)
            return i;
    return -1;
}
