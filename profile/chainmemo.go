package profile

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"sort"
	"unsafe"

	"bloop/sample"
)

// A frame-pointer perf.data file of a program built with frame pointers
// repeats few stacks: 18,348 distinct callchains (thread and frames) in
// 1,372,738 samples of testdata/prof/fpwork.cpp's. What a callchain
// sample comes to depends only on its thread and process, the mappings
// the process had made by its time, its callchain (its IP when it has
// none) and its event: the reading goroutine remembers each such key
// it sent on (a slot), and sends a sample whose key it has seen as a
// repeat of that slot, which the workers do not unwind and the filing
// adds to the slot's distinct stack: one look-up in place of a copy,
// an unwind and a look-up per frame. A memo kept by each worker and
// each filing goroutine instead cost more than it saved (1.07x the CPU):
// two look-ups of a table the file's pages keep evicting from the
// caches. The profile is the same bytes with the memo or without.

// hashKey is k's hash, its mappings' epoch given: the callchain's words
// mixed in two lanes (one chain of multiplies was 6% of a report of a
// frame-pointer file, maphash's 9%).
func hashKey(k *sample.ChainKey, epoch uint32) uint64 {
	b := k.Callchain
	h0 := mix(uint64(k.Pid)<<32|uint64(k.Tid), uint64(len(b)))
	h1 := mix(uint64(epoch)<<32|uint64(uint32(k.Event)), k.IP)
	if k.Kernel {
		h1 = mix(h1, 1)
	}
	le := binary.LittleEndian
	for ; len(b) >= 16; b = b[16:] {
		h0 = mix(h0, le.Uint64(b))
		h1 = mix(h1, le.Uint64(b[8:]))
	}
	if len(b) >= 8 {
		h0 = mix(h0, le.Uint64(b))
	}
	return mix(h0, h1)
}

// mix folds w into h: distinct keys rarely share a hash, and those that
// do are told apart by their fields.
func mix(h, w uint64) uint64 {
	return bits.RotateLeft64((h^w)*0x9e3779b97f4a7c15, 31)
}

// Bounds of the memo: a profile of distinct stacks (g++ compiling: 1.75
// million in 2.5 million samples) fills it early, and it is then
// switched off unless half the look-ups found their key.
const (
	memoEntries = 1 << 16
	memoWords   = 1 << 19 // 4 MiB of keys
	// Keys are kept in chunks of 256 KiB: one slice grown by append
	// copied and cleared its megabytes again at each doubling, 7% of
	// a warm report's CPU on a frame-pointer file.
	keyChunkBits  = 15
	keyChunkWords = 1 << keyChunkBits
)

// chainMemo numbers the keys it is given, from 1 (their slots). Each
// key is kept as words, back to back in keys' chunks: its hash, pid and tid,
// epoch and event, IP, the callchain's length in bytes with the kernel
// bit and the slot, its repeats' count and the sum of their values
// (repeatsInto), then the callchain. A look-up reads the table and
// one key, which a Go map and entries apart from their callchains made
// three reads from memory (the file's pages evict them from the caches).
type chainMemo struct {
	tab   []uint32   // open addressing by hash: 1 + a key's place (keyAt), 0: none
	keys  [][]uint64 // chunks of keyChunkWords words, no key across two
	words int        // words kept in keys
	n     int32      // keys kept
	looks int
	hits  int
	off   bool // full, and answering few look-ups
	// Key n's slot is n*stride+base: readers of a file's parts, each
	// with a memo, number their slots apart (stride readers, base the
	// reader's index); one reader's stride is 0 or 1.
	stride, base int32
	// times are process timesPid's mappings' times (space.times), kept
	// from the last sample: a file's samples come in runs of a process.
	times    []uint64
	timesPid uint32
	timesSet bool
}

// keyHead is a key's words before its callchain.
const keyHead = 7

// slotOf is the slot of a callchain sample of key k: found (repeat
// set, the sample counted as a repeat of its slot, of value k.Period),
// else given one (0 when the memo is full or off).
func (m *chainMemo) slotOf(sp *space, k *sample.ChainKey) (slot int32, repeat bool) {
	h, epoch := m.hash(sp, k)
	return m.lookup(k, h, epoch)
}

// hash is key k's hash and its mappings' epoch.
func (m *chainMemo) hash(sp *space, k *sample.ChainKey) (uint64, uint32) {
	if !m.timesSet || k.Pid != m.timesPid {
		m.times, m.timesPid, m.timesSet = sp.times[k.Pid], k.Pid, true
	}
	epoch := epochIn(m.times, k.Time)
	return hashKey(k, epoch), epoch
}

