package perfevent

import (
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// maxZstdWindow bounds the memory a compressed stream may ask for: perf
// record -z's levels up to 19 use windows of at most 8 MiB.
const maxZstdWindow = 8 << 20

// zstdStream decompresses the payloads of perf's COMPRESSED records.
// perf compresses the ring buffer's data into one zstd frame that it
// flushes, but never ends, at each record: the payloads are consecutive
// pieces of one stream, and each piece yields the records (or the parts
// of records) it completes. The decoder pulls its input, so it runs in a
// goroutine of its own that asks for the next payload when it has
// returned everything the previous ones hold.
type zstdStream struct {
	in    chan []byte      // payloads, to the decoder
	out   chan zstdMessage // output, requests for input, or the decoder's end
	ended bool             // the decoder's goroutine has ended
	err   error            // the stream cannot go on: why
}

type zstdMessage struct {
	data      []byte
	needInput bool
	err       error // the goroutine's last message
}

func newZstdStream() *zstdStream {
	z := &zstdStream{in: make(chan []byte), out: make(chan zstdMessage)}
	go z.run()
	z.await(nil, 0) // the decoder's first request for input
	return z
}

// run decodes until the input ends or is corrupt.
func (z *zstdStream) run() {
	dec, err := zstd.NewReader(&zstdInput{z: z}, zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderLowmem(true))
	if err != nil {
		z.out <- zstdMessage{err: err}
		return
	}
	defer dec.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := dec.Read(buf)
		if n > 0 {
			z.out <- zstdMessage{data: append([]byte(nil), buf[:n]...)}
		}
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				err = errors.New("the compressed data ends early")
			}
			z.out <- zstdMessage{err: err}
			return
		}
	}
}

// zstdInput hands the decoder one payload after another.
type zstdInput struct {
	z   *zstdStream
	cur []byte
}

func (r *zstdInput) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		r.z.out <- zstdMessage{needInput: true}
		b, ok := <-r.z.in
		if !ok {
			return 0, io.EOF
		}
		r.cur = b
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// feed decompresses one payload, appending to dst all the output it
// makes available, at most limit bytes.
func (z *zstdStream) feed(dst, payload []byte, limit int) ([]byte, error) {
	if z.err != nil {
		return dst, z.err
	}
	if len(payload) == 0 {
		return dst, nil
	}
	z.in <- payload
	return z.await(dst, len(dst)+limit)
}

// await collects output until the decoder asks for input.
func (z *zstdStream) await(dst []byte, limit int) ([]byte, error) {
	for {
		m := <-z.out
		switch {
		case m.needInput:
			return dst, nil
		case m.err != nil:
			z.ended, z.err = true, fmt.Errorf("zstd: %w", m.err)
			return dst, z.err
		}
		if len(dst)+len(m.data) > limit {
			z.err = fmt.Errorf("a COMPRESSED record holds more than %d bytes", limit)
			return dst, z.err
		}
		dst = append(dst, m.data...)
	}
}

// close stops the decoder's goroutine.
func (z *zstdStream) close() {
	if z == nil || z.ended {
		return
	}
	close(z.in)
	for m := range z.out {
		if m.err != nil {
			break
		}
	}
	z.ended = true
}
