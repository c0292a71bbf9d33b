package sample

import (
	"testing"

	"bloop/internal/testenv"
)

func TestCapFreq(t *testing.T) {
	tests := []struct {
		name        string
		freq, limit int
		want        int
		lowered     bool
	}{
		{"below the limit", 1000, 100000, 1000, false},
		{"at the limit", 100000, 100000, 100000, false},
		{"above the limit", 100000, 25000, 25000, true},
		{"just above", 25001, 25000, 25000, true},
		{"limit unknown", 100000, 0, 100000, false},
		{"negative limit", 5000, -1, 5000, false},
		{"default frequency left to Options", 0, 25000, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, lowered := CapFreq(tc.freq, tc.limit)
			if got != tc.want || lowered != tc.lowered {
				t.Errorf("CapFreq(%d, %d) = %d, %v; want %d, %v", tc.freq, tc.limit, got, lowered, tc.want, tc.lowered)
			}
		})
	}
}

// TestMaxSampleRate reads the real limit where the kernel has one.
func TestMaxSampleRate(t *testing.T) {
	n, err := MaxSampleRate()
	testenv.Capable(t, "perf_event_max_sample_rate", err)
	if n <= 0 {
		t.Errorf("limit %d", n)
	}
}
