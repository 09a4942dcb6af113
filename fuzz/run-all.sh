#!/bin/sh
# Runs each named target for SECONDS (default 600) in turn, one job, logs in /tmp/fuzz-<t>.log.
secs=${SECONDS_PER_TARGET:-600}
cd "$(dirname "$0")"
for t in "$@"; do
  mkdir -p corpus/$t
  seeds=""; [ -d seeds/$t ] && seeds=seeds/$t
  max_len=""; [ $t = rtps_message ] && max_len=-max_len=65536
  cargo +nightly fuzz run $t corpus/$t $seeds -- -max_total_time=$secs -rss_limit_mb=1024 \
    -timeout=2 -workers=1 $max_len -print_final_stats=1 > /tmp/fuzz-$t.log 2>&1
  echo "$t exit $? $(date +%T)" >> /tmp/fuzz-summary.log
done
