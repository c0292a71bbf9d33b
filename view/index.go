package view

import (
	"bufio"
	"fmt"
	"html/template"
	"io"
)

// IndexEntry is one page of an index: what it is of (Name), the page's
// path relative to the index (Link), or why there is none (Note).
type IndexEntry struct {
	Name, Link, Note string
}

// WriteIndex writes a page that links to others (the structure pages of
// a measurement directory's modules): plain HTML, no script, the pages'
// style and policy, so that it opens from disk as they do.
func WriteIndex(w io.Writer, title string, entries []IndexEntry) error {
	bw := bufio.NewWriter(w)
	err := templates.ExecuteTemplate(bw, "index.html", struct {
		CSP, Title string
		Style      template.CSS
		Entries    []IndexEntry
	}{csp, title, template.CSS(asset("style.css")), entries})
	if err != nil {
		return fmt.Errorf("index page: %w", err)
	}
	return bw.Flush()
}
