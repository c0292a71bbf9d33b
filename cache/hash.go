package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"bloop/atomicfile"
)

// FileHash returns the SHA-256 of the file name's content. Hashing a
// 100 MB debug file costs more than the rest of a hit, so the hash is
// remembered with the file's identity (device, inode, size, modification
// and change times): a rewritten file always gets a new change time,
// which no user can set back.
func (c *Cache) FileHash(name string) (string, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a regular file", name)
	}
	id := Identity(st)
	memo := filepath.Join(c.dir, "hash", Key(abs))
	if b, err := os.ReadFile(memo); err == nil {
		if got, sum, ok := strings.Cut(string(b), "\n"); ok && got == id && len(sum) == 64 {
			return sum, nil
		}
	}
	sum, err := hashFile(abs)
	if err != nil {
		return "", err
	}
	// The memo is an optimisation: failing to write it is not an error.
	if os.MkdirAll(filepath.Dir(memo), 0o755) == nil {
		atomicfile.WriteFile(memo, []byte(id+"\n"+sum))
	}
	return sum, nil
}

// Identity is what changes whenever the content of the file st
// describes may have: its device and inode, size, modification and
// change times.
func Identity(st os.FileInfo) string {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprintf("size=%d mtime=%d", st.Size(), st.ModTime().UnixNano())
	}
	return fmt.Sprintf("dev=%d ino=%d size=%d mtime=%d.%d ctime=%d.%d",
		s.Dev, s.Ino, s.Size, s.Mtim.Sec, s.Mtim.Nsec, s.Ctim.Sec, s.Ctim.Nsec)
}

// HashFile returns the SHA-256 of the file name's content, hex, without
// a cache to remember it in.
func HashFile(name string) (string, error) { return hashFile(name) }

func hashFile(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
