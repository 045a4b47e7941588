#!/usr/bin/env bash
# Every retrieval set in one run, from the checkout this script is in, each script's whole output kept in OUT.
#
# A ranking change is judged on all of these at once, beside main's figures from the same run: compare two
# checkouts by running this script from each (retrieval figures do not depend on load, so the two may run one
# after the other). The served hold-outs 4-6 are check sets: read their aggregates only, never their questions.
#
#   bash bench/every_set.sh                    # everything, LoCoMo included (~15-25 min on 2 busy cores)
#   NOLOCOMO=1 bash bench/every_set.sh         # without LoCoMo (the slowest set)
#   NOSERVED=1 bash bench/every_set.sh         # without the served sets (no server is started)
#   NOHOLDOUTS=1 bash bench/every_set.sh       # without the served check sets 4-6
#   OUT=/tmp/mine PYTHON=/path/python bash bench/every_set.sh
#
# The summary at the end is each output's first lines of figures; the files in OUT hold the rest.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
PYTHON="${PYTHON:-$here/.venv/bin/python}"
OUT="${OUT:-$(mktemp -d -t memdir-sets-XXXXXX)}"
mkdir -p "$OUT"
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"

run() {  # run NAME ARGS...: one bench script's output into OUT/NAME.txt
    local name="$1"; shift
    echo "== $name: $*" >&2
    if ! "$PYTHON" "$@" >"$OUT/$name.txt" 2>"$OUT/$name.err"; then
        echo "!! $name failed: see $OUT/$name.err" >&2
    fi
}

run coding bench/coding.py
run coding-holdout bench/coding.py --holdout
run long bench/coding.py --long-set
run long-padded bench/coding.py --long-set --padded
run fresh bench/fresh_paraphrase.py
run book bench/book_questions.py
run book-holdout bench/book_questions.py --holdout
if [ -z "${NOSERVED:-}" ]; then
    for set in served notes tune9; do
        run "served-$set" bench/served_fresh.py --set "$set" --example-only
        run "served-$set-coding" bench/served_fresh.py --set "$set"
    done
    if [ -z "${NOHOLDOUTS:-}" ]; then
        for set in holdout holdout5 holdout6 holdout7 holdout8 holdout9; do
            run "served-$set" bench/served_fresh.py --set "$set" --example-only
            run "served-$set-coding" bench/served_fresh.py --set "$set"
        done
    fi
fi
if [ -z "${NOLOCOMO:-}" ]; then
    run locomo bench/locomo.py --mode all
fi

echo "# every set, $(git rev-parse --short HEAD 2>/dev/null) $(date -u +%FT%TZ), outputs in $OUT"
for file in "$OUT"/*.txt; do
    echo "## $(basename "$file" .txt)"
    grep -E '[0-9]\.[0-9]{3}' "$file" | head -12
done
