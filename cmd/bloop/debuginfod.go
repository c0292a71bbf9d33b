package main

import (
	"fmt"
	"os"

	"bloop/debuginfod"
	"bloop/loader"
	"bloop/profile"
	"bloop/view"
)

// debuginfodClient is the debuginfod client of $DEBUGINFOD_URLS (with
// elfutils' other variables) for one run, nil when it is empty or
// --no-debuginfod is given. Its problems are warnings on stderr, each
// once: a failing server is reported and not asked again.
func debuginfodClient(off bool) *debuginfod.Client {
	if off {
		return nil
	}
	opt, ok := debuginfod.FromEnv()
	if !ok {
		return nil
	}
	opt.Warn = func(msg string) { fmt.Fprintf(os.Stderr, "bloop: warning: %s\n", msg) }
	return debuginfod.New(opt)
}

// fetchers are c as what loading, bloop report and the pages ask:
// debug files, modules and debug files, and sources; all nil interfaces
// when c is nil (no *Client in an interface, which users must see as
// none).
func fetchers(c *debuginfod.Client) (loader.DebugFetcher, profile.Fetcher, view.SourceFetcher) {
	if c == nil {
		return nil, nil, nil
	}
	return c, c, c
}
