package varint

import (
	"slices"
	"testing"
)

// TestStrings: strings are numbered from 0 in the order first given, a
// repeat given its first number.
func TestStrings(t *testing.T) {
	var s Strings
	for _, tc := range []struct {
		s    string
		want uint64
	}{{"a", 0}, {"b", 1}, {"a", 0}, {"", 2}, {"b", 1}, {"c", 3}, {"", 2}} {
		if got := s.Ref(tc.s); got != tc.want {
			t.Errorf("Ref(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
	if want := []string{"a", "b", "", "c"}; !slices.Equal(s.List, want) {
		t.Errorf("List %q, want %q", s.List, want)
	}
}
