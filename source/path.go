package source

// Path returns the readable file that the line table's file name stands
// for (the name itself, else where Dirs find it), or "" when there is
// none; the file is counted in Probed.
func (f *Finder) Path(file string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.find(file)
}
