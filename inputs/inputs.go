// Package inputs turns the operands of a batch run (binaries, directories
// to walk, measurement directories, lists read from a file) into the list
// of inputs to analyse: ELF files found by content, each file once however
// many links reach it, in an order and with output names that do not
// depend on the machine, the thread count or the shard.
package inputs

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"bloop/meas"
)

// Kind is what an input is.
type Kind int

const (
	Binary       Kind = iota // a file to analyse (refused later if not an ELF bloop reads)
	Measurements             // an hpcrun measurement directory
)

// Input is one file (or measurement directory) of a run.
type Input struct {
	Path    string // as found: the operand, or the operand joined with Rel
	Operand string // the operand it was given or found under
	// Rel is the path below a directory operand, the base name of a file
	// operand: what sharding hashes and output names are made of, so that
	// two checkouts of one tree agree.
	Rel  string
	Kind Kind
	Size int64 // bytes; 0 when it cannot be read
	link bool  // reached through a symbolic link
}

// Set is what the operands hold.
type Set struct {
	Inputs []Input
	// Ignored counts the files below directory operands that are not ELF
	// files (by content) and were left out.
	Ignored int
	// Duplicates counts the paths left out because another path of the
	// run reaches the same file (a symbolic or hard link).
	Duplicates int
	// Warnings are directories that could not be walked.
	Warnings []string
	// Empty lists the directory operands below which no ELF file was found.
	Empty []string
}

// elfMagic starts every ELF file.
var elfMagic = []byte("\x7fELF")

// Collect lists the inputs of operands, in operand order and, below a
// directory, in lexical order. A directory that holds .hpcrun profiles is
// a measurement directory; any other is walked for ELF files (symbolic
// links to files are followed, links to directories are not, as find(1)
// does). An operand that is not a directory is an input whatever it
// holds: the run refuses it in its own line. A file reached by several
// paths is listed once, under the path that is not a symbolic link if
// there is one, else under the first.
func Collect(operands []string) *Set {
	s := &Set{}
	var all []Input
	for _, op := range operands {
		st, err := os.Stat(op)
		switch {
		case err == nil && st.IsDir() && meas.IsMeasurementDir(op):
			all = append(all, Input{Path: op, Operand: op, Rel: filepath.Base(filepath.Clean(op)), Kind: Measurements})
		case err == nil && st.IsDir():
			found := s.walk(op)
			if len(found) == 0 {
				s.Empty = append(s.Empty, op)
			}
			all = append(all, found...)
		default:
			in := Input{Path: op, Operand: op, Rel: filepath.Base(op)}
			if err == nil {
				in.Size = st.Size()
			}
			if lst, err := os.Lstat(op); err == nil {
				in.link = lst.Mode()&fs.ModeSymlink != 0
			}
			all = append(all, in)
		}
	}
	s.Inputs = s.dedup(all)
	return s
}

// walk lists the ELF files below dir.
func (s *Set) walk(dir string) []Input {
	var out []Input
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: cannot walk: %v", p, unwrapPath(err)))
			return nil
		}
		if d.IsDir() {
			return nil
		}
		link := d.Type()&fs.ModeSymlink != 0
		if !link && !d.Type().IsRegular() {
			return nil
		}
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			return nil // a dangling link, or one to a directory or device
		}
		rel, _ := filepath.Rel(dir, p)
		if !isELF(p) {
			s.Ignored++
			return nil
		}
		out = append(out, Input{Path: p, Operand: dir, Rel: filepath.ToSlash(rel), Size: st.Size(), link: link})
		return nil
	})
	return out
}

// unwrapPath drops the path an fs.PathError repeats.
func unwrapPath(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

// isELF reports whether the file starts with the ELF magic. A file that
// cannot be read is kept, so that the run says why.
func isELF(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return true
	}
	defer f.Close()
	var b [4]byte
	n, _ := io.ReadFull(f, b[:])
	return bytes.Equal(b[:n], elfMagic)
}

// fileID identifies a file whatever path reaches it.
type fileID struct{ dev, ino uint64 }

func idOf(p string) (fileID, bool) {
	st, err := os.Stat(p)
	if err != nil {
		return fileID{}, false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(sys.Dev), sys.Ino}, true
}

// dedup keeps one path per file: the first that is not a symbolic link,
// else the first; the kept input keeps the place of the first path.
func (s *Set) dedup(all []Input) []Input {
	first := map[fileID]int{} // id -> index in out
	var out []Input
	for _, in := range all {
		id, ok := idOf(in.Path)
		if !ok {
			out = append(out, in)
			continue
		}
		i, seen := first[id]
		if !seen {
			first[id] = len(out)
			out = append(out, in)
			continue
		}
		s.Duplicates++
		if out[i].link && !in.link {
			out[i] = in
		}
	}
	return out
}

// ReadList reads operands one per line, as build systems emit them: blank
// lines are skipped, and nothing else is interpreted (a path may hold
// spaces).
func ReadList(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) != "" {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}
