package loader

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// lazyDWARF is what LoadDWARF needs to read an image's DWARF after Open.
type lazyDWARF struct {
	once    sync.Once
	read    atomic.Bool // LoadDWARF has read it
	img     *Image      // the image Open made, which LoadDWARF fills
	path    string      // the image's path as Open was given it (for warnings)
	file    string      // the file holding the DWARF: path or the debug file
	dbgPath string      // the separate debug file, "" when the DWARF is path's
	size    int64       // file's size and modification time at Open: a file
	mtime   time.Time
	opt     Options
	symBad  tally // the symbols' corruption, merged with the DWARF's
}

// LoadDWARF reads the DWARF of an image opened with Options.LazyDWARF:
// Procs, Lines, Descriptors, the inline trees, and the warnings and
// corruption found in them, as Open reads them otherwise. It does so
// once, whoever calls it first, and the others wait; on an image read
// whole by Open it does nothing. A file changed since Open, or DWARF
// that cannot be read, leave the image with its symbols and a warning.
func (img *Image) LoadDWARF() {
	if lz := img.lazy; lz != nil {
		// The image Open made, whichever copy (WithFuncs) asks.
		lz.once.Do(func() {
			lz.img.loadLazy(lz)
			lz.read.Store(true)
		})
	}
}

// ReadLazily reports whether LoadDWARF has read DWARF that Open left
// unread (Options.LazyDWARF).
func (img *Image) ReadLazily() bool {
	return img.lazy != nil && img.lazy.read.Load()
}

func (img *Image) loadLazy(lz *lazyDWARF) {
	name := debugName(lz.path, lz.dbgPath)
	defer func() {
		// debug/elf can panic on hostile input, as in Open.
		if r := recover(); r != nil {
			img.Warnings = append(img.Warnings, fmt.Sprintf("%s: DWARF unreadable, using symbols only: malformed ELF or DWARF data (%v)", name, r))
		}
	}()
	df, raw, err := openELF(lz.file)
	if err != nil {
		img.Warnings = append(img.Warnings, fmt.Sprintf("%s: DWARF unreadable, using symbols only: %v", name, err))
		return
	}
	defer raw.Close()
	defer df.Close()
	fb, err := newFileBytes(raw)
	if err == nil {
		err = sameFile(raw, lz)
	}
	if err != nil {
		img.Warnings = append(img.Warnings, fmt.Sprintf("%s: DWARF unreadable, using symbols only: %v", name, err))
		return
	}
	img.Lines = nil // Open's empty table
	img.readDebugInfo(df, fb, name, lz.opt)
	img.finishDebug(lz.dbgPath, lz.symBad)
	collectLoadGarbage(df)
}

// sameFile checks that f is still the file Open read.
func sameFile(f *os.File, lz *lazyDWARF) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() != lz.size || !st.ModTime().Equal(lz.mtime) {
		return fmt.Errorf("%s changed since it was opened", lz.file)
	}
	return nil
}
