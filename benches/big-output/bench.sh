#!/usr/bin/env bash
# A node with a big output: the size of the run pipewright saves and the
# peak memory of `pipewright run`, for one binary or two in interleaved
# pairs (a reference measured in the same run). Then one answer of 500,000
# small content items (13 MB, from tests/interop/faulty_server.py): peak
# memory and wall time.
#
#   cargo build --release
#   benches/big-output/bench.sh [KB] [PAIRS]
#
# Environment: PIPEWRIGHT_BIN (default target/release/pipewright) and,
# to compare, BASE_BIN (another build, e.g. of the previous commit).
# Peak RSS is GNU time's %M: the largest of pipewright and the processes it
# waited for (the demo server it starts).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
kb="${1:-5120}"
pairs="${2:-3}"
bin="${PIPEWRIGHT_BIN:-$root/target/release/pipewright}"
base="${BASE_BIN:-}"
[ -x "$bin" ] || { echo "no binary at $bin: cargo build --release" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "GNU time is missing: apt-get install time" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf 'pipe:\n  - id: big\n    tool: big_output\n    args: { kb: %s }\n' "$kb" > "$work/big.yml"
payload=$((kb * 1024))

one() { # label binary
  local data="$work/data-$1-$RANDOM"
  local rss
  PIPEWRIGHT_DATA_DIR="$data" /usr/bin/time -f "%M" -o "$work/rss" "$2" run "$work/big.yml" >/dev/null 2>&1
  rss=$(tail -1 "$work/rss")
  local saved
  saved=$(find "$data/runs" -name '*.json' -printf '%s\n' | head -1)
  printf '%-6s payload %9d B  saved %10d B (%.2fx)  peak RSS %7d KiB (%.1fx payload)\n' \
    "$1" "$payload" "$saved" "$(echo "$saved / $payload" | bc -l)" "$rss" \
    "$(echo "$rss * 1024 / $payload" | bc -l)"
}

for _ in $(seq "$pairs"); do
  [ -n "$base" ] && one base "$base"
  one new "$bin"
done

python="${PYTHON:-python3}"
printf 'servers:\n  many:\n    command: %s\n    args: [%s, many, %s]\npipe:\n  - id: many\n    tool: fault\n' \
  "$python" "$root/tests/interop/faulty_server.py" "$work/many.pid" > "$work/many.yml"
many() { # label binary
  local data="$work/data-$1-$RANDOM"
  PIPEWRIGHT_DATA_DIR="$data" /usr/bin/time -f "%M %e" -o "$work/rss" "$2" run "$work/many.yml" >/dev/null 2>&1
  read -r rss secs < <(tail -1 "$work/rss")
  printf '%-6s 500,000 items (13 MB)  peak RSS %8d KiB  wall %6.2f s\n' "$1" "$rss" "$secs"
}
for _ in $(seq "$pairs"); do
  [ -n "$base" ] && many base "$base"
  many new "$bin"
done
