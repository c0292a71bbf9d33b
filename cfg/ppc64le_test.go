package cfg

import (
	"reflect"
	"testing"

	"bloop/loader"
)

func words(ws ...uint32) []byte {
	var b []byte
	for _, w := range ws {
		b = append(b, le32(w)...)
	}
	return b
}

// TestBuildPPC64LE: graphs of ppc64le code, whose conditional returns
// and PC reads have no x86 counterpart.
func TestBuildPPC64LE(t *testing.T) {
	const base = 0x1000
	tests := []struct {
		name  string
		code  []byte
		noret map[uint64]bool
		want  []blockShape
		undec int // undecodable bytes
	}{
		{
			name: "bdnz loop; blr",
			// 1000: addi r3,r3,1 ; 1004: bdnz 1000 ; 1008: blr
			code: words(0x38630001, 0x4200fffc, 0x4e800020),
			want: []blockShape{{0x1000, 0x1008, []uint64{0x1000, 0x1008}}, {0x1008, 0x100c, nil}},
		},
		{
			name: "beqlr returns or falls through",
			// 1000: cmpdi r3,0 ; 1004: beqlr ; 1008: li r3,1 ; 100c: blr
			code: words(0x2c230000, 0x4d820020, 0x38600001, 0x4e800020),
			want: []blockShape{{0x1000, 0x1008, []uint64{0x1008}}, {0x1008, 0x1010, nil}},
		},
		{
			name: "bcl 20,31,.+4 reads the PC: no call, no block end",
			// 1000: mflr r0 ; 1004: bcl 20,31,1008 ; 1008: mflr r11 ; 100c: blr
			code: words(0x7c0802a6, 0x429f0005, 0x7d6802a6, 0x4e800020),
			want: []blockShape{{0x1000, 0x1010, nil}},
		},
		{
			name: "a call followed by a traceback table: the callee does not return",
			// 1000: bl 2000 ; 1004: .long 0 ; 1008: .long 0x1000000
			code: words(0x48001001, 0x00000000, 0x01000000),
			want: []blockShape{{0x1000, 0x1004, nil}},
		},
		{
			name: "the same after the nop that would restore the TOC pointer",
			// 1000: bl 2000 ; 1004: nop ; 1008: .long 0 ; 100c: .long 0x1000000
			code: words(0x48001001, 0x60000000, 0x00000000, 0x01000000),
			want: []blockShape{{0x1000, 0x1004, []uint64{0x1004}}, {0x1004, 0x1008, nil}},
		},
		{
			name: "further on, bytes that do not decode are undecodable",
			// 1000: bl 2000 ; 1004: nop ; 1008: nop ; 100c: .long 0
			code:  words(0x48001001, 0x60000000, 0x60000000, 0x00000000),
			want:  []blockShape{{0x1000, 0x1004, []uint64{0x1004}}, {0x1004, 0x100c, nil}},
			undec: 4,
		},
		{
			name:  "bl to a noreturn procedure (at its local entry: pipeline maps both)",
			code:  words(0x48001009, 0x60000000, 0x4e800020), // bl 2008 ; nop ; blr
			noret: map[uint64]bool{0x2008: true},
			want:  []blockShape{{0x1000, 0x1004, nil}},
		},
		{
			name: "trap ends its path",
			// 1000: beq 100c ; 1004: trap ; 1008: nop ; 100c: blr
			code: words(0x4182000c, 0x7fe00008, 0x60000000, 0x4e800020),
			want: []blockShape{{0x1000, 0x1004, []uint64{0x100c, 0x1004}}, {0x1004, 0x1008, nil}, {0x100c, 0x1010, nil}},
		},
	}
	for _, tc := range tests {
		img := loader.FromSections(loader.PPC64LE, []*loader.Section{{Name: ".text", Addr: base, Data: tc.code}}, nil)
		opt := Options{NoReturn: func(a uint64) bool { return tc.noret[a] }}
		g, err := Build(img, base, base, base+uint64(len(tc.code)), opt)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := shape(g); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
		if g.Undecodable != tc.undec {
			t.Errorf("%s: %d undecodable bytes, want %d", tc.name, g.Undecodable, tc.undec)
		}
	}
}
