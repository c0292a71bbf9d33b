package cache

import (
	"reflect"
	"strings"
	"testing"
)

var testRefs = []blobRef{
	{blobOut, strings.Repeat("ab", 32), 123456789},
	{blobNotes, strings.Repeat("01", 32), 1},
	{blobDeps, emptyHash, 0},
}

func TestRecordRoundTrip(t *testing.T) {
	b := encodeRecord(testRefs)
	got, err := decodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, testRefs) {
		t.Fatalf("got %+v, want %+v", got, testRefs)
	}
	// A record with no blobs is an empty message.
	if b := encodeRecord(nil); len(b) != 0 {
		t.Errorf("empty record is %x", b)
	}
}

// TestRecordKnownBytes pins the encoding to hand-decoded protobuf: one
// output file {path "out", digest {hash, size_bytes 300}}.
func TestRecordKnownBytes(t *testing.T) {
	h := strings.Repeat("0", 64)
	b := encodeRecord([]blobRef{{"out", h, 300}})
	digest := "\x0a\x40" + h + "\x10\xac\x02" // hash (1, bytes, 64), size_bytes (2, varint 300)
	file := "\x0a\x03out" + "\x12" + string(rune(len(digest))) + digest
	want := "\x12" + string(rune(len(file))) + file // ActionResult.output_files (2, bytes)
	if string(b) != want {
		t.Fatalf("encoded\n%x\nwant\n%x", b, want)
	}
}

// TestRecordOtherFields: fields a server adds, such as bazel-remote's
// execution_metadata (9) with the worker's address, and fields of every
// wire type inside the messages bloop reads, are skipped.
func TestRecordOtherFields(t *testing.T) {
	h := strings.Repeat("c", 64)
	var digest []byte
	digest = appendVarint(digest, 3<<3|wireFixed32) // unknown, fixed32
	digest = append(digest, 1, 2, 3, 4)
	digest = appendBytesField(digest, fieldHash, []byte(h))
	digest = appendVarint(digest, fieldSize<<3|wireVarint)
	digest = appendVarint(digest, 42)
	var file []byte
	file = appendVarint(file, 4<<3|wireVarint) // is_executable
	file = appendVarint(file, 1)
	file = appendBytesField(file, fieldPath, []byte("out"))
	file = appendBytesField(file, fieldDigest, digest)
	file = appendVarint(file, 6<<3|wireFixed64) // unknown, fixed64
	file = append(file, make([]byte, 8)...)
	var meta []byte
	meta = appendBytesField(meta, 1, []byte("127.0.0.1"))
	var b []byte
	b = appendVarint(b, 4<<3|wireVarint) // exit_code
	b = appendVarint(b, 0)
	b = appendBytesField(b, 9, meta) // execution_metadata
	b = appendBytesField(b, fieldOutputFiles, file)
	got, err := decodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := []blobRef{{"out", h, 42}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestRecordMalformed(t *testing.T) {
	h := strings.Repeat("a", 64)
	file := func(fields ...[]byte) []byte {
		var f []byte
		for _, x := range fields {
			f = append(f, x...)
		}
		return appendBytesField(nil, fieldOutputFiles, f)
	}
	path := func(p string) []byte { return appendBytesField(nil, fieldPath, []byte(p)) }
	digest := func(hash string, size int64) []byte {
		d := appendBytesField(nil, fieldHash, []byte(hash))
		d = appendVarint(d, fieldSize<<3|wireVarint)
		d = appendVarint(d, uint64(size))
		return appendBytesField(nil, fieldDigest, d)
	}
	good := encodeRecord(testRefs)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"truncated", good[:len(good)-1]},
		{"truncated tag", []byte{0x80}},
		{"field 0", []byte{0x02, 0x00}},
		{"length past the end", []byte{0x12, 0x05, 0x0a}},
		{"truncated length", []byte{0x12, 0x80}},
		{"truncated varint", []byte{0x20, 0x80}},
		{"truncated fixed64", []byte{0x21, 1, 2, 3}},
		{"overlong varint", append([]byte{0x20}, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01)},
		{"group wire type", []byte{0x13}},
		{"wire type 7", []byte{0x17}},
		{"output_files as a varint", []byte{0x10, 0x01}},
		{"text", []byte("<html>502 Bad Gateway</html>")},
		{"no path", file(digest(h, 1))},
		{"no digest", file(path("out"))},
		{"no hash", file(path("out"), appendBytesField(nil, fieldDigest, nil))},
		{"short hash", file(path("out"), digest(h[:63], 1))},
		{"uppercase hash", file(path("out"), digest(strings.ToUpper(h), 1))},
		{"negative size", file(path("out"), digest(h, -1))},
		{"path not UTF-8", file(path("\xff"), digest(h, 1))},
		{"path as a varint", file(appendVarint(appendVarint(nil, fieldPath<<3|wireVarint), 1), digest(h, 1))},
		{"size as bytes", file(path("out"), appendBytesField(nil, fieldDigest, appendBytesField(appendBytesField(nil, fieldHash, []byte(h)), fieldSize, []byte{1})))},
		{"path twice", append(file(path("out"), digest(h, 1)), file(path("out"), digest(h, 1))...)},
	} {
		if refs, err := decodeRecord(tc.b); err == nil {
			t.Errorf("%s: parsed as %+v", tc.name, refs)
		}
	}
}

func TestReadVarint(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 300, 1<<63 - 1, 1 << 63, ^uint64(0)} {
		b := appendVarint(nil, v)
		got, n := readVarint(b)
		if got != v || n != len(b) {
			t.Errorf("%d: read %d, %d bytes of %d", v, got, n, len(b))
		}
	}
	// 2^64 does not fit.
	if _, n := readVarint([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}); n != -1 {
		t.Errorf("overflow read as %d bytes", n)
	}
}
