package diff

import (
	"cmp"
	"slices"
	"strings"

	"bloop/structure"
)

// PathRange says that the bytes [Lo, Hi) belong to the scope path Path.
type PathRange struct {
	Lo, Hi uint64
	Path   string
}

// Paths returns, sorted by Lo and non-overlapping, the canonical scope path
// of every byte covered by an S element: the procedure's link name (ln,
// else n), each enclosing A as A(f-basename:l:n) and L as L(f-basename:l),
// then the S line, joined by "/". A per-byte map would not fit for large
// binaries; adjacent bytes with the same path share one PathRange.
// Bytes claimed by several statements (a malformed file) get all their
// paths, sorted and joined by " | ", so they never agree with a reference.
// Documents with several LMs are treated as one address space.
func Paths(d *structure.Doc) []PathRange {
	var raw []PathRange
	var walk func(n *structure.Node, prefix string)
	walk = func(n *structure.Node, prefix string) {
		for _, c := range n.Children {
			switch c.Tag {
			case "P":
				name, ok := c.Get("ln")
				if !ok {
					name = c.Value("n")
				}
				walk(c, name)
			case "A":
				walk(c, prefix+"/A("+structure.BaseName(c.Value("f"))+":"+c.Value("l")+":"+c.Value("n")+")")
			case "L":
				walk(c, prefix+"/L("+structure.BaseName(c.Value("f"))+":"+c.Value("l")+")")
			case "S":
				rs, _ := structure.ParseRanges(c.Value("v"))
				p := prefix + "/" + c.Value("l")
				for _, r := range rs {
					raw = append(raw, PathRange{r.Lo, r.Hi, p})
				}
			default:
				walk(c, prefix)
			}
		}
	}
	walk(d.Root, "")
	return flatten(raw)
}

// flatten turns possibly overlapping ranges into sorted disjoint ones by
// sweeping over all boundaries.
func flatten(raw []PathRange) []PathRange {
	if len(raw) == 0 {
		return nil
	}
	type event struct {
		at    uint64
		start bool
		path  string
	}
	ev := make([]event, 0, 2*len(raw))
	for _, r := range raw {
		ev = append(ev, event{r.Lo, true, r.Path}, event{r.Hi, false, r.Path})
	}
	slices.SortFunc(ev, func(a, b event) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path) // start/end order is irrelevant: segments are between distinct points
	})
	active := map[string]int{}
	var out []PathRange
	for i := 0; i < len(ev); {
		at := ev[i].at
		for ; i < len(ev) && ev[i].at == at; i++ {
			if ev[i].start {
				active[ev[i].path]++
			} else if active[ev[i].path]--; active[ev[i].path] == 0 {
				delete(active, ev[i].path)
			}
		}
		if len(active) == 0 || i == len(ev) {
			continue
		}
		var p string
		if len(active) == 1 {
			for k := range active {
				p = k
			}
		} else {
			keys := make([]string, 0, len(active))
			for k := range active {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			p = strings.Join(keys, " | ")
		}
		next := ev[i].at
		if n := len(out); n > 0 && out[n-1].Hi == at && out[n-1].Path == p {
			out[n-1].Hi = next
		} else {
			out = append(out, PathRange{at, next, p})
		}
	}
	return out
}

// PathAgreement returns how many bytes covered by S elements in ref
// (totalBytes) have the identical scope path in got (sameBytes).
func PathAgreement(ref, got *structure.Doc) (sameBytes, totalBytes uint64) {
	rp, gp := Paths(ref), Paths(got)
	j := 0
	for _, r := range rp {
		totalBytes += r.Hi - r.Lo
		for j < len(gp) && gp[j].Hi <= r.Lo {
			j++
		}
		for k := j; k < len(gp) && gp[k].Lo < r.Hi; k++ {
			if gp[k].Path == r.Path {
				sameBytes += min(r.Hi, gp[k].Hi) - max(r.Lo, gp[k].Lo)
			}
		}
	}
	return sameBytes, totalBytes
}
