package profile

import (
	"sync"

	"bloop/cache"
	"bloop/loader"
	"bloop/structfile"
)

// unwindMemo keeps a module's unwinding bounds, jumps and recipes (unwind.Memo) in
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

func (u *unwindMemo) Get(kind string) []byte { return readEntry(u.c, u.keyOf(kind)) }

func (u *unwindMemo) Put(kind string, b []byte) { writeEntry(u.c, u.keyOf(kind), b) }

// saveRecipes keeps the unwind recipes the report computed in each
// module's memo, for the next report of the same modules.
func (s *space) saveRecipes() {
	for _, m := range s.modList {
		if m.Unw != nil {
			m.Unw.SaveRecipes()
		}
	}
}
