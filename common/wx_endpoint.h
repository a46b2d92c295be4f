/* wx_endpoint - the WeChat Pay v2 endpoints, one list: each one's name (as
 * the service's log and metrics, the mock's journal, knobs and rules spell
 * it) and its URL path at the gateway. The service's gateway client, the
 * mock's router and fault knobs and the simulator's mock configs name
 * endpoints from here. Pure data; never fails. */
#ifndef IDEMPAY_COMMON_WX_ENDPOINT_H
#define IDEMPAY_COMMON_WX_ENDPOINT_H

/* In the order of the mock's journal and routing (api_endpoint). */
typedef enum {
    WX_EP_UNIFIEDORDER = 0,
    WX_EP_ORDERQUERY,
    WX_EP_REFUND,
    WX_EP_CLOSEORDER,
    WX_EP_DOWNLOADBILL,
    WX_EP_MICROPAY,
    WX_EP_REVERSE,
    WX_EP_REFUNDQUERY,
    WX_EP_COUNT
} wx_endpoint;

/* The endpoint's name ("unifiedorder" ...); "none" out of range. */
const char *wx_endpoint_name(int ep);
/* The endpoint's path ("/pay/unifiedorder", "/secapi/pay/refund" ...); ""
 * out of range. A path under /secapi/ needs the merchant's client
 * certificate. */
const char *wx_endpoint_path(int ep);
/* The endpoint a path names exactly, or -1. */
int wx_endpoint_of_path(const char *path);
/* The endpoint of a name, or -1. */
int wx_endpoint_of_name(const char *name);

#endif
