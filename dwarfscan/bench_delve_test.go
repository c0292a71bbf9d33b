//go:build delvebench

// delve's line parser needs golang.org/x/telemetry, which bloop's go.sum
// lacks, so this file builds only with the tag and an alternate module
// file that has it:
//
//	go test -tags delvebench -modfile=dwarfscan/testdata/delve.mod -mod=mod \
//		-run XXX -bench . -benchtime=1x ./dwarfscan/

package dwarfscan

import (
	"runtime"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/line"
)

func init() {
	extraLineBenches = append(extraLineBenches, struct {
		name string
		run  func(b *testing.B, s Sections)
	}{"delve", benchDelveLines})
}

// benchDelveLines parses every line program with delve's ParseAll and runs
// each state machine once through AllPCsBetween over all addresses.
func benchDelveLines(b *testing.B, s Sections) {
	runtime.GC()
	b.ReportAllocs()
	pcs := 0
	for b.Loop() {
		pcs = 0
		for _, li := range line.ParseAll(s.Line, s.LineStr, nil, 0, false, 8) {
			got, err := li.AllPCsBetween(0, ^uint64(0), "", -1)
			if err != nil {
				b.Fatal(err)
			}
			pcs += len(got)
		}
	}
	b.ReportMetric(float64(pcs), "stmt-pcs/op")
}
