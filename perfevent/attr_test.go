package perfevent

import (
	"encoding/binary"
	"strings"
	"testing"
)

// full is an attribute with every field set.
var full = Attr{Type: 4, Config: 0x1c2, SamplePeriod: 4000, SampleType: 0x10107, ReadFormat: 0x14,
	Flags: FlagFreq | FlagSampleIDAll | FlagInherit, WakeupEvents: 3, BPType: 2, Config1: 11, Config2: 12,
	BranchSampleType: 0x20000, SampleRegsUser: 0xff, SampleStackUser: 8192, ClockID: -1,
	SampleRegsIntr: 0x3, AuxWatermark: 4096, SampleMaxStack: 127, AuxSampleSize: 64, SigData: 99, Config3: 13}

// TestParseAttrSizes writes the full attribute at every size perf has
// used (and one of a later kernel): each version reads the fields it
// has, the rest are zero, and unknown tails are ignored.
func TestParseAttrSizes(t *testing.T) {
	sizes := []struct {
		size int
		last func(*Attr) bool // the version's last field is set
		next func(*Attr) bool // the next version's first field is zero
	}{
		{AttrSizeVer0, func(a *Attr) bool { return a.Config1 == 11 }, func(a *Attr) bool { return a.Config2 == 0 }},
		{AttrSizeVer1, func(a *Attr) bool { return a.Config2 == 12 }, func(a *Attr) bool { return a.BranchSampleType == 0 }},
		{AttrSizeVer2, func(a *Attr) bool { return a.BranchSampleType == 0x20000 }, func(a *Attr) bool { return a.SampleRegsUser == 0 }},
		{AttrSizeVer3, func(a *Attr) bool { return a.SampleStackUser == 8192 && a.ClockID == -1 }, func(a *Attr) bool { return a.SampleRegsIntr == 0 }},
		{AttrSizeVer4, func(a *Attr) bool { return a.SampleRegsIntr == 3 }, func(a *Attr) bool { return a.AuxWatermark == 0 }},
		{AttrSizeVer5, func(a *Attr) bool { return a.AuxWatermark == 4096 && a.SampleMaxStack == 127 }, func(a *Attr) bool { return a.AuxSampleSize == 0 }},
		{AttrSizeVer6, func(a *Attr) bool { return a.AuxSampleSize == 64 }, func(a *Attr) bool { return a.SigData == 0 }},
		{AttrSizeVer7, func(a *Attr) bool { return a.SigData == 99 }, func(a *Attr) bool { return a.Config3 == 0 }},
		{AttrSizeVer8, func(a *Attr) bool { return a.Config3 == 13 }, func(*Attr) bool { return true }},
	}
	for _, tc := range sizes {
		in := full
		in.Size = uint32(tc.size)
		b := AppendAttr(nil, in)
		if len(b) != tc.size {
			t.Fatalf("size %d: wrote %d bytes", tc.size, len(b))
		}
		a, err := ParseAttr(append(b, 0xff, 0xff)) // bytes after the attribute are not its
		if err != nil {
			t.Fatalf("size %d: %v", tc.size, err)
		}
		if a.Size != uint32(tc.size) || a.Type != 4 || a.Config != 0x1c2 || a.SampleType != 0x10107 ||
			!a.Freq() || !a.SampleIDAll() || !tc.last(&a) || !tc.next(&a) {
			t.Errorf("size %d: %+v", tc.size, a)
		}
	}
	// A later kernel's attribute: the known fields, the tail ignored.
	b := AppendAttr(nil, full)
	b = append(b, 1, 2, 3, 4, 5, 6, 7, 8)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(b)))
	a, err := ParseAttr(b)
	want := full
	want.Size = 144
	if err != nil || a != want {
		t.Errorf("size 144: %+v, %v", a, err)
	}
}

func TestParseAttrErrors(t *testing.T) {
	v0 := AppendAttr(nil, Attr{Size: AttrSizeVer0, Type: 1})
	zero := append([]byte(nil), v0...)
	binary.LittleEndian.PutUint32(zero[4:], 0)
	if a, err := ParseAttr(zero); err != nil || a.Size != AttrSizeVer0 || a.Type != 1 {
		t.Errorf("size 0 (the first version): %+v, %v", a, err)
	}
	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"short", v0[:40], "shorter than the first version's 64"},
		{"size below the first version's", func() []byte { b := append([]byte(nil), v0...); b[4] = 32; return b }(), "size is 32 bytes"},
		{"size beyond the bytes", func() []byte { b := append([]byte(nil), v0...); b[4] = 72; return b }(), "size is 72 bytes, 64 available"},
	}
	for _, tc := range tests {
		if _, err := ParseAttr(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestDefaultName(t *testing.T) {
	for _, tc := range []struct {
		a    Attr
		want string
	}{
		{Attr{Type: TypeSoftware, Config: 0}, "cpu-clock"},
		{Attr{Type: TypeSoftware, Config: 2}, "page-faults"},
		{Attr{Type: TypeHardware, Config: 1}, "instructions"},
		{Attr{Type: TypeRaw, Config: 0x1c2}, "raw 0x1c2"},
		{Attr{Type: 9, Config: 3}, "type 9 config 0x3"},
	} {
		if got := DefaultName(&tc.a); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.a, got, tc.want)
		}
	}
}
