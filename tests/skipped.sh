#!/usr/bin/env bash
# README's test command runs it twice: `tests/skipped.sh --clear` before
# `cargo test`, and `tests/skipped.sh` after, which says how many tests
# could not run on this machine (tmux or the Python venv missing; see
# `skipped` in tests/common/mod.rs), and which. Under CI none may skip:
# those tests fail instead.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
list="${CARGO_TARGET_DIR:-$root/target}/tmp/skipped-tests"
if [ "${1:-}" = --clear ]; then
  rm -f "$list"
  exit 0
fi
if [ -s "$list" ]; then
  n=$(sort -u "$list" | wc -l)
  echo "skipped: $n test(s) could not run here:"
  sort -u "$list" | sed 's/^/  /'
else
  echo "skipped: none (every test ran)"
fi
