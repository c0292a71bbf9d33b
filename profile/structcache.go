package profile

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"bloop/cache"
	"bloop/internal/varint"
	"bloop/structfile"
	"bloop/structure"
)

// A measurement directory's structs/ are parsed XML: python3.11's or
// libc's take most of a report of a few hundred small profiles (0.6 s of
// its 1.2 s). The report's cache keeps, by the structure file's content,
// each LM's name and scope index, and by that and the module's key,
// whether the file is of the module's build; the file is parsed only
// when one of them is missing.
const (
	structLMsKind   = "profile structure file's modules 1"
	structCheckKind = "profile structure file checked against its module 1"
	structLMsMagic  = "bloop structure file's modules 1\n"
)

// cachedStructLMs is structLMs through c: the LMs of a file found there
// have no node (checkCached gives their check).
func cachedStructLMs(c *cache.Cache, files []string, bad func(error) error) []structLM {
	var out []structLM
	for _, f := range files {
		key := structFileKey(c, f)
		if key != "" {
			if lms, err := decodeStructLMs(readEntry(c, cache.Key(structLMsKind, key)), f); err == nil {
				out = append(out, lms...)
				continue
			}
		}
		doc, err := structure.ParseFile(f)
		if err != nil {
			bad(err)
			continue
		}
		lms := indexDoc(doc)
		if key != "" {
			writeEntry(c, cache.Key(structLMsKind, key), encodeStructLMs(lms))
		}
		out = append(out, lms...)
	}
	return out
}

// structFileKey names a structure file's content for this build of
// bloop; "" when it cannot.
func structFileKey(c *cache.Cache, f string) string {
	self, err := structfile.SelfID(c)
	if err != nil {
		return ""
	}
	sum, err := c.FileHash(f)
	if err != nil {
		return ""
	}
	return cache.Key(self, sum)
}

// checkCached says whether lm is of m's build, with the check's
// description, parsing lm's file when the cache has no answer.
func checkCached(c *cache.Cache, lm structLM, m *Module, load structfile.Options) (bool, string, error) {
	var key string
	if fk := structFileKey(c, lm.file); fk != "" {
		if mk, err := structfile.Key(c, m.Img.Path, load); err == nil {
			key = cache.Key(structCheckKind, fk, lm.name, mk)
		}
	}
	if b := readEntry(c, key); len(b) > 0 {
		return b[0] == 1, string(b[1:]), nil
	}
	node := lm.node
	if node == nil {
		doc, err := structure.ParseFile(lm.file)
		if err != nil {
			return false, "", err
		}
		for _, x := range doc.Modules() {
			if x.Path == lm.name {
				node = x.Src
				break
			}
		}
		if node == nil {
			return false, "", fmt.Errorf("%s: no LM %q any more", lm.file, lm.name)
		}
	}
	ck := checkStructure(node, m.Img)
	b := []byte{0}
	if ck.ok() {
		b[0] = 1
	}
	b = append(b, ck.String()...)
	writeEntry(c, key, b)
	return ck.ok(), ck.String(), nil
}

func encodeStructLMs(lms []structLM) []byte {
	b := []byte(structLMsMagic)
	b = binary.AppendUvarint(b, uint64(len(lms)))
	for _, lm := range lms {
		x := encodeIndex(lm.index)
		b = binary.AppendUvarint(b, uint64(len(lm.name)))
		b = append(b, lm.name...)
		b = binary.AppendUvarint(b, uint64(len(x)))
		b = append(b, x...)
	}
	return b
}

func decodeStructLMs(b []byte, file string) ([]structLM, error) {
	rest, ok := bytes.CutPrefix(b, []byte(structLMsMagic))
	if !ok {
		return nil, fmt.Errorf("not a stored structure file")
	}
	r := &varint.Reader{B: rest}
	lms := make([]structLM, r.Count())
	for i := range lms {
		name := r.Str()
		x, err := decodeIndex(r.Bytes())
		if err != nil {
			return nil, err
		}
		lms[i] = structLM{file: file, name: name, index: x}
	}
	return lms, r.End()
}
