#!/usr/bin/env bash
# Mutation testing against the integration suite (tests/it), for code that
# only the real binary or a real process reaches (annotate's command/ and
# record/, jit-client's C ABI and process-wide session). cargo-mutants 27
# runs the mutated package's own tests whatever --test-package says, so
# this applies each mutant's diff in a worktree of HEAD, builds, runs the
# integration tests named, and puts the file back. FILE may be in any of
# the workspace's packages.
# Usage: scripts/mutants-it.sh FILE LINE_REGEX TEST_FILTER...
#   e.g. scripts/mutants-it.sh annotate/src/command/outputs.rs 'outputs.rs:(30|115):' cli:: safe_files::
# Prints CAUGHT, MISSED, TIMEOUT (caught) or UNVIABLE per mutant; about a
# minute a mutant, at most 15.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 3 ] || { sed -n '2,9p' "$0"; exit 2; }
file=$1 lines=$2
shift 2
case $file in
  annotate/*) package=callgrind-jit ;;
  jit-client/*) package=jit-client ;;
  jitdump/*) package=jitdump ;;
  gdb-jit/*) package=callgrind-jit-gdb ;;
  *) echo "$file is in no package of the workspace" >&2; exit 2 ;;
esac
command -v cargo-mutants >/dev/null || cargo install --locked cargo-mutants
tree=$(mktemp -d /tmp/cgj-mutants-it.XXXXXX)
trap 'git worktree remove --force "$tree/wt" >/dev/null 2>&1 || true; rm -rf "$tree"' EXIT
git worktree add -q "$tree/wt" HEAD
cd "$tree/wt"
export CARGO_TARGET_DIR=$tree/target
cargo mutants -p "$package" -f "$file" --re "$lines" --list --diff 2>/dev/null |
  awk -v dir="$tree" '/^[^ +@-][^ ]*\.rs:[0-9]+:[0-9]+: / { n++; f = sprintf("%s/%04d", dir, n)
                                                          print > (f ".name"); next }
                      n { print > (f ".diff") }'
cargo test -q -p callgrind-jit-suite --test it --no-run >/dev/null 2>&1
for name in "$tree"/*.name; do
  [ -e "$name" ] || { echo "no mutant matches '$lines' in $file"; exit 1; }
  what=$(cat "$name")
  patch -s "$file" < "${name%.name}.diff"
  if ! cargo build -q -p "$package" >/dev/null 2>&1; then
    echo "UNVIABLE $what"
  else
    # A mutant that loops forever (a length never added to) is caught by
    # the time limit: one grew to 4 GB before it was stopped by hand.
    status=0
    timeout 900 cargo test -q -p callgrind-jit-suite --test it -- "$@" >/dev/null 2>&1 || status=$?
    case $status in
      0) echo "MISSED   $what" ;;
      124) echo "TIMEOUT  $what (caught)" ;;
      *) echo "CAUGHT   $what" ;;
    esac
  fi
  git checkout -q -- "$file"
done
