/* service_ports.c - the stack's ports and their defaults, once (see
 * service_ports.h). */
#include "service_ports.h"

#include "env.h"

long long service_http_port(void)
{
    return env_int("IDEMPAY_HTTP_PORT", 18080);
}

long long service_public_port(void)
{
    return env_int("IDEMPAY_PUBLIC_PORT", service_http_port() + 4);
}

long long service_mock_port(void)
{
    return env_int("IDEMPAY_MOCK_PORT", 18081);
}
