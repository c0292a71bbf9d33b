package loader

import (
	"debug/elf"
	"fmt"
	"strings"
)

// pltStubs names the stubs of .plt and .plt.sec from the JUMP_SLOT relocation of
// the GOT slot each one jumps through. Stubs that no JUMP_SLOT names (such as
// .plt.got) are called targ<addr>@plt, as hpcstruct does.
func (img *Image) pltStubs(f *elf.File) []*Func {
	slots := jumpSlots(f)
	var out []*Func
	for _, s := range img.Sections {
		var entSize uint64
		skipFirst := false
		switch s.Name {
		case ".plt":
			entSize, skipFirst = 16, true
			if img.Arch != AMD64 {
				continue // other architectures' PLT layouts are not decoded yet
			}
		case ".plt.sec":
			entSize = 16
		case ".plt.got":
			entSize = 8
			if sh := f.Section(s.Name); sh != nil && sh.Entsize > 0 {
				entSize = sh.Entsize
			}
		default:
			continue
		}
		start := uint64(0)
		if skipFirst {
			start = entSize // PLT0 is the resolver trampoline, not a procedure
		}
		for off := start; off+entSize <= uint64(len(s.Data)); off += entSize {
			addr := s.Addr + off
			name := ""
			if got, ok := gotSlotAMD64(s.Data[off:off+entSize], addr); ok {
				name = slots[got]
			}
			if name == "" {
				name = fmt.Sprintf("targ%x", addr)
			}
			out = append(out, &Func{Name: name + "@plt", Aliases: []string{name + "@plt"}, Addr: addr, End: addr + entSize, PLT: true, Sized: true})
		}
	}
	return out
}

// gotSlotAMD64 finds the `jmp *disp32(%rip)` (ff 25, possibly after endbr64 and a
// bnd prefix) in a PLT entry and returns the GOT slot it reads.
func gotSlotAMD64(b []byte, addr uint64) (uint64, bool) {
	for i := 0; i+6 <= len(b) && i <= 8; i++ {
		if b[i] == 0xff && b[i+1] == 0x25 {
			disp := int32(uint32(b[i+2]) | uint32(b[i+3])<<8 | uint32(b[i+4])<<16 | uint32(b[i+5])<<24)
			return uint64(int64(addr) + int64(i+6) + int64(disp)), true
		}
	}
	return 0, false
}

// jumpSlots maps GOT slot addresses to the symbol their JUMP_SLOT relocation names.
func jumpSlots(f *elf.File) map[uint64]string {
	out := map[uint64]string{}
	dyn, _ := f.DynamicSymbols()
	for _, sec := range f.Sections {
		if sec.Type != elf.SHT_RELA || !strings.HasPrefix(sec.Name, ".rela.plt") {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			continue
		}
		for off := 0; off+24 <= len(data); off += 24 {
			r := f.ByteOrder.Uint64(data[off:])
			info := f.ByteOrder.Uint64(data[off+8:])
			typ, sym := elf.R_X86_64(info&0xffffffff), info>>32
			if f.Machine == elf.EM_X86_64 && typ != elf.R_X86_64_JMP_SLOT {
				continue
			}
			if sym == 0 || int(sym) > len(dyn) {
				continue
			}
			out[r] = dyn[sym-1].Name
		}
	}
	return out
}
