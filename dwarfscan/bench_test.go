package dwarfscan

import (
	"debug/dwarf"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"

	"bloop/structure"
)

// libjvmDebug is the separate debug file of OpenJDK's libjvm.so, the
// binary whose walk motivated dwarfscan.
const libjvmDebug = "/usr/lib/debug/.build-id/45/183927463c526d5b9c9d456494ad816a7e3fee.debug"

var libjvm struct {
	once sync.Once
	s    Sections
	err  error
}

// libjvmSections decompresses libjvm's sections once per test binary,
// outside any timer.
func libjvmSections(b *testing.B) Sections {
	if _, err := os.Stat(libjvmDebug); err != nil {
		b.Skip("libjvm debug file absent")
	}
	b.StopTimer()
	defer b.StartTimer()
	libjvm.once.Do(func() {
		var reason string
		libjvm.s, reason, libjvm.err = openELF(libjvmDebug)
		if libjvm.err == nil && reason != "" {
			libjvm.err = io.ErrUnexpectedEOF
		}
	})
	if libjvm.err != nil {
		b.Fatal(libjvm.err)
	}
	return libjvm.s
}

// BenchmarkWalk walks every entry of libjvm, from the section bytes
// (dwarf.New, New) to the last entry. Run it with -benchtime=1x: one
// debug/dwarf walk takes seconds.
func BenchmarkWalk(b *testing.B) {
	s := libjvmSections(b)
	// New alone: unit headers, abbreviation tables, root entries.
	b.Run("dwarfscan-New", func(b *testing.B) {
		runtime.GC() // no garbage of an earlier sub-benchmark in this one
		b.ReportAllocs()
		for b.Loop() {
			if _, err := New(s); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, ranges := range []bool{false, true} {
		name := "debug-dwarf"
		if ranges {
			name += "+ranges"
		}
		b.Run(name, func(b *testing.B) {
			runtime.GC()
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				d, err := stdDWARF(s)
				if err != nil {
					b.Fatal(err)
				}
				n = 0
				r := d.Reader()
				for {
					e, err := r.Next()
					if err != nil {
						b.Fatal(err)
					}
					if e == nil {
						break
					}
					n++
					if ranges && (e.Tag == dwarf.TagSubprogram || e.Tag == dwarf.TagInlinedSubroutine) {
						if _, err := d.Ranges(e); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			b.ReportMetric(float64(n), "entries/op")
		})
	}
	walk := func(b *testing.B, d *Data, units <-chan int) (n int) {
		r := d.Reader()
		var e Entry
		var rs []structure.Range
		for i := range units {
			u := &d.Units()[i]
			r.SeekUnit(i)
			for {
				err := r.Next(&e)
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Error(err)
					return n
				}
				n++
				if e.Tag == TagSubprogram || e.Tag == TagInlinedSubroutine {
					if rs, err = d.Ranges(u, &e, rs[:0]); err != nil {
						b.Error(err)
						return n
					}
				}
			}
		}
		return n
	}
	for _, par := range []int{1, runtime.GOMAXPROCS(0)} {
		name := "dwarfscan+ranges"
		if par > 1 {
			name += "-parallel"
		} else if runtime.GOMAXPROCS(0) == 1 {
			continue
		}
		b.Run(name, func(b *testing.B) {
			runtime.GC()
			b.ReportAllocs()
			var n int
			for b.Loop() {
				d, err := New(s)
				if err != nil {
					b.Fatal(err)
				}
				units := make(chan int, len(d.Units()))
				for i := range d.Units() {
					units <- i
				}
				close(units)
				counts := make([]int, par)
				var wg sync.WaitGroup
				for w := range par {
					wg.Go(func() { counts[w] = walk(b, d, units) })
				}
				wg.Wait()
				n = 0
				for _, c := range counts {
					n += c
				}
			}
			b.ReportMetric(float64(n), "entries/op")
		})
	}
}

// extraLineBenches are line-table parsers outside the standard library
// that BenchmarkLines measures beside the others when their files are
// built in (see bench_delve_test.go).
var extraLineBenches []struct {
	name string
	run  func(b *testing.B, s Sections)
}

// BenchmarkLines runs every unit's line program of libjvm: opening it
// (header, file table) and all its rows. Finding the units (dwarf.New
// and the root entries; New) is done before the timer starts.
func BenchmarkLines(b *testing.B) {
	s := libjvmSections(b)
	b.Run("debug-dwarf", func(b *testing.B) {
		d, err := stdDWARF(s)
		if err != nil {
			b.Fatal(err)
		}
		var roots []*dwarf.Entry
		r := d.Reader()
		for {
			e, err := r.Next()
			if err != nil {
				b.Fatal(err)
			}
			if e == nil {
				break
			}
			roots = append(roots, e)
			r.SkipChildren()
		}
		runtime.GC()
		b.ReportAllocs()
		b.ResetTimer()
		rows := 0
		for b.Loop() {
			rows = 0
			var le dwarf.LineEntry
			for _, e := range roots {
				lr, err := d.LineReader(e)
				if err != nil {
					b.Fatal(err)
				}
				for lr != nil && lr.Next(&le) == nil {
					rows++
				}
			}
		}
		b.ReportMetric(float64(rows), "rows/op")
	})
	b.Run("dwarfscan", func(b *testing.B) {
		d, err := New(s)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		b.ReportAllocs()
		b.ResetTimer()
		rows := 0
		for b.Loop() {
			rows = 0
			var row LineRow
			for i := range d.Units() {
				p, err := d.LineProgram(&d.Units()[i])
				if err != nil {
					b.Fatal(err)
				}
				for p != nil && p.Next(&row) == nil {
					rows++
				}
			}
		}
		b.ReportMetric(float64(rows), "rows/op")
	})
	for _, x := range extraLineBenches {
		b.Run(x.name, func(b *testing.B) { x.run(b, s) })
	}
}