// lookup is slotOf of key k of hash h and epoch.
func (m *chainMemo) lookup(k *sample.ChainKey, h uint64, epoch uint32) (slot int32, repeat bool) {
	if m.off {
		return 0, false
	}
	w1 := uint64(k.Pid) | uint64(k.Tid)<<32
	w2 := uint64(epoch) | uint64(uint32(k.Event))<<32
	w4 := uint64(len(k.Callchain))
	if k.Kernel {
		w4 |= 1 << 32
	}
	m.looks++
	if m.tab == nil {
		m.tab = make([]uint32, 1<<12)
	}
	mask := uint64(len(m.tab) - 1)
	i := h & mask
	for ; m.tab[i] != 0; i = (i + 1) & mask {
		e := m.keyAt(m.tab[i] - 1)
		if e[0] == h && e[1] == w1 && e[2] == w2 && e[3] == k.IP && e[4]&(1<<40-1) == w4 &&
			bytes.Equal(wordBytes(e[keyHead:keyHead+len(k.Callchain)/8]), k.Callchain) {
			m.hits++
			// Summed in the key, whose words the comparison has just
			// read: kept apart by slot, the sums were a read from
			// memory a sample (6% of a warm report's CPU).
			e[5]++
			e[6] += k.Period
			return int32(e[4] >> 40), true
		}
	}
	need := keyHead + len(k.Callchain)/8
	if int(m.n) == memoEntries || m.words+need > memoWords {
		// Full: kept while it answers at least half the look-ups.
		m.off = 2*m.hits < m.looks
		return 0, false
	}
	if need > keyChunkWords {
		return 0, false // a callchain of more than 32,000 frames: not kept
	}
	last := len(m.keys) - 1
	if last < 0 || len(m.keys[last])+need > keyChunkWords {
		m.keys = append(m.keys, make([]uint64, 0, keyChunkWords))
		last++
	}
	m.n++
	slot = m.n
	if m.stride > 1 {
		slot = m.n*m.stride + m.base
	}
	c := m.keys[last]
	m.tab[i] = uint32(last<<keyChunkBits|len(c)) + 1
	c = append(c, h, w1, w2, k.IP, w4|uint64(slot)<<40, 0, 0)
	c = c[:len(c)+len(k.Callchain)/8]
	copy(wordBytes(c[len(c)-len(k.Callchain)/8:]), k.Callchain)
	m.keys[last] = c
	m.words += need
	if 2*int(m.n) > len(m.tab) {
		m.grow()
	}
	return slot, false
}

// repeatsInto appends to b, after its samples, a repeat of each slot
// with repeats, in the order of the slots, and counts them no more. A
// repeat adds to its slot's distinct stack and to the profile's sums
// only, so where among the samples it is counted changes nothing once
// the slot's first sample is filed: a reader sums each slot's repeats
// over all it reads and sends them at its end. Filed with the batches,
// a repeat per slot per batch (a reader's batch ends with each part of
// the file), they were 575,000 repeats for 2 million samples of a
// frame-pointer file, a sixth of a warm report's CPU.
func (m *chainMemo) repeatsInto(b *batch) {
	for _, c := range m.keys {
		for len(c) > 0 {
			e := c
			c = c[keyHead+int(uint32(e[4]))/8:]
			if e[5] > 0 {
				b.reps = append(b.reps, repeat{at: int32(len(b.samples)), slot: int32(e[4] >> 40), n: e[5], value: e[6]})
				e[5], e[6] = 0, 0
			}
		}
	}
}

// grow doubles the table.
func (m *chainMemo) grow() {
	tab := make([]uint32, 2*len(m.tab))
	mask := uint64(len(tab) - 1)
	for _, o := range m.tab {
		if o == 0 {
			continue
		}
		i := m.keyAt(o - 1)[0] & mask
		for tab[i] != 0 {
			i = (i + 1) & mask
		}
		tab[i] = o
	}
	m.tab = tab
}

// keyAt is the key at place o (chunk and index in it) and what follows
// it in its chunk.
func (m *chainMemo) keyAt(o uint32) []uint64 {
	return m.keys[o>>keyChunkBits][o&(keyChunkWords-1):]
}

// wordBytes is words' memory as bytes (a callchain's words as they lie
// in a little-endian record: perf.data files are read on such machines,
// and a key of another order only misses).
func wordBytes(w []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), 8*len(w))
}

// epochs sorts each process's mapping times, for epoch.
func (s *space) epochs() {
	s.times = make(map[uint32][]uint64, len(s.procs))
	for pid, ms := range s.procs {
		ts := make([]uint64, len(ms))
		for i := range ms {
			ts[i] = ms[i].time
		}
		slices.Sort(ts)
		s.times[pid] = ts
	}
}

// epoch is how many of process pid's mappings were made by time t: the
// mappings lookup chooses among (find), the same for two samples of the
// process with the same epoch.
func (s *space) epoch(pid uint32, t uint64) uint32 { return epochIn(s.times[pid], t) }

// epochIn is epoch of the process whose mappings' times are ts.
func epochIn(ts []uint64, t uint64) uint32 {
	if n := len(ts); n == 0 || ts[n-1] <= t {
		return uint32(n) // every mapping made: most samples after the start
	}
	return uint32(sort.Search(len(ts), func(i int) bool { return ts[i] > t }))
}

// slotTable keeps a value per slot.
type slotTable[T any] []T

func (t *slotTable[T]) set(slot int32, v T) {
	if int(slot) >= len(*t) {
		*t = append(*t, make([]T, int(slot)+1-len(*t))...)
	}
	(*t)[slot] = v
}
