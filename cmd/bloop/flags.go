package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
)

// flagSet is a command's flags with the conventions every bloop command
// shares: -h prints the usage on stdout and exits 0; a bad flag is one
// line on stderr that names it, exit 2; long aliases (--jobs for -j) are
// listed beside their short flag.
type flagSet struct {
	*flag.FlagSet
	usage   string
	aliases map[string]string // long name -> short name
	// interspersed lets flags follow the operands (bloop struct prog -o -);
	// record turns it off, since what follows the program is its own.
	interspersed bool
}

func newFlagSet(name, usage string) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), usage: usage,
		aliases: map[string]string{}, interspersed: true}
	fs.SetOutput(io.Discard) // errors are printed by parse, in one line
	fs.FlagSet.Usage = func() {}
	return fs
}

// alias makes --long another name of the flag -short.
func (fs *flagSet) alias(short, long string) {
	f := fs.Lookup(short)
	fs.Var(f.Value, long, f.Usage)
	fs.aliases[long] = short
}

// writeUsage prints the usage text and the flags, aliases beside their flag.
func (fs *flagSet) writeUsage(w io.Writer) {
	fmt.Fprint(w, fs.usage)
	longOf := map[string][]string{}
	for l, s := range fs.aliases {
		longOf[s] = append(longOf[s], l)
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := fs.aliases[f.Name]; !ok {
			names = append(names, f.Name)
		}
	})
	sort.Strings(names)
	if len(names) > 0 {
		fmt.Fprint(w, "\nflags:\n")
	}
	for _, n := range names {
		f := fs.Lookup(n)
		arg, usage := flag.UnquoteUsage(f)
		head := "  " + dash(n)
		ls := longOf[n]
		sort.Strings(ls)
		for _, l := range ls {
			head += ", " + dash(l)
		}
		if arg != "" {
			head += " " + arg
		}
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "[]" {
			if fmt.Sprintf("%T", f.Value) == "*flag.stringValue" {
				def = strconv.Quote(def) // as the flag package prints it
			}
			usage += fmt.Sprintf(" (default %s)", def)
		}
		fmt.Fprintf(w, "%s\n    \t%s\n", head, strings.ReplaceAll(usage, "\n", "\n    \t"))
	}
}

// dash spells a flag as users type it: -j, --jobs.
func dash(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// Usage prints the usage on stderr, for commands called without operands.
func (fs *flagSet) Usage() { fs.writeUsage(os.Stderr) }

// parse parses args into fs and returns the operands. When ok is false
// the command must return code: 0 after -h, 2 after a bad flag.
func (fs *flagSet) parse(args []string) (operands []string, code int, ok bool) {
	args = fs.joinYesNo(splitShortInts(args))
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fs.writeUsage(os.Stdout)
			return nil, 0, false
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bloop %s: %v (see bloop %s -h)\n", fs.Name(), err, fs.Name())
			return nil, 2, false
		}
		rest := fs.Args()
		// The flag package eats a "--" that ends the flags: then
		// everything after it is an operand, even "-x".
		dashdash := len(rest) < len(args) && args[len(args)-len(rest)-1] == "--"
		if !fs.interspersed || len(rest) == 0 || dashdash {
			return append(operands, rest...), 0, true
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}

// splitShortInts accepts hpcstruct's -j4 spelling as -j 4.
func splitShortInts(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] == 'j' && a[2] >= '0' && a[2] <= '9' {
			out = append(out, "-j", a[2:])
			continue
		}
		out = append(out, a)
	}
	return out
}

// yesNo is a boolean flag that also takes hpcstruct's spelling of its
// value as the next argument (--gpucfg yes, --gpucfg no); alone it is on.
type yesNo bool

func (v *yesNo) String() string {
	if v != nil && bool(*v) {
		return "true"
	}
	return "false"
}

func (v *yesNo) Set(s string) error {
	switch strings.ToLower(s) {
	case "yes", "true", "1":
		*v = true
	case "no", "false", "0":
		*v = false
	default:
		return fmt.Errorf("%q: want yes or no", s)
	}
	return nil
}

func (v *yesNo) IsBoolFlag() bool { return true }

// joinYesNo makes hpcstruct's "--gpucfg yes" the flag package's
// "--gpucfg=yes" for the flags of type yesNo.
func (fs *flagSet) joinYesNo(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		name := strings.TrimLeft(a, "-")
		if f := fs.Lookup(name); f != nil && a != name && i+1 < len(args) {
			if _, ok := f.Value.(*yesNo); ok {
				switch strings.ToLower(args[i+1]) {
				case "yes", "no":
					out = append(out, a+"="+args[i+1])
					i++
					continue
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// versionString is the module version and VCS revision the binary was
// built from, as the go command stamps them.
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "bloop (unknown version)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	s := "bloop " + v
	var rev, when string
	modified := false
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.time":
			when = kv.Value
		case "vcs.modified":
			modified = kv.Value == "true"
		}
	}
	if rev != "" {
		s += " " + rev
		if modified {
			s += "+modified"
		}
		if when != "" {
			s += " " + when
		}
	}
	return s + " " + bi.GoVersion
}

func runVersion(args []string) int {
	fs := newFlagSet("version", "usage: bloop version\n\nPrints the module version and VCS revision bloop was built from.\n")
	operands, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(operands) != 0 {
		fmt.Fprintln(os.Stderr, "bloop version: takes no operands (see bloop version -h)")
		return 2
	}
	fmt.Println(versionString())
	return 0
}
