package pipeline

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"bloop/internal/testenv"
	"bloop/isa"
	"bloop/loader"
)

// TestCompatEntryJump builds the shape of issue 40's python3.11d row with
// gcc 12 -Og -g: max_char, like python's ucs1lib_find_max_char, starts
// with a jump to its loop's test further down. Dyninst 12.3's x86 tail-call
// test takes a jump that is the only instruction of a function's entry
// block for a tail call (IA_x86::isTailCall), and its parse makes a
// function at the target, which Parser::finalize keeps (the one block of
// max_char does not hold the target). So hpcstruct writes max_char as its
// jump alone, and the loop, whose code starts before the target, under
// <unknown procedure> 0x<target>, with no gaps in max_char: the symbol's
// gaps are computed over both functions' code.
func TestCompatEntryJump(t *testing.T) {
	src := testenv.Fixture(t, "testdata/entryjump/maxchar.c")
	gcc := testenv.NeedAny(t, "gcc-12", "gcc")
	abs, err := filepath.Abs(src)
	if err != nil {
		t.Fatal(err)
	}
	bin := buildIn(t, t.TempDir(), gcc, []string{"-g", "-Og"}, abs, "maxchar")
	img, err := loader.Open(bin, loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var fn *loader.Func
	for _, f := range img.Funcs {
		if f.Name == "max_char" {
			fn = f
		}
	}
	if fn == nil {
		t.Fatal("no max_char")
	}
	in := isa.For(img.Machine).Decode(img.Bytes(fn.Addr, fn.End), fn.Addr)
	if in.Kind != isa.Jump || in.Target <= fn.Addr || in.Target >= fn.End {
		t.Fatalf("max_char does not start with a jump into itself: the build lacks the shape")
	}
	xml := compatStructure(t, bin, 1)
	own := procText(t, xml, "max_char")
	if n := strings.Count(own, "<S "); n != 1 || strings.Contains(own, "<L ") {
		t.Errorf("compat mode: max_char is not its entry jump alone\n%s", own)
	}
	inner := procText(t, xml, fmt.Sprintf("&lt;unknown procedure&gt; %#x [maxchar]", in.Target))
	if !strings.Contains(inner, fmt.Sprintf(`ln="targ%x"`, in.Target)) || !strings.Contains(inner, "<L ") {
		t.Errorf("compat mode: the function at the jump's target does not hold the loops\n%s", inner)
	}
	below := false
	for _, m := range rangeLo.FindAllStringSubmatch(inner, -1) {
		if lo, _ := strconv.ParseUint(m[1], 16, 64); lo > fn.Addr && lo < in.Target {
			below = true
		}
	}
	if !below {
		t.Errorf("compat mode: none of the code before %#x is the target's function's\n%s", in.Target, inner)
	}
	// The default mode keeps the loops in max_char.
	def := procText(t, structureWith(t, bin, Options{Workers: 1}, nil), "max_char")
	if !strings.Contains(def, "<L ") {
		t.Errorf("default mode: max_char lost its loops\n%s", def)
	}
}

// rangeLo finds the starts of the address ranges of a structure file.
var rangeLo = regexp.MustCompile(`\[0x([0-9a-f]+)-`)
