// SPDX-License-Identifier: Apache-2.0
// libcurl 7.88 (bookworm) and 8.14 (trixie): the HTTP client for Traccar's OsmAnd protocol.
// curl_easy_setopt is variadic, which Swift cannot call: one typed function does the request.
#ifndef RIDEGUARD_CCURL_SHIM_H
#define RIDEGUARD_CCURL_SHIM_H
#include <curl/curl.h>

static size_t rideguard_curl_discard(char *data, size_t size, size_t count, void *context) {
    (void)data; (void)context;
    return size * count;
}

/// One GET of `url` (the answer's body is read and dropped), at most `timeout_seconds`; `ca_file`
/// NULL: the system's CAs. The HTTP status goes to `status`; `error` (CURL_ERROR_SIZE bytes) says
/// what failed.
static inline CURLcode rideguard_curl_get(CURL *curl, const char *url, long timeout_seconds, const char *ca_file,
                                          long *status, char *error) {
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, timeout_seconds);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, timeout_seconds);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, rideguard_curl_discard);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "RideGuard");
    if (ca_file) curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file);
    error[0] = 0;
    CURLcode code = curl_easy_perform(curl);
    if (code == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
    return code;
}
#endif
