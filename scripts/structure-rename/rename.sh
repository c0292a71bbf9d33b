#!/bin/sh
# rename.sh: the mechanical part of issue 35's format move (h-format),
# to re-run over a merged tree at its root: every use of the scope model,
# writers and ranges moved from scopes, golden, loader and dwarfscan to
# structure (and golden's diff engine to diff) is requalified, then the
# imports fixed. Safe to run twice. Needs python3 and goimports; build
# the latter offline from the module cache with:
#   mkdir -p /tmp/gi && cd /tmp/gi && printf 'module gi\ngo 1.26\nrequire golang.org/x/tools v0.52.0\n' >go.mod &&
#   printf 'package main\nimport _ "golang.org/x/tools/imports"\nfunc main(){}\n' >main.go &&
#   GOPROXY=off GOFLAGS=-mod=mod go build -o /tmp/gi/goimports golang.org/x/tools/cmd/goimports
set -e
here=$(cd "$(dirname "$0")" && pwd)
GOIMPORTS=${GOIMPORTS:-/tmp/gi/goimports}
NAMES="Kind Proc Alien Loop Stmt Scope Inline InlineCall InlineCallee InlineGuard InlineAlien GuardName NewAlien NewGuard NewCallee CallSite File Module Walk ProcResult NewModule XMLWriter NewXMLWriter WriteXML EscapeAttr JSONWriter NewJSONWriter WriteJSON EscapeJSON FormatRanges ParseRanges MergeRanges Range"
alt=$(echo $NAMES | tr ' ' '|')
files=$(git ls-files '*.go' | grep -v '^structure/')
# 1. Qualified uses from other packages.
sed -i -E \
  -e "s/\bscopes\.($alt)\b/structure.\1/g" \
  -e 's/\bloader\.(Range|MergeRanges)\b/structure.\1/g' \
  -e 's/\bdwarfscan\.Range\b/structure.Range/g' \
  -e 's/\bgolden\.(Node|Doc|Attr|Parse|ParseFile|ParseError|ParseRanges|FormatRanges|Range|MergeRanges|Canonicalize|RangelessError|BaseName|RootTag)\b/structure.\1/g' \
  -e 's/\bgolden\.([A-Z])/diff.\1/g' \
  $files
# pipeline's test helper named structure would shadow the package.
sed -i -E -e 's/^func structure\(t testing.TB/func compatStructure(t testing.TB/' \
  -e 's/\bstructure\(t, /compatStructure(t, /g' \
  -e 's/^\/\/ structure is `bloop struct/\/\/ compatStructure is `bloop struct/' \
  -e 's/^\/\/ structureAllowing is structure,/\/\/ structureAllowing is compatStructure,/' pipeline/*_test.go
"$GOIMPORTS" -local bloop -w $(git diff --name-only -- '*.go')
# 2. Unqualified uses inside the packages the names left (the compiler
#    says where: each "undefined: X" gets "structure." in front).
python3 "$here/qualify.py" dwarfscan structure Range
python3 "$here/qualify.py" loader structure Range MergeRanges
python3 "$here/qualify.py" scopes structure $NAMES
# 3. structure.Range{a, b} -> structure.Range{Lo: a, Hi: b} where vet asks.
python3 "$here/keyed.py" $(go list ./... | sed 's|^bloop/||;s|^bloop$|.|')
# 4. Imports again (bloop's own in their group after the standard library's).
"$GOIMPORTS" -local bloop -w $(git diff --name-only -- '*.go'; git ls-files --others --exclude-standard -- '*.go')
go build ./... && go vet ./...
