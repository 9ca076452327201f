#!/usr/bin/env bash
# The last step of README's test command: says how many tests could not
# run on this machine (tmux or the Python venv missing; see
# tests/common/mod.rs `skipped`), and which. Under CI none may skip: the
# tests themselves fail instead.
set -euo pipefail
list="$(cd "$(dirname "$0")/.." && pwd)/target/tmp/skipped-tests"
if [ -s "$list" ]; then
  n=$(sort -u "$list" | wc -l)
  echo "skipped: $n test(s) could not run here:"
  sort -u "$list" | sed 's/^/  /'
else
  echo "skipped: none (every test ran)"
fi
