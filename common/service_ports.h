/* service_ports - where the stack's programs listen, defined once: the
 * service's merchant door (IDEMPAY_HTTP_PORT, 18080), its public door
 * (IDEMPAY_PUBLIC_PORT, the merchant door + 4) and the mock gateway
 * (IDEMPAY_MOCK_PORT, 18081), read through common/env (the environment over
 * the configuration file). The service derives its default gateway and
 * notify URLs from them; the simulator and the bench their targets. */
#ifndef IDEMPAY_SERVICE_PORTS_H
#define IDEMPAY_SERVICE_PORTS_H

/* The merchant door's port (IDEMPAY_HTTP_PORT, default 18080). */
long long service_http_port(void);

/* The public door's port: the gateway's notifications only
 * (IDEMPAY_PUBLIC_PORT, default service_http_port() + 4). */
long long service_public_port(void);

/* The mock gateway's port (IDEMPAY_MOCK_PORT, default 18081). */
long long service_mock_port(void);

#endif
