package profile

import (
	"encoding/binary"
	"slices"
	"testing"

	"bloop/loader"
	"bloop/perfevent"
	"bloop/sample"
)

// TestEpoch: a sample's epoch counts its process's mappings made by its
// time, whatever the order they were recorded in.
func TestEpoch(t *testing.T) {
	sp := newSpace(loader.Options{})
	sp.procs[1] = []mapping{{time: 30}, {time: 10}, {time: 20}, {time: 20}}
	sp.seal()
	for _, tc := range []struct {
		pid  uint32
		t    uint64
		want uint32
	}{
		{1, 0, 0}, {1, 9, 0}, {1, 10, 1}, {1, 19, 1}, {1, 20, 3}, {1, 29, 3}, {1, 30, 4}, {1, 1 << 60, 4},
		{2, 5, 0}, // no mappings
	} {
		if got := sp.epoch(tc.pid, tc.t); got != tc.want {
			t.Errorf("epoch(%d, %d) = %d, want %d", tc.pid, tc.t, got, tc.want)
		}
	}
}

// chainKey is a key of pid 1, thread tid, at time t, of the callchain
// words.
func chainKey(tid uint32, t uint64, words ...uint64) sample.ChainKey {
	b := make([]byte, 8*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	return sample.ChainKey{ChainFields: perfevent.ChainFields{Pid: 1, Tid: tid, Time: t, IP: words[0], Period: 7, Callchain: b}}
}

// TestChainMemo: a key seen before is a repeat of its slot unless
// something its path depends on differs: its thread, its callchain, its
// event, whether it was taken in the kernel, or the mappings its process
// had made by its time (a library mapped anew where another was).
func TestChainMemo(t *testing.T) {
	sp := newSpace(loader.Options{})
	sp.procs[1] = []mapping{{lo: 0x1000, hi: 0x2000, time: 10}, {lo: 0x1000, hi: 0x2000, time: 100}}
	sp.seal()
	var m chainMemo
	base := chainKey(5, 50, 0x1010, 0x1020)
	kernel := base
	kernel.Kernel = true
	event := base
	event.Event = 1
	for _, tc := range []struct {
		name   string
		k      sample.ChainKey
		slot   int32
		repeat bool
	}{
		{"first", base, 1, false},
		{"again later, same mappings", chainKey(5, 99, 0x1010, 0x1020), 1, true},
		{"other thread", chainKey(6, 50, 0x1010, 0x1020), 2, false},
		{"other callchain", chainKey(5, 50, 0x1010, 0x1021), 3, false},
		{"shorter callchain", chainKey(5, 50, 0x1010), 4, false},
		{"in the kernel", kernel, 5, false},
		{"other event", event, 6, false},
		{"after the remapping", chainKey(5, 100, 0x1010, 0x1020), 7, false},
		{"after the remapping, again", chainKey(5, 500, 0x1010, 0x1020), 7, true},
		{"first, again", base, 1, true},
	} {
		slot, rep := m.slotOf(sp, &tc.k)
		if slot != tc.slot || rep != tc.repeat {
			t.Errorf("%s: slot %d repeat %v, want %d %v", tc.name, slot, rep, tc.slot, tc.repeat)
		}
	}
}

// TestChainMemoFull: a full memo gives no more slots; it goes on
// answering while half its look-ups are repeats, and is switched off
// when fewer are (a profile of distinct stacks).
func TestChainMemoFull(t *testing.T) {
	sp := newSpace(loader.Options{})
	sp.seal()
	for _, tc := range []struct {
		name    string
		repeats int // repeats of the first key before the memo fills
		off     bool
	}{
		{"distinct stacks", 0, true},
		{"repeated stacks", 2 * memoEntries, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m chainMemo
			first := chainKey(1, 0, 1)
			m.slotOf(sp, &first)
			for range tc.repeats {
				if _, rep := m.slotOf(sp, &first); !rep {
					t.Fatal("no repeat")
				}
			}
			for i := 1; i < memoEntries; i++ {
				k := chainKey(1, 0, uint64(i)+1)
				if slot, rep := m.slotOf(sp, &k); rep || slot != int32(i+1) {
					t.Fatalf("key %d: slot %d repeat %v", i, slot, rep)
				}
			}
			k := chainKey(1, 0, 1<<40)
			if slot, _ := m.slotOf(sp, &k); slot != 0 {
				t.Errorf("a full memo gave slot %d", slot)
			}
			if m.off != tc.off {
				t.Errorf("off %v, want %v", m.off, tc.off)
			}
			slot, rep := m.slotOf(sp, &first)
			if want := !tc.off; rep != want || (want && slot != 1) {
				t.Errorf("the first key again: slot %d repeat %v, want a repeat: %v", slot, rep, want)
			}
		})
	}
}

// TestChainMemoStride: the memos of a file's part readers (stride the
// readers, base the reader) number their keys apart, each its repeats
// with the slot it gave first.
func TestChainMemoStride(t *testing.T) {
	sp := newSpace(loader.Options{})
	sp.seal()
	const readers = 3
	seen := map[int32]int{}
	for base := range int32(readers) {
		m := chainMemo{stride: readers, base: base}
		for i := range uint64(5) {
			k := chainKey(1, 0, 100+i) // the same keys in every memo
			slot, rep := m.slotOf(sp, &k)
			if rep || slot <= 0 || slot%readers != base {
				t.Fatalf("reader %d, key %d: slot %d repeat %v, want a new slot ≡ %d mod %d", base, i, slot, rep, base, readers)
			}
			if r, ok := seen[slot]; ok {
				t.Fatalf("reader %d gave slot %d, as reader %d did", base, slot, r)
			}
			seen[slot] = int(base)
			if again, rep := m.slotOf(sp, &k); !rep || again != slot {
				t.Errorf("reader %d, key %d again: slot %d repeat %v, want %d true", base, i, again, rep, slot)
			}
		}
	}
}

// TestMemoRepeats: the memo counts the samples it finds, per slot, with
// the sum of their values, whatever comes between; repeatsInto puts them
// in a batch after its samples, in the order of the slots, and the next
// repeats count anew.
func TestMemoRepeats(t *testing.T) {
	sp := newSpace(loader.Options{})
	m := &chainMemo{}
	k1, k2, k3 := chainKey(1, 0, 10, 11), chainKey(1, 0, 20), chainKey(2, 0, 10, 11)
	for _, k := range []*sample.ChainKey{&k1, &k2, &k3} {
		if _, rep := m.slotOf(sp, k); rep {
			t.Fatal("a first sample found")
		}
	}
	k2.Period = 5
	for _, k := range []*sample.ChainKey{&k2, &k1, &k2, &k1, &k1} {
		if _, rep := m.slotOf(sp, k); !rep {
			t.Fatalf("repeat of %v not found", k.Callchain)
		}
	}
	var b batch
	b.take(&sample.Sample{Callchain: []uint64{1}}, 0)
	m.repeatsInto(&b)
	want := []repeat{{at: 1, slot: 1, n: 3, value: 21}, {at: 1, slot: 2, n: 2, value: 10}}
	if !slices.Equal(b.reps, want) {
		t.Fatalf("repeats %+v, want %+v", b.reps, want)
	}
	b.reset()
	if _, rep := m.slotOf(sp, &k3); !rep {
		t.Fatal("repeat of thread 2's key not found")
	}
	m.repeatsInto(&b)
	if want := []repeat{{at: 0, slot: 3, n: 1, value: 7}}; !slices.Equal(b.reps, want) {
		t.Fatalf("next repeats %+v, want %+v", b.reps, want)
	}
}
