// SPDX-License-Identifier: Apache-2.0
// One small API over libgpiod 1.6 (v1) and 2.x (v2). Only v1 defines GPIOD_LINE_BULK_MAX_LINES.
// Every function returns NULL or -1 with errno set on failure; nothing here aborts or prints.
#ifndef RIDEGUARD_CGPIOD_SHIM_H
#define RIDEGUARD_CGPIOD_SHIM_H

#include <gpiod.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <sys/stat.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define RG_GPIOD_API 1
#else
#define RG_GPIOD_API 2
#endif

/// A requested line: the chip stays open as long as the line is held.
typedef struct rg_gpio_line {
    struct gpiod_chip *chip;
    unsigned int offset;
#if RG_GPIOD_API == 1
    struct gpiod_line *line;
#else
    struct gpiod_line_request *request;
    struct gpiod_edge_event_buffer *events;
#endif
} rg_gpio_line;

static inline int rg_gpiod_api_major(void) { return RG_GPIOD_API; }

static inline const char *rg_gpiod_version(void) {
#if RG_GPIOD_API == 1
    return gpiod_version_string();
#else
    return gpiod_api_version();
#endif
}

#if RG_GPIOD_API == 2
/// Scans /dev/gpiochip* (skipping symlinks, as gpiodetect does) for the chip whose label or name is
/// `chip`, or, when `chip` is NULL, the chip that has a line called `line` (its offset goes to `offset`).
static inline struct gpiod_chip *rg_v2_scan(const char *chip, const char *line, unsigned int *offset) {
    DIR *dir = opendir("/dev");
    if (!dir) return NULL;
    struct dirent *entry;
    char path[300];
    while ((entry = readdir(dir)) != NULL) {
        if (strncmp(entry->d_name, "gpiochip", 8) != 0) continue;
        snprintf(path, sizeof path, "/dev/%s", entry->d_name);
        struct stat st;
        if (lstat(path, &st) != 0 || S_ISLNK(st.st_mode)) continue;
        struct gpiod_chip *c = gpiod_chip_open(path);
        if (!c) continue;
        bool match = false;
        if (chip) {
            struct gpiod_chip_info *info = gpiod_chip_get_info(c);
            match = info && (strcmp(gpiod_chip_info_get_label(info), chip) == 0
                             || strcmp(gpiod_chip_info_get_name(info), chip) == 0);
            if (info) gpiod_chip_info_free(info);
        } else {
            int found = gpiod_chip_get_line_offset_from_name(c, line);
            if (found >= 0) { *offset = (unsigned int)found; match = true; }
        }
        if (match) { closedir(dir); return c; }
        gpiod_chip_close(c);
    }
    closedir(dir);
    errno = ENOENT;
    return NULL;
}
#endif

