package structure

import (
	"cmp"
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

// FormatRanges writes rs the way hpcstruct does, `{[0x10-0x20) [0x30-0x31)}`;
// it is the inverse of ParseRanges.
func FormatRanges(rs []Range) string { return string(appendRanges(nil, rs)) }

func appendRanges(b []byte, rs []Range) []byte {
	b = append(b, '{')
	for i, r := range rs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, '[')
		b = appendAddr(b, r.Lo)
		b = append(b, '-')
		b = appendAddr(b, r.Hi)
		b = append(b, ')')
	}
	return append(b, '}')
}

func appendAddr(b []byte, a uint64) []byte {
	if a == 0 {
		return append(b, '0')
	}
	b = append(b, '0', 'x')
	return strconv.AppendUint(b, a, 16)
}

// MergeRanges sorts and coalesces adjacent or overlapping ranges, in place.
// Every stage that collects address intervals (statement ranges, coverage,
// unwinder protection zones, the diff's statements) uses this one.
func MergeRanges(rs []Range) []Range {
	if len(rs) < 2 {
		return rs
	}
	slices.SortFunc(rs, func(a, b Range) int { return cmp.Compare(a.Lo, b.Lo) })
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r.Lo <= last.Hi {
			last.Hi = max(last.Hi, r.Hi)
			continue
		}
		out = append(out, r)
	}
	return out
}
