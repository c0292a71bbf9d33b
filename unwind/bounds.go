package unwind

import "bloop/procs"

// computeBounds takes the procedures from package procs. The unwinder lets
// inferred starts divide the extents of symbols without a size: any start
// it misses merges two procedures' frames into one scan.
func (m *Module) computeBounds() {
	if m.loadBounds() {
		return
	}
	defer m.storeBounds()
	m.byName = map[string]int{}
	for _, p := range procs.Find(m.Img, procs.Options{SplitUnsized: true}).Procs {
		name := ""
		if p.Func != nil {
			name = p.Func.Name
			for _, n := range p.Func.Aliases {
				if _, dup := m.byName[n]; !dup {
					m.byName[n] = len(m.procs)
				}
			}
		}
		m.procs = append(m.procs, Proc{Lo: p.Lo, Hi: p.Hi, Name: name, Inferred: p.Source != procs.Symbol})
	}
}
