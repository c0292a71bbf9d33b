package source

// Fetcher fetches a source file by the build-id of the module whose line
// table names it and its path there (package debuginfod's Client); it
// returns the path of a local copy. It is an interface so that this
// package reads no network itself.
type Fetcher interface {
	Source(buildID []byte, path string) (string, error)
}

// Module sets the build-id Fetcher is asked by, unless one is set: the
// finder of one module's analysis, made before its file was read.
func (f *Finder) Module(buildID []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.BuildID) == 0 {
		f.BuildID = buildID
	}
}
