//go:build !linux

package sample

import (
	"errors"
	"io"
)

// Options tune a recording (see the Linux implementation).
type Options struct {
	Freq      int
	Event     string
	StackSize int
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
}

// Record needs Linux's perf_event_open.
func Record(out io.Writer, argv []string, opt Options) (Stats, error) {
	return Stats{}, errors.New("bloop record: needs Linux perf_event_open")
}

// Available reports whether recording can work here.
func Available() error { return errors.New("needs Linux perf_event_open") }

// ownVDSO needs Linux.
func ownVDSO() ([]byte, error) { return nil, errors.New("no vdso") }
