package view

import (
	"bufio"
	"embed"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"

	"bloop/profile"
)

//go:embed assets/*.js assets/*.css
var assets embed.FS

// asset returns an embedded file's text. The set is fixed at build time,
// so a missing name is a programming error.
func asset(name string) string {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// A page's script must not end its own element early: the embedded files
// are checked once (by the tests and here) for "</script".
func script(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		s := asset(n)
		if strings.Contains(strings.ToLower(s), "</script") {
			panic("view: assets/" + n + " holds </script")
		}
		b.WriteString(s)
		b.WriteString("\n")
	}
	return b.String()
}

// The policy forbids every fetch (scripts, styles, images, fonts,
// connections) but the page's own inline script and style: a page that
// works here works offline, and cannot leak the profile anywhere.
const csp = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"

// writePage writes one self-contained HTML page: the data as JSON in a
// script element of type application/json (json.Marshal escapes <, > and
// &, so no name in it can close the element), then the style and the
// scripts inline.
func writePage(w io.Writer, title string, data any, scripts ...string) error {
	js, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("page data: %w", err)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	fmt.Fprintf(bw, "<meta http-equiv=\"Content-Security-Policy\" content=\"%s\">\n", csp)
	fmt.Fprintf(bw, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	// An empty icon: browsers otherwise ask for /favicon.ico.
	fmt.Fprintf(bw, "<link rel=\"icon\" href=\"data:,\">\n")
	fmt.Fprintf(bw, "<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n", html.EscapeString(title), asset("style.css"))
	fmt.Fprintf(bw, "<script type=\"application/json\" id=\"bloop-data\">")
	bw.Write(js)
	fmt.Fprintf(bw, "</script>\n<script>\n%s</script>\n</body>\n</html>\n", script(scripts...))
	return bw.Flush()
}

// WriteReport writes the report page of an attributed recording, with
// the sources its samples reach.
func WriteReport(w io.Writer, p *profile.Profile, o Options) error {
	d := Report(p)
	d.AddSources(o)
	title := "bloop report"
	if d.Command != "" {
		title += ": " + d.Command
	}
	return writePage(w, title, d, "common.js", "flame.js", "tables.js", "source.js", "report.js")
}
