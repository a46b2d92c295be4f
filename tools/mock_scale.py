#!/usr/bin/env python3
"""mock_scale - the line `./stack up` prints about the mock's clock scale:
the knobs of IDEMPAY_MOCK_DEFAULTS (argv[1], a JSON object) that differ from
WeChat's values, each with WeChat's beside it, then the knobs WeChat has no
value for. Prints one line; exit 0 also when the JSON is bad (it says so)."""
import json
import sys

WECHAT = {"prepay_ttl_ms": 7200000, "time_expire_min_ms": 300000, "closeorder_min_age_ms": 300000,
          "userpaying_ms": 30000, "reverse_min_wait_ms": 15000,
          "clock_offset_ms": 0}


def show(k, v):
    if isinstance(v, bool):
        return "%s %s" % (k, str(v).lower())
    if k.endswith("_ms"):
        return "%s %gs" % (k[:-3], v / 1000.0)
    return "%s %s" % (k, v)


def main():
    try:
        knobs = json.loads(sys.argv[1] or "{}")
    except ValueError:
        print("mock clock scale: IDEMPAY_MOCK_DEFAULTS is not JSON (the mock ignores it)")
        return
    parts = ["%s (WeChat %s)" % (show(k, v), show(k, WECHAT[k]).split(" ", 1)[1])
             for k, v in knobs.items() if k in WECHAT and v != WECHAT[k]]
    parts += [show(k, v) for k, v in knobs.items() if k not in WECHAT]
    print("mock clock scale: " + (", ".join(parts) if parts else "WeChat's values"))


if __name__ == "__main__":
    main()
