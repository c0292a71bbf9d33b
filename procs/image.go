package procs

import "bloop/loader"

// WithProcs returns img with the procedures of t as its Funcs; those
// without a symbol are named by name (nil: Proc.Name). Without procedures
// beyond the symbols, img itself.
func WithProcs(img *loader.Image, t *Table, name func(Proc) string) *loader.Image {
	extra := len(t.Procs) != len(img.Funcs) // a procedure of no symbol's: ppc64's glink resolver
	for _, p := range t.Procs {
		extra = extra || p.Func == nil || p.Func.End != p.Hi
	}
	if !extra {
		return img
	}
	funcs := make([]*loader.Func, len(t.Procs))
	for i, p := range t.Procs {
		switch {
		case p.Func != nil && p.Func.End == p.Hi:
			funcs[i] = p.Func
		case p.Func != nil:
			fn := *p.Func
			fn.End = p.Hi
			funcs[i] = &fn
		default:
			n := p.Name()
			if name != nil {
				n = name(p)
			}
			funcs[i] = &loader.Func{Name: n, Aliases: []string{n}, Addr: p.Lo, End: p.Hi, Found: true, Within: t.Within[p.Lo]}
		}
	}
	return img.WithFuncs(funcs)
}
