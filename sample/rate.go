package sample

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// maxSampleRateFile holds the kernel's limit on the sampling frequency
// (samples per second); perf_event_open refuses more, and the kernel may
// lower it while running when sampling interrupts take too long.
const maxSampleRateFile = "/proc/sys/kernel/perf_event_max_sample_rate"

// MaxSampleRate reads the kernel's current limit on the sampling
// frequency.
func MaxSampleRate() (int, error) {
	b, err := os.ReadFile(maxSampleRateFile)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", maxSampleRateFile, err)
	}
	return n, nil
}

// CapFreq limits the requested sampling frequency freq to the kernel's
// limit; a limit that is not positive (unknown) leaves freq as it is.
// capped reports whether freq was lowered.
func CapFreq(freq, limit int) (capped int, lowered bool) {
	if limit > 0 && freq > limit {
		return limit, true
	}
	return freq, false
}
