package structure

import (
	"strings"
	"testing"

	"bloop/internal/structtest"
)

func mustParse(t testing.TB, src, name string) *Doc {
	t.Helper()
	d, err := Parse(strings.NewReader(structtest.WithIDs(src)), name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
