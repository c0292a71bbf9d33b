// Package schema holds the JSON Schemas (draft 2020-12) of bloop's JSON
// outputs, embedded so that the binary can print them and tests can
// validate against them (internal/schematest). The files are the
// published form: schema/NAME-vN.json, $id https://bloop.dev/schema/NAME-vN.json
// (an identifier only; nothing is fetched). See docs/formats.md, "JSON schemas".
package schema

import (
	"embed"
	"slices"
)

//go:embed *.json
var FS embed.FS

// The schema files.
const (
	// Structure: bloop struct --format json.
	Structure = "structure-v1.json"
	// Diff: bloop diff --json, of two files or of two directories.
	// diff-v1.json stays for readers of version 1 reports (before
	// procedures were paired by source function).
	Diff = "diff-v2.json"
	// DiffV1: version 1 of Diff, for the readers of old reports.
	DiffV1 = "diff-v1.json"
	// Manifest: one record (line) of bloop struct's manifest.
	Manifest = "manifest-v1.json"
	// ReportPage: the data of bloop report --html's page.
	ReportPage = "report-page-v1.json"
	// StructPage: the data of bloop struct --format html's page.
	StructPage = "struct-page-v1.json"
	// DiffPage: the data of bloop diff --html's page.
	DiffPage = "diff-page-v1.json"
)

// BaseURL prefixes a file's name to make its $id.
const BaseURL = "https://bloop.dev/schema/"

// Names lists the schema files, sorted.
func Names() []string {
	entries, _ := FS.ReadDir(".")
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// Bytes returns the schema file name; false when there is none.
func Bytes(name string) ([]byte, bool) {
	b, err := FS.ReadFile(name)
	return b, err == nil
}
