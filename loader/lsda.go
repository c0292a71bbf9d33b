package loader

import (
	"debug/elf"
	"encoding/binary"
	"sort"

	"bloop/structure"
)

// Landing pads are code reached only by the unwinder (C++ catch blocks and
// cleanups). Dyninst parses them as part of their procedure, so bloop finds
// them the same way: FDEs in .eh_frame point to LSDAs in .gcc_except_table,
// whose call-site tables give the landing pads. The FDEs' code ranges are
// kept too: in a stripped file they still mark where procedures are.

// ehReader decodes DWARF exception-handling pointer encodings.
type ehReader struct {
	b    []byte
	addr uint64 // address of b[0]
	off  int
	bad  bool
}

func (r *ehReader) u8() byte {
	if r.off >= len(r.b) {
		r.bad = true
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *ehReader) fixed(n int) uint64 {
	if r.off+n > len(r.b) {
		r.bad = true
		r.off = len(r.b)
		return 0
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(r.b[r.off+i])
	}
	r.off += n
	return v
}

func (r *ehReader) uleb() uint64 {
	v, n := binary.Uvarint(r.b[min(r.off, len(r.b)):])
	if n <= 0 {
		r.bad = true
		r.off = len(r.b)
		return 0
	}
	r.off += n
	return v
}

func (r *ehReader) sleb() int64 {
	var v int64
	var shift uint
	for {
		c := r.u8()
		if r.bad {
			return 0
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
		if shift > 63 {
			r.bad = true
			return 0
		}
	}
}

// ptr reads a pointer in encoding enc (DW_EH_PE_*); ok is false for omit or
// unsupported encodings.
func (r *ehReader) ptr(enc byte) (uint64, bool) {
	if enc == 0xff {
		return 0, false
	}
	here := r.addr + uint64(r.off)
	var v uint64
	switch enc & 0x0f {
	case 0x00:
		v = r.fixed(8)
	case 0x01:
		v = r.uleb()
	case 0x02:
		v = r.fixed(2)
	case 0x03:
		v = r.fixed(4)
	case 0x04:
		v = r.fixed(8)
	case 0x09:
		v = uint64(r.sleb())
	case 0x0a:
		v = uint64(int64(int16(r.fixed(2))))
	case 0x0b:
		v = uint64(int64(int32(r.fixed(4))))
	case 0x0c:
		v = r.fixed(8)
	default:
		r.bad = true
		return 0, false
	}
	switch enc & 0x70 {
	case 0x00:
	case 0x10:
		v += here
	default:
		return 0, false // textrel/datarel/funcrel: not used by gcc or clang on x86-64
	}
	return v, !r.bad
}

type cieInfo struct {
	fdeEnc, lsdaEnc byte
	hasLSDA, z      bool
}

// CallSite is a range of calls whose exceptions land at Pad.
type CallSite struct {
	Lo, Hi, Pad uint64
}

// readEHFrame walks .eh_frame and returns the call sites with landing pads
// and the FDEs' code ranges that lie in code, both sorted by Lo. Records
// that do not decode and FDE ranges outside the code are counted in bad
// (the linker drops the FDEs of the code it discards).
func readEHFrame(f *elf.File, img *Image, bad *tally) ([]CallSite, []structure.Range) {
	sec := f.Section(".eh_frame")
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil, nil
	}
	cies := map[int]*cieInfo{}
	var pads []CallSite
	var frames []structure.Range
	for off := 0; off+8 <= len(data); {
		length := uint64(binary.LittleEndian.Uint32(data[off:]))
		hdr := 4
		if length == 0 {
			break
		}
		if length == 0xffffffff {
			if off+12 > len(data) {
				break
			}
			length, hdr = binary.LittleEndian.Uint64(data[off+4:]), 12
		}
		end := off + hdr + int(length)
		if length > uint64(len(data)) || end > len(data) || end <= off || end-off < hdr+4 {
			bad.add(CorruptEHRecord, ".eh_frame", uint64(off)) // the rest is lost
			break
		}
		idOff := off + hdr
		id := binary.LittleEndian.Uint32(data[idOff:])
		rec := &ehReader{b: data[:end], addr: sec.Addr, off: idOff + 4}
		if id == 0 {
			if cies[off] = parseCIE(rec); cies[off] == nil {
				bad.add(CorruptEHRecord, ".eh_frame", uint64(off))
			}
		} else if cie, known := cies[idOff-int(id)]; !known {
			bad.add(CorruptEHRecord, ".eh_frame", uint64(off)) // no CIE there
		} else if cie != nil {
			if start, ok := rec.ptr(cie.fdeEnc); ok {
				// The pc range is a length: only the value part of the encoding applies.
				if n, ok := rec.ptr(cie.fdeEnc & 0x0f); ok && n > 0 {
					if s := img.SectionAt(start); s != nil && start+n > start {
						if n > s.End()-start {
							bad.add(CorruptFDERange, ".eh_frame", uint64(off)) // procs cuts it
						}
						frames = append(frames, structure.Range{Lo: start, Hi: start + n})
					} else {
						bad.add(CorruptFDERange, ".eh_frame", uint64(off))
					}
				}
				if cie.z {
					rec.uleb()
				}
				if cie.hasLSDA {
					if lsda, ok := rec.ptr(cie.lsdaEnc); ok && lsda != 0 {
						ps, ok := lsdaPads(img, lsda, start)
						if !ok {
							bad.add(CorruptLSDA, ".eh_frame", uint64(off))
						}
						pads = append(pads, ps...)
					}
				}
			}
			if rec.bad { // its fields run past its length
				bad.add(CorruptEHRecord, ".eh_frame", uint64(off))
			}
		}
		off = end
	}
	sort.Slice(pads, func(i, j int) bool {
		if pads[i].Lo != pads[j].Lo {
			return pads[i].Lo < pads[j].Lo
		}
		return pads[i].Pad < pads[j].Pad
	})
	out := pads[:0]
	for _, p := range pads {
		if p.Hi > p.Lo {
			out = append(out, p)
		}
	}
	sort.Slice(frames, func(i, j int) bool {
		if frames[i].Lo != frames[j].Lo {
			return frames[i].Lo < frames[j].Lo
		}
		return frames[i].Hi < frames[j].Hi
	})
	return out, frames
}

// PadFor returns the landing pad of the call at addr, if any.
func (img *Image) PadFor(addr uint64) (uint64, bool) {
	cs := img.CallSites
	i := sort.Search(len(cs), func(i int) bool { return cs[i].Lo > addr }) - 1
	// Call-site ranges of one function do not overlap; look back a little
	// for ranges of other functions that might.
	for k := 0; i >= 0 && k < 4; i, k = i-1, k+1 {
		if addr < cs[i].Hi {
			return cs[i].Pad, true
		}
	}
	return 0, false
}

func parseCIE(r *ehReader) *cieInfo {
	c := &cieInfo{fdeEnc: 0, lsdaEnc: 0xff}
	version := r.u8()
	var aug []byte
	for {
		ch := r.u8()
		if ch == 0 || r.bad {
			break
		}
		aug = append(aug, ch)
	}
	if len(aug) >= 2 && aug[0] == 'e' && aug[1] == 'h' {
		r.fixed(8)
	}
	r.uleb()
	r.sleb()
	if version == 1 {
		r.u8()
	} else {
		r.uleb()
	}
	if len(aug) == 0 || aug[0] != 'z' {
		return c
	}
	c.z = true
	r.uleb()
	for _, a := range aug[1:] {
		switch a {
		case 'L':
			c.lsdaEnc, c.hasLSDA = r.u8(), true
		case 'P':
			enc := r.u8()
			r.ptr(enc)
		case 'R':
			c.fdeEnc = r.u8()
		}
	}
	if r.bad {
		return nil
	}
	return c
}

// lsdaPads reads one LSDA's call-site table; ok is false when it does not
// decode or a landing pad lies outside the code (those pads are dropped).
func lsdaPads(img *Image, lsda, funcStart uint64) (pads []CallSite, ok bool) {
	b := img.dataFrom(lsda)
	if b == nil {
		return nil, false
	}
	r := &ehReader{b: b, addr: lsda}
	lpStart := funcStart
	if enc := r.u8(); enc != 0xff {
		if v, ok := r.ptr(enc); ok {
			lpStart = v
		}
	}
	if tt := r.u8(); tt != 0xff {
		r.uleb()
	}
	csEnc := r.u8()
	csLen := r.uleb()
	end := r.off + int(csLen)
	if r.bad || end > len(r.b) || end < r.off {
		return nil, false
	}
	ok = true
	for r.off < end && !r.bad {
		start, _ := r.ptr(csEnc & 0x0f)
		length, _ := r.ptr(csEnc & 0x0f)
		lp, _ := r.ptr(csEnc & 0x0f)
		r.uleb() // action
		if lp == 0 || r.bad {
			continue
		}
		if !img.IsCode(lpStart + lp) {
			ok = false
			continue
		}
		pads = append(pads, CallSite{Lo: funcStart + start, Hi: funcStart + start + length, Pad: lpStart + lp})
	}
	return pads, ok && !r.bad
}
