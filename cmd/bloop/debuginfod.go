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

// debugFetcher is debuginfodClient as the loader's fetcher: a nil
// client is no *Client in an interface, which loading must see as none.
func debugFetcher(off bool) loader.DebugFetcher {
	if c := debuginfodClient(off); c != nil {
		return c
	}
	return nil
}

// fetchers are c as what bloop report and the pages ask: modules and
// debug files, and sources; both nil interfaces when c is nil.
func fetchers(c *debuginfod.Client) (profile.Fetcher, view.SourceFetcher) {
	if c == nil {
		return nil, nil
	}
	return c, c
}
