package release

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ArchiveName is the archive of a platform's binary, as krew and the
// install section name it.
func ArchiveName(version string, p Platform) string {
	return fmt.Sprintf("ndfq_%s_%s_%s.tar.gz", version, p.OS, p.Arch)
}

// ArchiveFile is one file of an archive: its name inside and its source.
type ArchiveFile struct {
	Name string
	Src  string
	Mode int64
}

// WriteArchive packs files into a gzipped tar with one modification time
// and no owner, so the same inputs give the same bytes and checksum.
func WriteArchive(out string, files []ArchiveFile, mtime time.Time) error {
	return writeFile(out, func(w io.Writer) error { return writeTarGz(w, files, mtime) })
}

// writeFile creates path and hands it to write; a failed close is an error.
func writeFile(path string, write func(io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	return write(f)
}

func writeTarGz(w io.Writer, files []ArchiveFile, mtime time.Time) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for _, a := range files {
		data, err := os.ReadFile(a.Src)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: a.Name, Mode: a.Mode, Size: int64(len(data)), ModTime: mtime.UTC(), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// FileSHA256 is the hex SHA-256 of a file.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// WriteChecksums writes dir/checksums.txt for the named files of dir, in
// the format `sha256sum -c checksums.txt` reads there.
func WriteChecksums(dir string, names []string) error {
	names = append([]string(nil), names...)
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		sum, err := FileSHA256(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, n)
	}
	return os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(b.String()), 0o644)
}
