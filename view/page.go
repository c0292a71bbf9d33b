package view

import (
	"bufio"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
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

// The skeletons are html/template files: the template escapes the title
// and the names an index lists, and takes the style, scripts and data
// (which the code above checks) as they are.
//
//go:embed templates/*.html
var templateFiles embed.FS

var templates = template.Must(template.ParseFS(templateFiles, "templates/*.html"))

// pageSkeleton is what templates/page.html fills in.
type pageSkeleton struct {
	CSP, Title, Class string
	Style             template.CSS
	Enums, Data       template.JS
	Script            template.JS
}

// writePage writes one self-contained HTML page of class (the body's
// class, page-struct, page-diff or page-report: the style's layout of
// each): the enums and the data as JSON in script elements of type
// application/json (json.Marshal escapes <, > and &, so no name in them
// can close the element), then the style and the scripts inline.
func writePage(w io.Writer, class, title string, data any, scripts ...string) error {
	js, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("page data: %w", err)
	}
	en, err := json.Marshal(enumData())
	if err != nil {
		return fmt.Errorf("page enums: %w", err)
	}
	bw := bufio.NewWriter(w)
	sk := pageSkeleton{CSP: csp, Title: title, Class: class, Style: template.CSS(asset("style.css")),
		Enums: template.JS(en), Data: template.JS(js), Script: template.JS(script(scripts...))}
	if err := templates.ExecuteTemplate(bw, "page.html", sk); err != nil {
		return fmt.Errorf("page: %w", err)
	}
	return bw.Flush()
}

// WriteReport writes the report page of an attributed recording, with
// the sources its samples reach.
func WriteReport(w io.Writer, p *profile.Profile, o Options) error {
	d := Report(p)
	if o.Fetcher != nil {
		d.sourceIDs = sourceBuildIDs(p)
	}
	d.AddSources(o)
	title := "bloop report"
	if d.Command != "" {
		title += ": " + d.Command
	}
	return writePage(w, "page-report", title, d, "common.js", "srctable.js", "flame.js", "tables.js", "source.js", "report.js")
}
