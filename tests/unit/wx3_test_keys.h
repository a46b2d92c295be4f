/* wx3_test_keys.h - one RSA key and its self-signed certificate ("wx3
 * test", ten years) for the APIv3 unit tests (test_wx3_sign.c,
 * test_gateway_v3.c): the merchant's and the platform's stand-in. Test
 * material only; never a deployment's. */
#ifndef IDEMPAY_TESTS_WX3_TEST_KEYS_H
#define IDEMPAY_TESTS_WX3_TEST_KEYS_H

static const char test_key_pem[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDXNvrSA1tqCPox\n"
    "cFkigpU6Uim46U7EwzSGTzOFIkWCf50pO2FzpDhkzi3TIVXnw8Aloxk0q7dfqHrg\n"
    "YKYCm8zRHvNS5CYji6Kk9JcrzNrleDg1BUSRQIgAiWCaSc6NCdZ9zpwM6IIDRmNQ\n"
    "5xv/OyZNK7kkOidVcrbUQrQ1hpxrawTK0aTNZLK/aRFaepAvjTe4lECGpy/bRCIP\n"
    "nuEbH8LfC2RMCIC/RgkoqUIMKPFC0cF5/PWs3fW9dHklipSPbq+BhQRf0Z48oWVd\n"
    "SG67PdzmoXT2FUWK1jIiSI5TAHdaEc/fCuTEkQSZyguubzgeIZZkSkwo3u8ki/wr\n"
    "YI9elzz7AgMBAAECggEARrkWDqq0wTEnCtUZLYqNAIfclxvwWx+s5JAlZZRAFGTc\n"
    "YB7X5Pkr4RCSJYYYZVvCCnxA/bqKPaCvlImeNFA/q98IZg58bATok12fSfD9ZBgw\n"
    "HFhZUoRKzSZX/QvRGS8I8fnR9Tn485uPapgv7p1g9k4ufrWvlFhotXMgJlDQmUmN\n"
    "Die++kd3EcGWeF0bmDDORcuIiXAsqjmN6cuMT+bXCUaq9T4vo8f4mJEhj4X9Iviw\n"
    "a1pvQ3CG/0/Qv7+FY/yW23BYdmHOz2kwhUI68aQheXCQnvwCF34kItz92CI21zyK\n"
    "BrTmZRaUoDK77Rxd97vvHaCcYwh3bbR9+t/GMOHY8QKBgQDwi7zYW3xeSx65oc9/\n"
    "dY8v8Jr7xUFl60k8dPds9lC/YWj+fKblHjS931UkjacfA4n2foQnNs14/Vuc4+l7\n"
    "PiN0f8P5V5QKZSd9Y76g67oF0LFTQuQOnXumgd35kja8VAoUXwwkADqPOPnnP0Bf\n"
    "i5pKVk9PhihdQIYJnf2b0XtDMQKBgQDlCp8I12pfjcwvdhtwCw+68xt0/g8yvpgA\n"
    "x3S2r8mKXm3ZbZY+eoqHa9ngNb9YbohT3sLWCNnbOPzxifaTQJHDPbh2Rayalblx\n"
    "IA939CxJXtbaiHtAJTaCUbfg4W2veeLkYbbiW/K7T5KrE/FA7OSiTfJPMAyGFchF\n"
    "R7Dzpn+/6wKBgBlXHzXLrXZhg4MawLk0sTjjp/AN/62086oiyE36RNdkc6Mbjplk\n"
    "bTnzZQzMv2ZNASOugE2BQHQWfKgyek45ZZLIQuTpjPbrYRWchGB/dMFYEtYqncvM\n"
    "W1JXLAM2m/2K/OTYfnbsbz7XSbxKtYVbN43NOd2uzGHGglhRBH59uvaBAoGBANFo\n"
    "T5UW1sO8cjXmhxl+k4g6oxzo995OUc1MjxJEUED5KvgC8L347dT4r4AFxAdHL892\n"
    "uK5V81Eynlj76XwiKeLW+GLyOugvAhhC1sG2dhMy6b9tzzoLi/XEXxj1IoKwLtjd\n"
    "2gbFSH0nOJK/rfDNZhBasbLi3GBvY+arsEZkMSK3AoGBAJ852BjeAYwAxgJeT/Zs\n"
    "ZMIdPr551v9YG+41ezNYvOaZ76aEdMy5kpx5CY7LNZW24WBmAUQlPl0HsQwkUpHU\n"
    "qzgeUaH183JQ1V2m9fLQular60Asi6ixQtWcdtCKgZLg2PRMI4r5rvKy3ajgFLSW\n"
    "qKMmIyOFSBngC/8haWR6Yjei\n"
    "-----END PRIVATE KEY-----\n";

static const char test_cert_pem[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIDBzCCAe+gAwIBAgIUUVfwnv3Alt4V6+gaRwV6cjLxuOEwDQYJKoZIhvcNAQEL\n"
    "BQAwEzERMA8GA1UEAwwId3gzIHRlc3QwHhcNMjYxMjAyMTMyMTIzWhcNMzYxMTI5\n"
    "MTMyMTIzWjATMREwDwYDVQQDDAh3eDMgdGVzdDCCASIwDQYJKoZIhvcNAQEBBQAD\n"
    "ggEPADCCAQoCggEBANc2+tIDW2oI+jFwWSKClTpSKbjpTsTDNIZPM4UiRYJ/nSk7\n"
    "YXOkOGTOLdMhVefDwCWjGTSrt1+oeuBgpgKbzNEe81LkJiOLoqT0lyvM2uV4ODUF\n"
    "RJFAiACJYJpJzo0J1n3OnAzoggNGY1DnG/87Jk0ruSQ6J1VyttRCtDWGnGtrBMrR\n"
    "pM1ksr9pEVp6kC+NN7iUQIanL9tEIg+e4Rsfwt8LZEwIgL9GCSipQgwo8ULRwXn8\n"
    "9azd9b10eSWKlI9ur4GFBF/RnjyhZV1Ibrs93OahdPYVRYrWMiJIjlMAd1oRz98K\n"
    "5MSRBJnKC65vOB4hlmRKTCje7ySL/Ctgj16XPPsCAwEAAaNTMFEwHQYDVR0OBBYE\n"
    "FPJjKb3Vd8O5O4rvx2xIhep5WntOMB8GA1UdIwQYMBaAFPJjKb3Vd8O5O4rvx2xI\n"
    "hep5WntOMA8GA1UdEwEB/wQFMAMBAf8wDQYJKoZIhvcNAQELBQADggEBAKYxnV8r\n"
    "iPtbzC3ABpCTqgSqKfNoOSBXMlIgv84EQ0bTg7ZxnOBhWGw7SoGCMnGqHnsesm3w\n"
    "p/IwVBJ6OETsLNGyBVowh4OphWXADHSi4E4ki3YQZtbLSLjf6IanTvuMIwrdkM7v\n"
    "6Uy8SxAvPkVqBAlYX2W5OeeXY6PDXcRJDNsoiAXcEnnLo3nrXkAt3Sh/LZ+joD9/\n"
    "5MMoUtIDCYukUv1atjgK0yOcmOUImcQ3u6XkhrReeqYjyi3jxj9VM4slzlNQE9cs\n"
    "/5FJSnaWWMFl9XrKeKDnJljVS/+lqSxyMBUPRAPPRIyjyH24wB5PORKEYf5yYSG3\n"
    "SwWv06MJpYgbJtM=\n"
    "-----END CERTIFICATE-----\n";

#endif
