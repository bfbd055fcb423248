package dockerhost

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A file written while the sampler runs shows in the folder's size at the
// end; folders on one file system share
// one disk line; a folder not made yet is measured where it will be.
func TestSampler(t *testing.T) {
	dir := t.TempDir()
	folders := MeasuredFolders(dir, filepath.Join(dir, "not-yet"), "", "")
	s, err := StartSampler("test", folders, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 64<<20)
	for i := range data {
		data[i] = byte(i) // not sparse
	}
	if err := os.WriteFile(filepath.Join(dir, "blob"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	b := s.Stop(context.Background())
	if len(b.Disks) != 1 || len(b.Disks[0].Holds) != 2 {
		t.Fatalf("disks %+v", b.Disks)
	}
	// Other processes write and delete on the same file system meanwhile,
	// so the growth itself is not asserted, only that a peak was kept.
	if d := b.Disks[0]; d.Peak < d.Start || d.Peak < d.End {
		t.Errorf("disk %+v", d)
	}
	if b.Folders[0].Bytes < 64<<20 || b.Folders[1].Bytes != 0 {
		t.Errorf("folders %+v", b.Folders)
	}
	if len(b.Series) != 1 || len(b.Series[0].Disks) != 1 {
		t.Errorf("a run shorter than seriesEvery keeps its first sample: %+v", b.Series)
	}
	if b.MemPeak == 0 || b.MemPeak < b.MemStart || b.Samples < 2 {
		t.Errorf("memory %+v", b)
	}
	if !strings.Contains(b.Summary(), "peak memory in use") {
		t.Errorf("summary %q", b.Summary())
	}
}
