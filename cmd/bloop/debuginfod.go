package main

import (
	"fmt"
	"os"

	"bloop/debuginfod"
	"bloop/loader"
)

// debugFetcher is the debuginfod client of $DEBUGINFOD_URLS (with
// elfutils' other variables) for one run, nil when it is empty or
// --no-debuginfod is given. Its problems are warnings on stderr, each
// once: a failing server is reported and not asked again.
func debugFetcher(off bool) loader.DebugFetcher {
	if off {
		return nil
	}
	opt, ok := debuginfod.FromEnv()
	if !ok {
		return nil
	}
	opt.Warn = func(msg string) { fmt.Fprintf(os.Stderr, "bloop: warning: %s\n", msg) }
	c := debuginfod.New(opt)
	if c == nil {
		return nil // not a *Client in an interface: loading must see none
	}
	return c
}
