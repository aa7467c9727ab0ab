#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns a trace (CSV v1) into what /dev/rideguard-imu-sim measures: records of six little-endian
int32, accel x y z in µm/s² then gyro x y z in µrad/s, one per sample.

    trace-feed.py TRACE OUT            every sample of the trace
    trace-feed.py TRACE OUT --rest N   the first sample, N times (the bike as it stood before the trace)

Prints the trace's rate (its `# rate_hz:` line) so that the caller can run the device at it.
"""
import struct
import sys


def main():
    path, out = sys.argv[1], sys.argv[2]
    rest = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--rest" else None
    rate, header, records = None, None, []
    with open(path, encoding="utf-8-sig") as trace:
        for number, line in enumerate(trace, 1):
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                if line.startswith("# rate_hz:"):
                    rate = float(line.split(":", 1)[1])
                continue
            fields = line.split(",")
            if header is None:
                header = fields
                missing = {"ax", "ay", "az"} - set(header)
                if missing:
                    sys.exit(f"{path}:{number}: header has no {', '.join(sorted(missing))} column")
                continue
            row = dict(zip(header, fields))
            values = [float(row[k]) * 1e6 for k in ("ax", "ay", "az")]
            values += [float(row.get(k) or 0) * 1e6 for k in ("gx", "gy", "gz")]
            records.append(struct.pack("<6i", *(round(v) for v in values)))
            if rest is not None:
                records = records * rest
                break
    if not records:
        sys.exit(f"{path}: no samples")
    with open(out, "wb") as feed:
        feed.write(b"".join(records))
    print(int(rate) if rate else 100)


if __name__ == "__main__":
    main()
