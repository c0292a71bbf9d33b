package profile

// chunked is a list numbered from 1, kept in chunks of 1<<chunkBits: it
// grows without being copied (a slice of the millions of nodes or stacks
// of a frame-pointer profile was copied over and over), and a reader
// that is done with its first chunks can give them back (release).
type chunked[T any] struct {
	chunks [][]T
	n      uint32 // how many there are
}

const (
	chunkBits = 14
	chunkMask = 1<<chunkBits - 1
)

// add appends v; its number.
func (l *chunked[T]) add(v T) uint32 {
	i := l.n
	if i>>chunkBits == uint32(len(l.chunks)) {
		l.chunks = append(l.chunks, makeTouched[T](1 << chunkBits)[:0])
	}
	c := &l.chunks[i>>chunkBits]
	*c = append(*c, v)
	l.n++
	return l.n
}

// at is element number k.
func (l *chunked[T]) at(k uint32) *T {
	i := k - 1
	return &l.chunks[i>>chunkBits][i&chunkMask]
}

// release gives back the chunk element k ends, if it ends one; the
// elements before are not read again.
func (l *chunked[T]) release(k uint32) {
	if k > 0 && k&chunkMask == 0 {
		l.chunks[k>>chunkBits-1] = nil
	}
}

// flat is the elements in order, in one slice.
func (l *chunked[T]) flat() []T {
	out := make([]T, 0, l.n)
	for _, c := range l.chunks {
		out = append(out, c...)
	}
	return out
}

// all calls yield with each element in order, until it returns false.
func (l *chunked[T]) all(yield func(*T) bool) {
	for _, c := range l.chunks {
		for i := range c {
			if !yield(&c[i]) {
				return
			}
		}
	}
}
