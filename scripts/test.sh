#!/usr/bin/env bash
# The tests: vet, the unit, golden and differential tests (which also run
# every fuzz target's seed corpus), the HTML pages in a browser (the
# nested module browser/, which alone requires chromedp), then each fuzz
# target for a short fixed time. FUZZTIME overrides that time (0 skips
# fuzzing).
set -euo pipefail
cd "$(dirname "$0")/.."
go vet ./...
go test ./...
(cd browser && go vet ./... && go test ./...)
if [ "${FUZZTIME:-10s}" != 0 ]; then
  scripts/fuzz.sh "${FUZZTIME:-10s}"
fi
