#!/usr/bin/env bash
# summary.sh: what `make test` ran on real parts and what it skipped for a missing binary, from the results
# tests/support/suite.sh recorded (under a failed suite, the lines that say what failed); the last line counts them.
# Exit 1 when a suite failed.
set -euo pipefail
results=${SUITE_RESULTS:-$(cd "$(dirname "$0")/../.." && pwd)/.build/results}
passed=0 failed=0 skipped=0
echo "===== suites on real parts ====="
for file in "$results"/*; do
  [ -f "$file" ] || continue
  read -r verdict rest < "$file"
  echo "$verdict $rest"
  tail -n +2 "$file"
  case $verdict in passed) passed=$((passed + 1));; failed) failed=$((failed + 1));; *) skipped=$((skipped + 1));; esac
done
echo "suites: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
