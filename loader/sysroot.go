package loader

import (
	"os"
	"path/filepath"
)

// A sysroot is a directory holding another machine's files at their
// paths (the machine a recording or measurement was taken on, as perf's
// --symfs): its binaries, and its separate debug files under
// sysroot/usr/lib/debug.

// SysrootDebugDirs is dirs plus sysroot's debug root; dirs itself when
// sysroot is "". dirs is not modified.
func SysrootDebugDirs(dirs []string, sysroot string) []string {
	if sysroot == "" {
		return dirs
	}
	return append(dirs[:len(dirs):len(dirs)], filepath.Join(sysroot, defaultDebugRoot))
}

// InSysroot is the file for the recorded absolute path under sysroot,
// when sysroot is given and a non-empty regular file is there.
func InSysroot(sysroot, path string) (string, bool) {
	if sysroot == "" || !filepath.IsAbs(path) {
		return "", false
	}
	alt := filepath.Join(sysroot, path)
	if st, err := os.Stat(alt); err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
		return "", false
	}
	return alt, true
}
