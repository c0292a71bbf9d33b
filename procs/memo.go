package procs

// One image's tables, found once. bloop report asks for a module's
// procedures twice, the unwinder with SplitUnsized and the structure
// without, and for a stripped program each Find is a linear sweep of all
// its code (cc1plus: 22 MB, seconds). Where no symbol lacks a size, the
// two option sets cover the same code and find the same table, so the
// second asker shares the first's.

import (
	"runtime"
	"sync"
	"weak"

	"bloop/loader"
)

// memoKey is one image (held weakly: the memo must not keep a module
// alive) under one effective option set.
type memoKey struct {
	img weak.Pointer[loader.Image]
	opt Options
}

type memoEntry struct {
	once sync.Once
	t    *Table
}

var memo sync.Map // memoKey -> *memoEntry

// Find computes img's procedures. The table is shared by every caller
// asking for the same image under options that cover the same code:
// callers only read it.
func Find(img *loader.Image, opt Options) *Table {
	opt = effective(img, opt)
	key := memoKey{img: weak.Make(img), opt: opt}
	v, loaded := memo.LoadOrStore(key, &memoEntry{})
	if !loaded {
		// Forget the table with its image.
		runtime.AddCleanup(img, func(k memoKey) { memo.Delete(k) }, key)
	}
	e := v.(*memoEntry)
	// A concurrent asker waits for the one sweep rather than doing its own.
	e.once.Do(func() { e.t = compute(img, opt) })
	return e.t
}

// effective drops SplitUnsized where it changes nothing: every symbol
// has a size, so both option sets cover the same extents.
func effective(img *loader.Image, opt Options) Options {
	if !opt.SplitUnsized {
		return opt
	}
	for _, fn := range img.Funcs {
		if !fn.Sized {
			return opt
		}
	}
	return Options{}
}
