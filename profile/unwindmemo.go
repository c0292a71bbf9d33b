package profile

import (
	"io"
	"sync"

	"bloop/cache"
	"bloop/loader"
	"bloop/structfile"
)

// unwindMemo keeps a module's unwinding bounds and jumps (unwind.Memo) in
// the report's cache, keyed as its structure is: by the image and the
// debug file read for it (their symbols shape the bounds), and by this
// build of bloop.
type unwindMemo struct {
	c    *cache.Cache
	path string
	load loader.Options

	once sync.Once
	key  string // "" when the module cannot be keyed: nothing kept
}

func (u *unwindMemo) keyOf(kind string) string {
	u.once.Do(func() {
		k, err := structfile.Key(u.c, u.path, structfile.Options{Load: u.load})
		if err == nil {
			u.key = k
		}
	})
	if u.key == "" {
		return ""
	}
	return cache.Key(kind, u.key)
}

func (u *unwindMemo) Get(kind string) []byte {
	k := u.keyOf(kind)
	if k == "" {
		return nil
	}
	f := u.c.Get(k)
	if f == nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	return b
}

func (u *unwindMemo) Put(kind string, b []byte) {
	k := u.keyOf(kind)
	if k == "" {
		return
	}
	e, err := u.c.Create(k)
	if err != nil {
		return
	}
	if _, err := e.Write(b); err != nil {
		e.Abort()
		return
	}
	if e.Commit() != nil {
		e.Abort()
	}
}
