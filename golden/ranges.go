package golden

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Range is a half-open address interval [Lo, Hi).
type Range struct{ Lo, Hi uint64 }

// ParseRanges parses a `v` attribute: "{}" or "{[lo-hi) [lo-hi) ...}".
// Addresses are lower-case hex with 0x, except zero which is "0" (exactly
// what hpcstruct writes). Ranges must be non-empty, sorted and must not
// overlap; being strict here makes FormatRanges an exact inverse, so a
// file that deviates from the format is reported instead of silently
// normalized.
func ParseRanges(v string) ([]Range, error) {
	if len(v) < 2 || v[0] != '{' || v[len(v)-1] != '}' {
		return nil, fmt.Errorf("range set %s: must be enclosed in {}", excerpt(v))
	}
	body := v[1 : len(v)-1]
	if body == "" {
		return nil, nil
	}
	parts := strings.Split(body, " ")
	out := make([]Range, 0, len(parts))
	for _, p := range parts {
		if len(p) < 2 || p[0] != '[' || p[len(p)-1] != ')' {
			return nil, fmt.Errorf("range set %s: %s is not of the form [lo-hi) (ranges are separated by one space)", excerpt(v), excerpt(p))
		}
		los, his, ok := strings.Cut(p[1:len(p)-1], "-")
		if !ok {
			return nil, fmt.Errorf("range set %s: %s has no '-'", excerpt(v), excerpt(p))
		}
		lo, err := parseAddr(los)
		if err != nil {
			return nil, fmt.Errorf("range set %s: %v", excerpt(v), err)
		}
		hi, err := parseAddr(his)
		if err != nil {
			return nil, fmt.Errorf("range set %s: %v", excerpt(v), err)
		}
		if lo >= hi {
			return nil, fmt.Errorf("range set %s: %s is empty or reversed", excerpt(v), excerpt(p))
		}
		if n := len(out); n > 0 && lo < out[n-1].Hi {
			return nil, fmt.Errorf("range set %s: %s is out of order or overlaps the previous range", excerpt(v), excerpt(p))
		}
		out = append(out, Range{lo, hi})
	}
	return out, nil
}

// parseAddr accepts "0" or "0x" followed by lower-case hex without leading zeros.
func parseAddr(s string) (uint64, error) {
	if s == "0" {
		return 0, nil
	}
	h, ok := strings.CutPrefix(s, "0x")
	if !ok || h == "" || h[0] == '0' || len(h) > 16 {
		return 0, fmt.Errorf("address %s: want 0 or 0x<lower-case hex>", excerpt(s))
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return 0, fmt.Errorf("address %s: want 0 or 0x<lower-case hex>", excerpt(s))
		}
	}
	return strconv.ParseUint(h, 16, 64)
}

// FormatRanges writes rs the way hpcstruct does; it is the inverse of ParseRanges.
func FormatRanges(rs []Range) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('[')
		b.WriteString(formatAddr(r.Lo))
		b.WriteByte('-')
		b.WriteString(formatAddr(r.Hi))
		b.WriteByte(')')
	}
	b.WriteByte('}')
	return b.String()
}

func formatAddr(a uint64) string {
	if a == 0 {
		return "0"
	}
	return "0x" + strconv.FormatUint(a, 16)
}

// mergeRanges sorts rs and merges overlapping or adjacent ranges.
func mergeRanges(rs []Range) []Range {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b Range) int {
		if a.Lo != b.Lo {
			return cmpU64(a.Lo, b.Lo)
		}
		return cmpU64(a.Hi, b.Hi)
	})
	var out []Range
	for _, r := range rs {
		if n := len(out); n > 0 && r.Lo <= out[n-1].Hi {
			out[n-1].Hi = max(out[n-1].Hi, r.Hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
