package view

import (
	"bufio"
	"fmt"
	"html"
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
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	fmt.Fprintf(bw, "<meta http-equiv=\"Content-Security-Policy\" content=\"%s\">\n", csp)
	fmt.Fprintf(bw, "<link rel=\"icon\" href=\"data:,\">\n")
	fmt.Fprintf(bw, "<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n", html.EscapeString(title), asset("style.css"))
	fmt.Fprintf(bw, "<header><h1>%s</h1></header>\n<section class=\"pane\">\n<ol class=\"index\">\n", html.EscapeString(title))
	for _, e := range entries {
		if e.Link != "" {
			// The link is a file name: escaped as an attribute, and made
			// relative so that a name with a colon is not a scheme.
			fmt.Fprintf(bw, "<li><a href=\"./%s\">%s</a></li>\n", html.EscapeString(e.Link), html.EscapeString(e.Name))
		} else {
			fmt.Fprintf(bw, "<li>%s <span class=\"info\">%s</span></li>\n", html.EscapeString(e.Name), html.EscapeString(e.Note))
		}
	}
	fmt.Fprintf(bw, "</ol>\n</section>\n</body>\n</html>\n")
	return bw.Flush()
}
