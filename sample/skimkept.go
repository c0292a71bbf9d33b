package sample

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"bloop/perfevent"
)

// A skim walks every record of a perf.data file to find the few that are
// not samples: 50 ms of a warm report of a 219 MiB file, a sixth of it.
// What the walk gives (mappings, threads, losses, build-ids, where the
// parts begin, whether kernel frames come) can be kept, and a later skim
// of the same file replays it instead of walking: SkimPerfKept. Only a
// file that can be read in parts is kept so, for the same reasons it can
// be (its events are in its header, its records not compressed): its
// header then says all that comes before the records.

// SkimPerfKept is SkimPerf, with the entries of the file's records from
// kept, when it is what keep was given by an earlier skim of the same
// file (the caller's to know: the file's identity). Otherwise the
// records are walked, and keep, when not nil, is given their entries
// encoded, once the walk has passed them all without error. A kept form
// that cannot be read is not an error: the file is walked.
func SkimPerfKept(path string, kept []byte, keep func([]byte), f func(Entry) error) error {
	pf, err := openPerf(path, f)
	if err != nil {
		return err
	}
	defer pf.Close()
	if es, parts, err := decodeKept(kept, pf); err == nil {
		for _, e := range es {
			if err := f(e); err != nil {
				return err
			}
		}
		return perfTail(pf, parts, f)
	}
	var buf bytes.Buffer
	var w *Writer
	var kernelAt int64 = -1 // where KernelFrames came among the entries
	n := int64(0)
	tee := f
	if keep != nil {
		w = NewWriter(&buf)
		tee = func(e Entry) error {
			if err := keepEntry(w, e, &kernelAt, n); err != nil {
				return err
			}
			n++
			return f(e)
		}
	}
	conv := newPerfConverter(pf)
	if err := pf.Skim(func(r perfevent.Record) error { return conv.record(r, tee) }); err != nil {
		return err
	}
	parts := Parts(pf.Parts())
	if keep != nil && parts != nil && w.Flush() == nil {
		keep(encodeKept(buf.Bytes(), kernelAt, parts))
	}
	return perfTail(pf, parts, f)
}

// openPerf opens the perf.data file at path and passes its head
// (perfHead); the caller closes it.
func openPerf(path string, f func(Entry) error) (*perfevent.File, error) {
	pf, err := perfevent.Open(path)
	if err != nil {
		return nil, err
	}
	if err := perfHead(pf, f); err != nil {
		pf.Close()
		return nil, err
	}
	return pf, nil
}

// perfHead passes what comes before a perf.data file's records: its
// Meta, and this machine's vdso when perf recorded one.
func perfHead(pf *perfevent.File, f func(Entry) error) error {
	if err := f(perfMeta(pf)); err != nil {
		return err
	}
	if _, ok := pf.Features.BuildIDs["[vdso]"]; ok {
		// The vdso has no file: this machine's stands in (the report
		// checks its build-id against the one perf recorded).
		if data, err := ownVDSO(); err == nil {
			return f(Blob{Name: "[vdso]", Data: data})
		}
	}
	return nil
}

// perfTail passes what comes after a perf.data file's records: the
// build-ids of its header, then its parts when it has them.
func perfTail(pf *perfevent.File, parts Parts, f func(Entry) error) error {
	for p, id := range pf.Features.BuildIDs {
		if err := f(BuildID{Path: p, ID: id}); err != nil {
			return err
		}
	}
	if parts != nil {
		return f(parts)
	}
	return nil
}

// errKeep is a skim's entry that has no kept form; none of SkimPerf's.
var errKeep = errors.New("an entry a skim does not keep")

// keepEntry writes the skim's entry e, the n-th, to w; KernelFrames,
// which bloop's format has no record for, is kept as its place.
func keepEntry(w *Writer, e Entry, kernelAt *int64, n int64) error {
	switch v := e.(type) {
	case Mmap:
		return w.Mmap(v)
	case BuildID:
		return w.BuildID(v)
	case Comm:
		return w.Comm(v)
	case Fork:
		return w.Task(KindFork, Task(v))
	case Exit:
		return w.Task(KindExit, Task(v))
	case Lost:
		return w.Lost(uint64(v))
	case KernelFrames:
		*kernelAt = n
		return nil
	}
	return fmt.Errorf("%w: %T", errKeep, e)
}

// keptMagic begins a kept skim: then the place of KernelFrames among the
// entries plus one (0: none came), the parts (a count, then each offset),
// all unsigned varints, and the entries in bloop's format.
const keptMagic = "bloop perf skim 1\n"

func encodeKept(entries []byte, kernelAt int64, parts Parts) []byte {
	b := append([]byte(keptMagic), make([]byte, 0, 16+5*len(parts)+len(entries))...)
	b = binary.AppendUvarint(b, uint64(kernelAt+1))
	b = binary.AppendUvarint(b, uint64(len(parts)))
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(p))
	}
	return append(b, entries...)
}

// decodeKept reads a kept skim of pf's file: its entries, in the order
// the walk gave them, and its parts, which must fit pf.
func decodeKept(b []byte, pf *perfevent.File) ([]Entry, Parts, error) {
	rest, ok := bytes.CutPrefix(b, []byte(keptMagic))
	if !ok {
		return nil, nil, fmt.Errorf("%w: not a kept skim", ErrFormat)
	}
	r := bytes.NewReader(rest)
	kernelAt, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: kept skim: %v", ErrFormat, err)
	}
	n, err := binary.ReadUvarint(r)
	if err != nil || n > uint64(r.Len()) {
		return nil, nil, fmt.Errorf("%w: kept skim: bad parts", ErrFormat)
	}
	parts := make(Parts, n)
	for i := range parts {
		p, err := binary.ReadUvarint(r)
		if err != nil || p > 1<<62 {
			return nil, nil, fmt.Errorf("%w: kept skim: bad parts", ErrFormat)
		}
		parts[i] = int64(p)
	}
	var es []Entry
	if err := Scan(r, func(e Entry) error {
		if kernelAt > 0 && uint64(len(es)) == kernelAt-1 {
			es = append(es, KernelFrames{})
		}
		switch e.(type) {
		case Mmap, BuildID, Comm, Fork, Exit, Lost:
			es = append(es, e)
			return nil
		}
		return fmt.Errorf("%w: kept skim holds a %T", ErrFormat, e)
	}); err != nil {
		return nil, nil, err
	}
	if kernelAt > 0 && uint64(len(es)) == kernelAt-1 {
		es = append(es, KernelFrames{}) // the last entry
	}
	if kernelAt > uint64(len(es)) {
		return nil, nil, fmt.Errorf("%w: kept skim: kernel frames past its entries", ErrFormat)
	}
	// The parts were the file's: they must still cover its data.
	if err := pf.SetParts(parts); err != nil {
		return nil, nil, err
	}
	return es, parts, nil
}
