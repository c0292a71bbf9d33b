package loader

import "testing"

func TestMergeRanges(t *testing.T) {
	got := MergeRanges([]Range{{5, 6}, {1, 3}, {3, 4}, {2, 3}})
	want := []Range{{1, 4}, {5, 6}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("MergeRanges = %v, want %v", got, want)
	}
}
