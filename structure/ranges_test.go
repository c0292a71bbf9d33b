package structure

import (
	"slices"
	"strings"
	"testing"
)

func TestRangesRoundTrip(t *testing.T) {
	tests := []struct {
		v    string
		want []Range
	}{
		{"{}", nil},
		{"{[0x10-0x20)}", []Range{{0x10, 0x20}}},
		{"{[0x10-0x20) [0x30-0x31)}", []Range{{0x10, 0x20}, {0x30, 0x31}}},
		{"{[0-0x8)}", []Range{{0, 8}}},
		{"{[0x1110-0x1111)}", []Range{{0x1110, 0x1111}}},
		{"{[0x10-0x20) [0x20-0x30)}", []Range{{0x10, 0x20}, {0x20, 0x30}}}, // adjacent is allowed
		{"{[0xfffffffffffffffe-0xffffffffffffffff)}", []Range{{1<<64 - 2, 1<<64 - 1}}},
	}
	for _, tt := range tests {
		got, err := ParseRanges(tt.v)
		if err != nil {
			t.Errorf("ParseRanges(%q): %v", tt.v, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("ParseRanges(%q) = %v, want %v", tt.v, got, tt.want)
		}
		if s := FormatRanges(got); s != tt.v {
			t.Errorf("FormatRanges(ParseRanges(%q)) = %q", tt.v, s)
		}
	}
}

func TestRangesErrors(t *testing.T) {
	tests := []struct{ v, msg string }{
		{"", "enclosed"},
		{"[0x10-0x20)", "enclosed"},
		{"{[0x10-0x20)", "enclosed"},
		{"{ }", "form [lo-hi)"},
		{"{[0x10-0x20)  [0x30-0x40)}", "form [lo-hi)"},
		{"{[0x10-0x20),[0x30-0x40)}", "address"},
		{"{[0x10-0x20), [0x30-0x40)}", "form [lo-hi)"},
		{"{[0x10 0x20)}", "form [lo-hi)"},
		{"{[0x10-0x20]}", "form [lo-hi)"},
		{"{[0x10,0x20)}", "no '-'"},
		{"{[0x0-0x20)}", "address \"0x0\""},
		{"{[0X10-0x20)}", "address \"0X10\""},
		{"{[0x1A-0x20)}", "address \"0x1A\""},
		{"{[16-0x20)}", "address \"16\""},
		{"{[0x010-0x20)}", "address \"0x010\""},
		{"{[0x-0x20)}", "address \"0x\""},
		{"{[-0x20)}", "address \"\""},
		{"{[0x10-0x10000000000000000)}", "address"},
		{"{[0x20-0x10)}", "empty or reversed"},
		{"{[0x20-0x20)}", "empty or reversed"},
		{"{[0x30-0x40) [0x10-0x20)}", "out of order"},
		{"{[0x10-0x30) [0x20-0x40)}", "overlaps"},
	}
	for _, tt := range tests {
		_, err := ParseRanges(tt.v)
		if err == nil {
			t.Errorf("ParseRanges(%q): no error", tt.v)
			continue
		}
		if !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("ParseRanges(%q) = %v, want message containing %q", tt.v, err, tt.msg)
		}
	}
}

func TestMergeRanges(t *testing.T) {
	got := MergeRanges([]Range{{0x30, 0x40}, {0x10, 0x20}, {0x20, 0x28}, {0x35, 0x50}})
	want := []Range{{0x10, 0x28}, {0x30, 0x50}}
	if !slices.Equal(got, want) {
		t.Errorf("MergeRanges = %v, want %v", got, want)
	}
}

func FuzzRanges(f *testing.F) {
	for _, s := range []string{"{}", "{[0x10-0x20) [0x30-0x31)}", "{[0-0x1)}", "{[0x10-0x20)", "{[0x2-0x1)}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		rs, err := ParseRanges(v)
		if err != nil {
			return
		}
		if s := FormatRanges(rs); s != v {
			t.Fatalf("FormatRanges(ParseRanges(%q)) = %q", v, s)
		}
	})
}
