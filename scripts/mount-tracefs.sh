#!/usr/bin/env bash
# Mounts tracefs if missing (tracepoint probes and -l need it); gpubt also tries this itself.
if [ ! -d /sys/kernel/tracing/events ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
    echo "note: could not mount tracefs; run: mount -t tracefs nodev /sys/kernel/tracing" >&2
fi
exit 0
