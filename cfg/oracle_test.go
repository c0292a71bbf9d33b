package cfg

import (
	"debug/elf"

	"bloop/isa"
)

// oracle is an Oracle of functions for the tests; a nil function answers
// no.
type oracle struct {
	region        func(t uint64, callNext bool) (uint64, uint64, bool)
	foreign, into func(t uint64) (uint64, uint64, bool)
	called        func(t uint64) bool
}

func (o oracle) Region(t uint64, callNext bool) (uint64, uint64, bool) {
	if o.region == nil {
		return 0, 0, false
	}
	return o.region(t, callNext)
}

func (o oracle) Foreign(t uint64) (uint64, uint64, bool) { return ask(o.foreign, t) }

func (o oracle) JumpInto(t uint64) (uint64, uint64, bool) { return ask(o.into, t) }

func (o oracle) Called(t uint64) bool { return o.called != nil && o.called(t) }

func ask(f func(uint64) (uint64, uint64, bool), t uint64) (uint64, uint64, bool) {
	if f == nil {
		return 0, 0, false
	}
	return f(t)
}

// decodeAs is the policy that decodes as Dyninst 12.3 reads machine m,
// when on; else none.
func decodeAs(on bool, m elf.Machine) *Dyninst {
	if !on {
		return nil
	}
	return &Dyninst{Decode: isa.Dyninst12For(m)}
}
