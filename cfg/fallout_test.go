package cfg

import (
	"reflect"
	"testing"

	"bloop/loader"
)

// TestFallOut: with FallOut, a call that ends its procedure falls through
// into the next one, as Dyninst parses aarch64's _start into call_weak_fn,
// and the branches inside the procedure entered so are followed.
func TestFallOut(t *testing.T) {
	code := cat(
		le32(0xd503201f), // 1000: nop
		le32(0x94000400), // 1004: bl 2004 (abort@plt, not known not to return)
		le32(0xb4000060), // 1008: cbz x0, 1014          next procedure
		le32(0xd503201f), // 100c: nop
		le32(0x17fffffe), // 1010: b 1008
		le32(0xd65f03c0), // 1014: ret
	)
	img := loader.FromSections(loader.ARM64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}}, nil)
	region := func(t uint64, callNext bool) (uint64, uint64, bool) {
		if callNext && t >= 0x1008 && t < 0x1018 {
			return 0x1008, 0x1018, true
		}
		return 0, 0, false
	}
	for _, tc := range []struct {
		fallOut   bool
		want      []blockShape
		continued []uint64
	}{
		{false, []blockShape{{0x1000, 0x1008, nil}}, nil},
		{true, []blockShape{
			{0x1000, 0x1008, []uint64{0x1008}},
			{0x1008, 0x100c, []uint64{0x1014, 0x100c}},
			{0x100c, 0x1014, []uint64{0x1008}},
			{0x1014, 0x1018, nil},
		}, []uint64{0x1008}},
	} {
		g, err := Build(img, 0x1000, 0x1000, 0x1008, Options{Region: region, FallOut: tc.fallOut})
		if err != nil {
			t.Fatal(err)
		}
		if got := shape(g); !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(g.Continued, tc.continued) {
			t.Errorf("FallOut %v: blocks %+v continued %x\nwant %+v continued %x", tc.fallOut, got, g.Continued, tc.want, tc.continued)
		}
	}
}
