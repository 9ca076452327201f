#!/usr/bin/env bash
# Cold builds of two revisions on this machine, in interleaved pairs (the
# reference is measured in the same run, under the same load):
#
#   1. README command 1 to the workbench's first frame: a fresh checkout
#      and an empty target directory, the revision's own README command
#      (its first `cargo run` line: `cargo run --release -- edit …` before
#      the workspace split, `cargo run -- edit …` after) in a tmux pane,
#      timed until the pane shows the DAG;
#   2. README command 2's cargo part, `cargo test` from an empty target
#      directory (build and every test; the npm and pip steps before it
#      only copy what this checkout already installed);
#   3. the size of the binary command 1 built, and of `--profile dist`
#      (the release artefact) with DIST=1;
#   4. the packages the binary builds and how many names come in more than
#      one version (`cargo tree`).
#
#   benches/cold-build/bench.sh BASE_REV [NEW_REV] [PAIRS]
#
# NEW_REV defaults to HEAD, PAIRS to 1. Each step starts from nothing:
# target directories are removed before and after, so the disk holds one
# build at a time. Needs tmux; command 2 also needs what the tests need
# (tests/*/node_modules and target/pyvenv are copied from this checkout).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
base_rev="${1:?usage: bench.sh BASE_REV [NEW_REV] [PAIRS]}"
new_rev="${2:-HEAD}"
pairs="${3:-1}"
command -v tmux >/dev/null || { echo "tmux is missing: apt-get install tmux" >&2; exit 2; }
work="${WORK:-$(mktemp -d)}"
session="cold-build-$$"
trap 'tmux kill-session -t "$session" 2>/dev/null || true' EXIT

checkout() { # label rev → dir
  local dir="$work/$1"
  if [ ! -d "$dir" ]; then
    git clone -q "$root" "$dir"
    git -C "$dir" checkout -q "$(git -C "$root" rev-parse "$2")"
  fi
  echo "$dir"
}

# README command 1 of the checkout: its first `cargo run` line.
command_1() { # dir
  sed -n '/^```sh/,/^```/p' "$1/README.md" | grep -m1 '^cargo run'
}

# Seconds from README command 1 to the first frame. The workbench gets
# its own home and data directories; cargo keeps the user's toolchain.
first_frame() { # dir
  local dir="$1" data="$work/data-$RANDOM" cmd
  cmd=$(command_1 "$dir")
  rm -rf "$dir/target"
  mkdir -p "$data"
  local start end
  start=$(date +%s.%N)
  tmux new-session -d -s "$session" -x 120 -y 30 \
    "cd '$dir' && env RUSTUP_HOME='${RUSTUP_HOME:-$HOME/.rustup}' CARGO_HOME='${CARGO_HOME:-$HOME/.cargo}' HOME='$data' XDG_DATA_HOME='$data/xd' XDG_CONFIG_HOME='$data/xc' PIPEWRIGHT_DATA_DIR='$data/pw' PIPEWRIGHT_CONFIG_DIR='$data/pc' $cmd 2>'$work/cargo.log'; sleep 600"
  until tmux capture-pane -p -t "$session" 2>/dev/null | grep -q "DAG"; do
    if ! tmux has-session -t "$session" 2>/dev/null; then
      echo "the workbench never drew its first frame:" >&2
      tail -20 "$work/cargo.log" >&2
      exit 1
    fi
    sleep 0.2
  done
  end=$(date +%s.%N)
  tmux kill-session -t "$session"
  echo "$end - $start" | bc -l
}

binary_size() { # dir → bytes of the binary command 1 built
  if command_1 "$1" | grep -q -- --release; then
    stat -c %s "$1/target/release/pipewright"
  else
    stat -c %s "$1/target/debug/pipewright"
  fi
}

dist_size() { # dir → bytes of the dist build, or "-"
  if [ "${DIST:-0}" = 1 ] && grep -q '^\[profile.dist\]' "$1/Cargo.toml"; then
    (cd "$1" && cargo build --profile dist -q 2>/dev/null)
    stat -c %s "$1/target/dist/pipewright"
  else
    echo "-"
  fi
}

packages() { # dir → "packages duplicated-names"
  local all dup
  all=$(cd "$1" && cargo tree -p pipewright -e normal,build --prefix none 2>/dev/null | sed 's/ (.*//' | sort -u | wc -l)
  dup=$(cd "$1" && cargo tree -p pipewright -e normal,build --prefix none 2>/dev/null | sed 's/ (.*//' | sort -u | awk '{print $1}' | uniq -d | wc -l)
  echo "$all $dup"
}

# Seconds of a cold `cargo test` (build and run); its summary line.
cold_test() { # dir
  local dir="$1"
  rm -rf "$dir/target"
  mkdir -p "$dir/target"
  for d in tests/interop tests/durable tests/conformance; do
    [ -d "$root/$d/node_modules" ] && [ ! -d "$dir/$d/node_modules" ] && cp -a "$root/$d/node_modules" "$dir/$d/"
  done
  [ -d "$root/target/pyvenv" ] && cp -a "$root/target/pyvenv" "$dir/target/"
  local start end passed failed
  start=$(date +%s.%N)
  (cd "$dir" && CARGO_INCREMENTAL=0 cargo test >"$work/test.log" 2>&1) || true
  end=$(date +%s.%N)
  passed=$(grep -E '^test result' "$work/test.log" | awk '{p+=$4} END {print p+0}')
  failed=$(grep -E '^test result' "$work/test.log" | awk '{f+=$6} END {print f+0}')
  echo "$(echo "$end - $start" | bc -l) $passed $failed"
}

printf '%-5s %-10s %s\n' label rev measurement
for _ in $(seq "$pairs"); do
  for label in base new; do
    rev=$base_rev
    [ "$label" = new ] && rev=$new_rev
    dir=$(checkout "$label" "$rev")
    secs=$(first_frame "$dir")
    size=$(binary_size "$dir")
    dist=$(dist_size "$dir")
    read -r pkgs dups < <(packages "$dir")
    rm -rf "$dir/target"
    printf '%-5s %-10s command 1 to first frame %6.0f s | its binary %5.1f MB | dist %s | %s packages, %s names twice or more\n' \
      "$label" "$(git -C "$dir" rev-parse --short HEAD)" "$secs" "$(echo "$size / 1000000" | bc -l)" \
      "$([ "$dist" = - ] && echo - || printf '%.1f MB' "$(echo "$dist / 1000000" | bc -l)")" "$pkgs" "$dups"
  done
  for label in base new; do
    dir="$work/$label"
    read -r secs passed failed < <(cold_test "$dir")
    rm -rf "$dir/target"
    printf '%-5s %-10s command 2 (cargo test, cold) %6.0f s | %s passed, %s failed\n' \
      "$label" "$(git -C "$dir" rev-parse --short HEAD)" "$secs" "$passed" "$failed"
  done
done
