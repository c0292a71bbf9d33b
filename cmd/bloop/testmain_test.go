package main

import (
	"fmt"
	"os"
	"testing"

	"bloop/cache"
)

// TestMain gives the tests a cache of their own, so that they neither
// read nor fill the user's.
func TestMain(m *testing.M) {
	// Tests that need a real process (signals) run this binary as bloop.
	if os.Getenv("BLOOP_TEST_MAIN") == "1" {
		main()
	}
	dir, err := os.MkdirTemp("", "bloop-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(cache.EnvVar, dir)
	// Nor a remote cache the environment names.
	os.Unsetenv(cache.URLEnvVar)
	os.Unsetenv(cache.TokenEnvVar)
	// Nor the debuginfod servers it names: a test that wants one
	// starts its own.
	os.Unsetenv("DEBUGINFOD_URLS")
	os.Setenv("DEBUGINFOD_CACHE_PATH", dir+"/debuginfod")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
