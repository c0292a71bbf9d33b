package meas

import (
	"encoding/binary"
	"fmt"
	"io"
)

// sectionAlign is the .hpcrun section alignment.
const sectionAlign = 1024

// WriteProfile writes a .hpcrun file that holds header (the bytes of a
// profile's header section, magic included) and a load map, and empty
// CCT, metric, id-tuple and value sections: enough for the load-map
// readers (this package, hpcstruct). Tests use it to point a real
// profile's load map at binaries of their own.
func WriteProfile(w io.Writer, header []byte, es []Entry) error {
	var b []byte
	pad := func() {
		for len(b)%sectionAlign != 0 {
			b = append(b, 0)
		}
	}
	var foot [footerWords]uint64
	b = append(b, header...)
	foot[1] = uint64(len(b))
	pad()
	foot[loadMapStart] = uint64(len(b))
	b = binary.BigEndian.AppendUint32(b, uint32(len(es)))
	for _, e := range es {
		if len(e.Path) > 1<<31 {
			return fmt.Errorf("load map path of %d bytes", len(e.Path))
		}
		b = binary.BigEndian.AppendUint16(b, e.ID)
		b = binary.BigEndian.AppendUint32(b, uint32(len(e.Path)))
		b = append(b, e.Path...)
		b = binary.BigEndian.AppendUint64(b, e.Flags)
	}
	foot[loadMapEnd] = uint64(len(b))
	// The other sections, empty, each at its aligned start.
	for i := 4; i < footerWords-2; i += 2 {
		pad()
		foot[i], foot[i+1] = uint64(len(b)), uint64(len(b))
	}
	pad()
	foot[footerWords-2] = uint64(len(b))
	foot[footerWords-1] = footerMagic
	for _, v := range foot {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	_, err := w.Write(b)
	return err
}

// ReadHeader returns the header section of the .hpcrun file data.
func ReadHeader(data []byte) ([]byte, error) {
	if len(data) < footerSize || string(data[:min(len(data), len(magic))]) != magic {
		return nil, fmt.Errorf("not an hpcrun profile")
	}
	end := binary.BigEndian.Uint64(data[len(data)-footerSize+8:])
	if end > uint64(len(data)) {
		return nil, fmt.Errorf("header end %#x past the file", end)
	}
	return data[:end], nil
}
