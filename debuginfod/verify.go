package debuginfod

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"

	"bloop/loader"
)

// verify checks a downloaded or cached file before it is used: a debug
// file or executable must be a whole ELF file whose build-id is the one
// asked for. A source file can only be checked for being there.
func verify(path string, e entry) (err error) {
	if e.kind == KindSource {
		st, err := os.Stat(path)
		if err == nil && st.Size() == 0 {
			return fmt.Errorf("empty answer")
		}
		return err
	}
	defer func() {
		// debug/elf can panic on hostile input: that is a bad answer.
		if r := recover(); r != nil {
			err = fmt.Errorf("not an ELF file (%v)", r)
		}
	}()
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return fmt.Errorf("not an ELF file: %w", err)
	}
	size := uint64(st.Size())
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_NOBITS && s.Type != elf.SHT_NULL && (s.Offset > size || s.FileSize > size-s.Offset) {
			return fmt.Errorf("truncated ELF file: section %s ends past its %d bytes", s.Name, size)
		}
	}
	id := loader.BuildID(ef)
	if id == nil {
		return fmt.Errorf("ELF file without a build-id, not %s", e.id)
	}
	if !bytes.Equal(id, e.raw) {
		return fmt.Errorf("ELF file of build-id %s, not %s", hex.EncodeToString(id), e.id)
	}
	return nil
}

// parseSize reads an X-Debuginfod-Size header: a decimal byte count.
// Anything else (signs, spaces inside, overflow) is no size.
func parseSize(s string) (int64, bool) {
	s = trimSpace(s)
	if s == "" || len(s) > 19 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (1<<63-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

func trimSpace(s string) string {
	for s != "" && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
