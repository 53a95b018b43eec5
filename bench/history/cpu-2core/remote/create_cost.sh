#!/bin/bash
# Creation cost of buffers through troupe-deviced, without zeroing (main's server) and with it.
set -e
# Run from a worktree whose build/release holds the server to compare with main's.
W=$PWD/build
mkdir -p $W/measure
g++ -O2 -std=c++20 -o $W/measure/create_cost bench/history/cpu-2core/remote/create_cost.cpp -lOpenCL
mkdir -p $W/measure/vendors
cp $W/release/icd/troupe.icd $W/measure/vendors/
for label in main:/work/main/build/release/tools/troupe-deviced isolation:$W/release/tools/troupe-deviced; do
  name=${label%%:*}; bin=${label#*:}
  $bin --port 17861 --log-level error > $W/measure/server-$name.log 2>&1 &
  pid=$!
  until grep -q listening $W/measure/server-$name.log; do sleep 0.1; done
  echo "127.0.0.1:17861" > $W/measure/hosts
  echo "== $name ($bin)"
  OCL_ICD_VENDORS=$W/measure/vendors TROUPE_ICD_HOSTS=$W/measure/hosts $W/measure/create_cost
  kill $pid; wait $pid || true
done