/// Opens the line: by `name` (e.g. "GPIO17") when it is non-NULL, else `offset` on `chip`
/// (a path such as "/dev/gpiochip0", a chip name or a label such as "pinctrl-rp1").
/// `output`: request as output with `initial`; otherwise input with both-edge events.
/// `bias`: 0 as is, 1 pull-up, 2 pull-down, 3 disabled. `debounce_us` is applied by the kernel
/// on v2 and ignored on v1 (the caller debounces in software there).
static inline rg_gpio_line *rg_gpio_line_open(const char *chip, const char *name, unsigned int offset,
                                              const char *consumer, bool output, int initial,
                                              bool active_low, int bias, unsigned long debounce_us) {
    rg_gpio_line *h = calloc(1, sizeof *h);
    if (!h) return NULL;
#if RG_GPIOD_API == 1
    (void)debounce_us;
    struct gpiod_line *line = NULL;
    if (name) {
        line = gpiod_line_find(name);
        if (!line) { if (errno == 0) errno = ENOENT; free(h); return NULL; }
        h->chip = NULL; /* owned by the line in v1 after gpiod_line_find; closed via gpiod_line_close_chip */
    } else {
        h->chip = gpiod_chip_open_lookup(chip);
        if (!h->chip) { int e = errno ? errno : ENOENT; free(h); errno = e; return NULL; }
        line = gpiod_chip_get_line(h->chip, offset);
        if (!line) { int e = errno; gpiod_chip_close(h->chip); free(h); errno = e; return NULL; }
    }
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    if (bias == 1) flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP;
    else if (bias == 2) flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN;
    else if (bias == 3) flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE;
    struct gpiod_line_request_config cfg = {
        .consumer = consumer,
        .request_type = output ? GPIOD_LINE_REQUEST_DIRECTION_OUTPUT : GPIOD_LINE_REQUEST_EVENT_BOTH_EDGES,
        .flags = flags,
    };
    if (gpiod_line_request(line, &cfg, initial) != 0) {
        int e = errno;
        if (h->chip) gpiod_chip_close(h->chip); else gpiod_line_close_chip(line);
        free(h); errno = e; return NULL;
    }
    h->line = line;
    h->offset = gpiod_line_offset(line);
    return h;
#else
    if (name) h->chip = rg_v2_scan(NULL, name, &h->offset);
    else { h->chip = chip[0] == '/' ? gpiod_chip_open(chip) : rg_v2_scan(chip, NULL, NULL); h->offset = offset; }
    if (!h->chip) { int e = errno ? errno : ENOENT; free(h); errno = e; return NULL; }
    struct gpiod_line_settings *s = gpiod_line_settings_new();
    struct gpiod_line_config *lc = gpiod_line_config_new();
    struct gpiod_request_config *rc = gpiod_request_config_new();
    int ok = s && lc && rc;
    if (ok) {
        gpiod_line_settings_set_active_low(s, active_low);
        if (output) {
            gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_OUTPUT);
            gpiod_line_settings_set_output_value(s, initial ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
        } else {
            gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_INPUT);
            gpiod_line_settings_set_edge_detection(s, GPIOD_LINE_EDGE_BOTH);
            gpiod_line_settings_set_event_clock(s, GPIOD_LINE_CLOCK_MONOTONIC);
            if (debounce_us) gpiod_line_settings_set_debounce_period_us(s, debounce_us);
        }
        if (bias == 1) gpiod_line_settings_set_bias(s, GPIOD_LINE_BIAS_PULL_UP);
        else if (bias == 2) gpiod_line_settings_set_bias(s, GPIOD_LINE_BIAS_PULL_DOWN);
        else if (bias == 3) gpiod_line_settings_set_bias(s, GPIOD_LINE_BIAS_DISABLED);
        gpiod_request_config_set_consumer(rc, consumer);
        ok = gpiod_line_config_add_line_settings(lc, &h->offset, 1, s) == 0;
        if (ok) h->request = gpiod_chip_request_lines(h->chip, rc, lc);
        ok = ok && h->request != NULL;
        if (ok && !output) {
            h->events = gpiod_edge_event_buffer_new(16);
            ok = h->events != NULL;
        }
    }
    int e = errno;
    if (s) gpiod_line_settings_free(s);
    if (lc) gpiod_line_config_free(lc);
    if (rc) gpiod_request_config_free(rc);
    if (!ok) {
        if (h->request) gpiod_line_request_release(h->request);
        gpiod_chip_close(h->chip); free(h); errno = e ? e : EINVAL; return NULL;
    }
    return h;
#endif
}

static inline int rg_gpio_line_set(rg_gpio_line *h, int active) {
#if RG_GPIOD_API == 1
    return gpiod_line_set_value(h->line, active);
#else
    return gpiod_line_request_set_value(h->request, h->offset,
                                        active ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
#endif
}

/// The current logical level (1 active, 0 inactive) or -1.
static inline int rg_gpio_line_get(rg_gpio_line *h) {
#if RG_GPIOD_API == 1
    return gpiod_line_get_value(h->line);
#else
    enum gpiod_line_value v = gpiod_line_request_get_value(h->request, h->offset);
    return v == GPIOD_LINE_VALUE_ERROR ? -1 : (v == GPIOD_LINE_VALUE_ACTIVE ? 1 : 0);
#endif
}

/// The descriptor that becomes readable when an edge is pending (to poll with others), or -1.
static inline int rg_gpio_line_fd(rg_gpio_line *h) {
#if RG_GPIOD_API == 1
    return gpiod_line_event_get_fd(h->line);
#else
    return gpiod_line_request_get_fd(h->request);
#endif
}

/// Reads one pending edge: `rising` 1 or 0, `timestamp_ns` on the monotonic clock. 0 or -1.
static inline int rg_gpio_line_read(rg_gpio_line *h, int *rising, uint64_t *timestamp_ns) {
#if RG_GPIOD_API == 1
    struct gpiod_line_event ev;
    if (gpiod_line_event_read(h->line, &ev) != 0) return -1;
    *rising = ev.event_type == GPIOD_LINE_EVENT_RISING_EDGE;
    *timestamp_ns = (uint64_t)ev.ts.tv_sec * 1000000000u + (uint64_t)ev.ts.tv_nsec;
    return 0;
#else
    if (gpiod_line_request_read_edge_events(h->request, h->events, 1) < 1) return -1;
    struct gpiod_edge_event *ev = gpiod_edge_event_buffer_get_event(h->events, 0);
    *rising = gpiod_edge_event_get_event_type(ev) == GPIOD_EDGE_EVENT_RISING_EDGE;
    *timestamp_ns = gpiod_edge_event_get_timestamp_ns(ev);
    return 0;
#endif
}

static inline void rg_gpio_line_close(rg_gpio_line *h) {
    if (!h) return;
#if RG_GPIOD_API == 1
    gpiod_line_release(h->line);
    if (h->chip) gpiod_chip_close(h->chip); else gpiod_line_close_chip(h->line);
#else
    if (h->events) gpiod_edge_event_buffer_free(h->events);
    gpiod_line_request_release(h->request);
    gpiod_chip_close(h->chip);
#endif
    free(h);
}

#endif
