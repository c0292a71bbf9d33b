package cache

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// An entry on the remote server is a record under ac/<key> naming the
// blobs of the entry, each stored under cas/<sha256 of its bytes>. The
// record is a Bazel Remote Execution API v2 ActionResult (remote_execution.proto),
// so that bazel-remote, which checks every action-cache upload over HTTP
// parses as one (and, on a read, that the blobs it names are in its CAS),
// stores it; nginx stores it as any file. Only the fields bloop uses are
// written, encoded by hand (there is no protobuf dependency for three
// messages):
//
//	message ActionResult { repeated OutputFile output_files = 2; ... }
//	message OutputFile   { string path = 1; Digest digest = 2; ... }
//	message Digest       { string hash = 1; int64 size_bytes = 2; }
//
// Reading skips every other field, as protobuf readers do: bazel-remote
// adds execution_metadata (field 9) with the uploader's address.
const (
	fieldOutputFiles = 2 // ActionResult.output_files
	fieldPath        = 1 // OutputFile.path
	fieldDigest      = 2 // OutputFile.digest
	fieldHash        = 1 // Digest.hash
	fieldSize        = 2 // Digest.size_bytes
)

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// blobRef names one blob of an entry: its role in the entry (the output
// file's path in the ActionResult, relative as bazel-remote requires) and
// its digest.
type blobRef struct {
	Name string
	Hash string // lowercase hex SHA-256
	Size int64
}

// encodeRecord is the ActionResult listing refs as output files.
func encodeRecord(refs []blobRef) []byte {
	var b []byte
	for _, r := range refs {
		var digest []byte
		digest = appendBytesField(digest, fieldHash, []byte(r.Hash))
		if r.Size != 0 { // proto3 leaves out a zero scalar
			digest = appendVarint(digest, fieldSize<<3|wireVarint)
			digest = appendVarint(digest, uint64(r.Size))
		}
		var file []byte
		file = appendBytesField(file, fieldPath, []byte(r.Name))
		file = appendBytesField(file, fieldDigest, digest)
		b = appendBytesField(b, fieldOutputFiles, file)
	}
	return b
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendBytesField(b []byte, field int, v []byte) []byte {
	b = appendVarint(b, uint64(field)<<3|wireBytes)
	b = appendVarint(b, uint64(len(v)))
	return append(b, v...)
}

// decodeRecord reads the output files of an ActionResult. Anything that
// is not a well-formed message, or an output file bloop could not have
// written (no path, a hash that is not 64 lowercase hex digits, a
// negative size, a path named twice), is an error.
func decodeRecord(b []byte) ([]blobRef, error) {
	var refs []blobRef
	seen := map[string]bool{}
	err := walkFields(b, func(field int, wire int, v []byte) error {
		if field != fieldOutputFiles {
			return nil
		}
		if wire != wireBytes {
			return fmt.Errorf("output_files has wire type %d", wire)
		}
		r, err := decodeOutputFile(v)
		if err != nil {
			return err
		}
		if seen[r.Name] {
			return fmt.Errorf("output file %q listed twice", r.Name)
		}
		seen[r.Name] = true
		refs = append(refs, r)
		return nil
	})
	return refs, err
}

func decodeOutputFile(b []byte) (blobRef, error) {
	var r blobRef
	hasDigest := false
	err := walkFields(b, func(field int, wire int, v []byte) error {
		switch field {
		case fieldPath:
			if wire != wireBytes {
				return fmt.Errorf("output file path has wire type %d", wire)
			}
			if !utf8.Valid(v) {
				return errors.New("output file path is not UTF-8")
			}
			r.Name = string(v)
		case fieldDigest:
			if wire != wireBytes {
				return fmt.Errorf("output file digest has wire type %d", wire)
			}
			hasDigest = true
			return walkFields(v, func(field int, wire int, v []byte) error {
				switch {
				case field == fieldHash && wire == wireBytes:
					r.Hash = string(v)
				case field == fieldSize && wire == wireVarint:
					n, _ := readVarint(v)
					r.Size = int64(n)
				case field == fieldHash || field == fieldSize:
					return fmt.Errorf("digest field %d has wire type %d", field, wire)
				}
				return nil
			})
		}
		return nil
	})
	switch {
	case err != nil:
		return r, err
	case r.Name == "":
		return r, errors.New("output file without a path")
	case !hasDigest:
		return r, fmt.Errorf("output file %q without a digest", r.Name)
	case !isHash(r.Hash):
		return r, fmt.Errorf("output file %q: digest hash %q is not a SHA-256 in lowercase hex", r.Name, r.Hash)
	case r.Size < 0:
		return r, fmt.Errorf("output file %q: negative size %d", r.Name, r.Size)
	}
	return r, nil
}

// walkFields calls f with each field of a message: its number, wire type
// and value (the payload of a length-delimited field, the varint's own
// bytes, the fixed-size bytes).
func walkFields(b []byte, f func(field int, wire int, v []byte) error) error {
	for len(b) > 0 {
		tag, n := readVarint(b)
		if n <= 0 {
			return errors.New("truncated or overlong field tag")
		}
		b = b[n:]
		field, wire := tag>>3, int(tag&7)
		if field == 0 || field > 1<<29-1 {
			return fmt.Errorf("field number %d out of range", field)
		}
		var v []byte
		switch wire {
		case wireVarint:
			_, n := readVarint(b)
			if n <= 0 {
				return fmt.Errorf("field %d: truncated varint", field)
			}
			v, b = b[:n], b[n:]
		case wireFixed64, wireFixed32:
			size := 8
			if wire == wireFixed32 {
				size = 4
			}
			if len(b) < size {
				return fmt.Errorf("field %d: truncated fixed-size value", field)
			}
			v, b = b[:size], b[size:]
		case wireBytes:
			l, n := readVarint(b)
			if n <= 0 {
				return fmt.Errorf("field %d: truncated length", field)
			}
			b = b[n:]
			if l > uint64(len(b)) {
				return fmt.Errorf("field %d: length %d runs past the end (%d bytes left)", field, l, len(b))
			}
			v, b = b[:l], b[l:]
		default: // groups (3, 4) are not in these messages; 6 and 7 do not exist
			return fmt.Errorf("field %d: unsupported wire type %d", field, wire)
		}
		if err := f(int(field), wire, v); err != nil {
			return err
		}
	}
	return nil
}

// readVarint decodes a varint at the start of b and returns it with its
// length; the length is 0 when b ends first, -1 when it has more than 10
// bytes or overflows 64 bits.
func readVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b); i++ {
		if i == 10 || i == 9 && b[i] > 1 {
			return 0, -1
		}
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// isHash reports whether s is a SHA-256 in lowercase hex, the only
// spelling bazel-remote accepts in a path.
func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
