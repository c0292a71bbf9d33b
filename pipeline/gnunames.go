package pipeline

import (
	"os/exec"
	"sort"
	"strings"

	"bloop/loader"
)

// gnuNames demangles every C++ name of img with c++filt, GNU's demangler,
// which hpcstruct uses: --compat hpcstruct then spells names exactly as
// hpcstruct does. Without c++filt (binutils) it returns nil and the
// built-in demangler is used.
func gnuNames(img *loader.Image) map[string]string {
	cxxfilt, err := exec.LookPath("c++filt")
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var names []string
	add := func(n string) {
		n = strings.TrimSuffix(n, "@plt")
		if strings.HasPrefix(n, "_Z") && !seen[n] && !strings.ContainsAny(n, " \n") {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, f := range img.Funcs {
		add(f.Name)
	}
	var walk func([]*loader.Inline)
	walk = func(ins []*loader.Inline) {
		for _, in := range ins {
			add(in.LinkName)
			walk(in.Children)
		}
	}
	for _, p := range img.Procs {
		walk(p.Inlines)
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	cmd := exec.Command(cxxfilt)
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(names) {
		return nil
	}
	m := make(map[string]string, len(names))
	for i, n := range names {
		m[n] = lines[i]
	}
	return m
}
