package loader

import (
	"testing"

	"bloop/structure"
)

func TestMergeRanges(t *testing.T) {
	got := structure.MergeRanges([]structure.Range{{Lo: 5, Hi: 6}, {Lo: 1, Hi: 3}, {Lo: 3, Hi: 4}, {Lo: 2, Hi: 3}})
	want := []structure.Range{{Lo: 1, Hi: 4}, {Lo: 5, Hi: 6}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("MergeRanges = %v, want %v", got, want)
	}
}
