package loader

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"os"
)

// Check refuses what Open would refuse from the file's headers alone: no
// ELF magic, a class, byte order, machine or type bloop does not read, a
// section header table or a loaded section beyond the end of the file.
// It reads the headers only, so a pipeline can reject junk (a 10 GB
// sparse file that merely starts with \177ELF) before hashing it for the
// cache. A nil error does not promise that Open succeeds.
func Check(path string) (err error) {
	// debug/elf can panic on hostile input, as in Open.
	defer func() {
		if r := recover(); r != nil {
			err = errorf(path, "malformed ELF data (%v)", r)
		}
	}()
	f, st, err := openFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h, err := readHeader(path, f, st)
	if err != nil {
		return err
	}
	defer h.ef.Close()
	size := uint64(st.Size())
	for _, s := range h.ef.Sections {
		if !loaded(s) {
			continue
		}
		if s.Size > maxSectionSize {
			return errorf(path, "section %s claims %d bytes", s.Name, s.Size)
		}
		if s.Offset > size || s.FileSize > size-s.Offset {
			return errorf(path, "section %s claims %d bytes at %#x, beyond the end of the file (%d bytes)", s.Name, s.FileSize, s.Offset, size)
		}
	}
	return nil
}

// loaded reports whether Open reads section s's bytes (readSections):
// allocated program data and x86-64's .eh_frame (SHT_X86_64_UNWIND).
func loaded(s *elf.Section) bool {
	return (s.Type == elf.SHT_PROGBITS || s.Type == elf.SectionType(0x70000001)) && s.Flags&elf.SHF_ALLOC != 0
}

// openFile opens path for reading, refusing directories; errors name it.
func openFile(path string) (*os.File, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, nil, errorf(path, "cannot read: %v", pe.Err)
		}
		return nil, nil, errorf(path, "cannot read: %v", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, errorf(path, "cannot read: %v", err)
	}
	if st.IsDir() {
		f.Close()
		return nil, nil, errorf(path, "is a directory")
	}
	return f, st, nil
}

// header is what the ELF header and section table say.
type header struct {
	ef     *elf.File
	raw    io.ReaderAt // the file, or a cubin as hpcstruct lays it out
	cub    *cubin      // nil unless EM_CUDA
	arch   Arch
	shared bool
}

// readHeader reads and checks the ELF header and the section table.
func readHeader(path string, f *os.File, st os.FileInfo) (*header, error) {
	var hdr [ehSize]byte
	n, _ := io.ReadFull(f, hdr[:])
	if n < 4 || string(hdr[:4]) != elf.ELFMAG {
		return nil, errorf(path, "not an ELF file")
	}
	if n < elf.EI_NIDENT {
		return nil, errorf(path, "truncated ELF header")
	}
	if c, d := elf.Class(hdr[elf.EI_CLASS]), elf.Data(hdr[elf.EI_DATA]); c != elf.ELFCLASS64 || d != elf.ELFDATA2LSB {
		return nil, errorf(path, "unsupported ELF: %v %v (bloop reads 64-bit little-endian images)", c, d)
	}
	h := &header{raw: f}
	var err error
	if n >= 20 && elf.Machine(binary.LittleEndian.Uint16(hdr[18:])) == elf.EM_CUDA {
		if h.cub, err = openCubin(path, f, hdr[:n]); err != nil {
			return nil, err
		}
		h.raw, h.ef = h.cub.view, h.cub.file
	} else if h.ef, err = elf.NewFile(f); err != nil {
		return nil, errorf(path, "bad ELF: %v", err)
	}
	ef := h.ef
	if ef.Class != elf.ELFCLASS64 || ef.Data != elf.ELFDATA2LSB {
		ef.Close()
		return nil, errorf(path, "unsupported ELF: %v %v (bloop reads 64-bit little-endian images)", ef.Class, ef.Data)
	}
	h.arch = archOf(ef.Machine)
	if ef.Machine == elf.EM_AMDGPU {
		// The processor, named in e_flags, is the image's architecture.
		if h.arch, err = amdgpuTarget(hdr[:n]); err != nil {
			ef.Close()
			return nil, errorf(path, "%v", err)
		}
	}
	if h.arch == "" {
		ef.Close()
		return nil, errorf(path, "unsupported machine %v", ef.Machine)
	}
	switch ef.Type {
	case elf.ET_EXEC:
	case elf.ET_DYN:
		h.shared = !isPIE(ef)
	default:
		ef.Close()
		return nil, errorf(path, "unsupported ELF type %v (want an executable or shared library)", ef.Type)
	}
	return h, nil
}

// machines are the ELF machines bloop reads, with their Arch.
var machines = []struct {
	m    elf.Machine
	arch Arch
}{
	{elf.EM_X86_64, AMD64},
	{elf.EM_PPC64, PPC64LE},
	{elf.EM_AARCH64, ARM64},
	{elf.EM_CUDA, CUDA},
	{elf.EM_AMDGPU, AMDGPU},
}

// archOf is machine m's Arch, "" when bloop does not read it.
func archOf(m elf.Machine) Arch {
	for _, r := range machines {
		if r.m == m {
			return r.arch
		}
	}
	return ""
}

// machineOf is the ELF machine of an instruction set, for images made in
// memory.
func machineOf(a Arch) elf.Machine {
	if a.IsAMDGPU() {
		a = AMDGPU
	}
	for _, r := range machines {
		if r.arch == a {
			return r.m
		}
	}
	return elf.EM_NONE
}
