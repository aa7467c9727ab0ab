// SPDX-License-Identifier: Apache-2.0
// libgps 3.22 (API 11) and 3.25 (API 14) differ in their structures' layout and in the names of the
// fix status constants; this header hides both so the Swift code is the same on either.
#ifndef RIDEGUARD_CGPS_SHIM_H
#define RIDEGUARD_CGPS_SHIM_H
#include <gps.h>
#include <math.h>
#include <stdbool.h>

static inline int rg_gps_api_major(void) { return GPSD_API_MAJOR_VERSION; }

/* One report line of gpsd's JSON protocol, parsed by libgps into `data` (the agent reads the socket
   itself and hands libgps only lines that begin as gpsd writes every report). */
static inline int rg_gps_unpack(char *line, struct gps_data_t *data) { return gps_unpack(line, data); }

/// The fields of a usable fix, and whether it is one: mode >= 2D and finite coordinates.
typedef struct rg_gps_fix {
    bool usable;
    int mode;
    bool has_time;
    double time_s;       /* seconds since the epoch, when has_time */
    double latitude, longitude, altitude_m, speed_mps, track_deg, eph_m;
} rg_gps_fix;

static inline rg_gps_fix rg_gps_current_fix(const struct gps_data_t *data) {
    rg_gps_fix f = {0};
    f.mode = data->fix.mode;
    f.latitude = data->fix.latitude;
    f.longitude = data->fix.longitude;
    f.altitude_m = data->fix.altMSL;
    f.speed_mps = data->fix.speed;
    f.track_deg = data->fix.track;
    f.eph_m = data->fix.eph;
    f.has_time = (data->set & TIME_SET) && data->fix.time.tv_sec > 0;
    f.time_s = (double)data->fix.time.tv_sec + (double)data->fix.time.tv_nsec / 1e9;
    f.usable = (data->set & MODE_SET || data->fix.mode >= MODE_2D) && data->fix.mode >= MODE_2D
               && isfinite(f.latitude) && isfinite(f.longitude);
    return f;
}
#endif
