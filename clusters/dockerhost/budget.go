package dockerhost

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Budget is what a command cost this host while it ran: the peak of
// memory in use (MemTotal - MemAvailable: processes, page cache that
// cannot be dropped, and every kind node's containers) and of disk in use
// on each file system holding one of the measured folders, each against
// its value when the command started; the folders' sizes when it ended.
// A hosted runner's budget (16 GB of memory, ~14 GB of free disk) is held
// to these figures (docs/performance.md).
type Budget struct {
	Command      string        `json:"command"`
	Took         time.Duration `json:"tookNanos"`
	Samples      int           `json:"samples"`
	MemStart     uint64        `json:"memoryStartBytes"`
	MemPeak      uint64        `json:"memoryPeakBytes"`
	MemPeakAt    time.Duration `json:"memoryPeakAfterNanos"`
	Disks        []DiskUse     `json:"disks"`
	Folders      []FolderSize  `json:"folders"`
	SampleErrors int           `json:"sampleErrors,omitempty"`
	// Series is one sample every seriesEvery: where in the run the
	// peaks were (read beside the suite's own timeline).
	Series []Sample `json:"series"`
}

// Sample is memory and each disk's use at one moment of the run.
type Sample struct {
	After time.Duration `json:"afterNanos"`
	Mem   uint64        `json:"memoryBytes"`
	Disks []uint64      `json:"diskBytes"` // in Budget.Disks' order
}

// seriesEvery is how often a sample is kept in the series.
const seriesEvery = 15 * time.Second

// DiskUse is one file system's use: at the start, at its peak, at the end.
type DiskUse struct {
	Mount     string        `json:"mount"`
	Holds     []string      `json:"holds"` // the measured folders on it
	Start     uint64        `json:"startBytes"`
	Peak      uint64        `json:"peakBytes"`
	End       uint64        `json:"endBytes"`
	PeakAfter time.Duration `json:"peakAfterNanos"`
}

// Growth is how much more of the file system was in use at the peak.
func (d DiskUse) Growth() int64 { return int64(d.Peak) - int64(d.Start) }

// FolderSize is one measured folder's size at the end (0 if absent).
type FolderSize struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Bytes uint64 `json:"bytes"`
}

// MeasuredFolders are where a run puts what stays on disk: Docker's data,
// ndfq's build cache, the Go build and module caches ("" leaves one out).
func MeasuredFolders(dockerRoot, ndfqCache, goCache, goModCache string) []FolderSize {
	var out []FolderSize
	for _, f := range []FolderSize{{Name: "docker", Path: dockerRoot}, {Name: "ndfq cache", Path: ndfqCache},
		{Name: "go build cache", Path: goCache}, {Name: "go module cache", Path: goModCache}} {
		if f.Path != "" {
			out = append(out, f)
		}
	}
	return out
}

// Sampler samples memory and disk every interval until Stop.
type Sampler struct {
	interval time.Duration
	start    time.Time
	b        Budget
	stop     chan struct{}
	done     chan struct{}
}

// StartSampler takes the first sample and samples on until Stop.
func StartSampler(command string, folders []FolderSize, interval time.Duration) (*Sampler, error) {
	s := &Sampler{interval: interval, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	s.b.Command, s.b.Folders = command, folders
	mem, err := memInUse()
	if err != nil {
		return nil, err
	}
	s.b.MemStart, s.b.MemPeak = mem, mem
	byDev := map[uint64]int{}
	for _, f := range folders {
		dir := existingParent(f.Path)
		var st syscall.Stat_t
		if err := syscall.Stat(dir, &st); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", f.Name, f.Path, err)
		}
		if i, ok := byDev[st.Dev]; ok {
			s.b.Disks[i].Holds = append(s.b.Disks[i].Holds, f.Name)
			continue
		}
		used, err := diskInUse(dir)
		if err != nil {
			return nil, err
		}
		byDev[st.Dev] = len(s.b.Disks)
		s.b.Disks = append(s.b.Disks, DiskUse{Mount: mountPoint(dir, st.Dev), Holds: []string{f.Name}, Start: used, Peak: used, End: used})
	}
	go s.loop()
	return s, nil
}

func (s *Sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			s.sample()
			return
		case <-t.C:
			s.sample()
		}
	}
}

func (s *Sampler) sample() {
	s.b.Samples++
	after := time.Since(s.start)
	keep := Sample{After: after}
	if mem, err := memInUse(); err != nil {
		s.b.SampleErrors++
	} else {
		keep.Mem = mem
		if mem > s.b.MemPeak {
			s.b.MemPeak, s.b.MemPeakAt = mem, after
		}
	}
	for i := range s.b.Disks {
		d := &s.b.Disks[i]
		used, err := diskInUse(d.Mount)
		keep.Disks = append(keep.Disks, used)
		if err != nil {
			s.b.SampleErrors++
			continue
		}
		d.End = used
		if used > d.Peak {
			d.Peak, d.PeakAfter = used, after
		}
	}
	if n := len(s.b.Series); n == 0 || after-s.b.Series[n-1].After >= seriesEvery {
		s.b.Series = append(s.b.Series, keep)
	}
}

// Stop takes a last sample and each folder's size (a walk: seconds on a
// large build cache) and returns the budget.
func (s *Sampler) Stop(ctx context.Context) Budget {
	close(s.stop)
	<-s.done
	s.b.Took = time.Since(s.start)
	for i := range s.b.Folders {
		s.b.Folders[i].Bytes = folderSize(ctx, s.b.Folders[i].Path)
	}
	return s.b
}

// Summary is the budget in one line, for logs and .ci/run's output.
func (b Budget) Summary() string {
	parts := []string{fmt.Sprintf("peak memory in use %s (%s at the start, +%s, %s in)", gib(b.MemPeak), gib(b.MemStart), gib(b.MemPeak-b.MemStart), b.MemPeakAt.Round(time.Second))}
	for _, d := range b.Disks {
		parts = append(parts, fmt.Sprintf("disk %s (%s): peak %s in use, %+.1f GiB over the start, %+.1f GiB at the end", d.Mount, strings.Join(d.Holds, ", "), gib(d.Peak), float64(d.Growth())/(1<<30), (float64(d.End)-float64(d.Start))/(1<<30)))
	}
	var sizes []string
	for _, f := range b.Folders {
		sizes = append(sizes, fmt.Sprintf("%s %s", f.Name, gib(f.Bytes)))
	}
	parts = append(parts, "at the end: "+strings.Join(sizes, ", "))
	return strings.Join(parts, "; ")
}

func gib(b uint64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

// memInUse is MemTotal - MemAvailable from /proc/meminfo.
func memInUse() (uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	vals := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && slices.Contains([]string{"MemTotal:", "MemAvailable:"}, fields[0]) {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo %s: %w", fields[0], err)
			}
			vals[fields[0]] = kb * 1024
		}
	}
	total, avail := vals["MemTotal:"], vals["MemAvailable:"]
	if total == 0 || avail == 0 {
		return 0, fmt.Errorf("/proc/meminfo has no MemTotal or MemAvailable")
	}
	return total - avail, sc.Err()
}

// diskInUse is the bytes in use on the file system holding dir.
func diskInUse(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return (st.Blocks - st.Bfree) * uint64(st.Bsize), nil
}

// existingParent is path, or its nearest existing parent (a cache a cold
// run has not made yet is measured on the file system it will be on).
func existingParent(path string) string {
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil || p == filepath.Dir(p) {
			return p
		}
	}
}

// mountPoint is the topmost parent of dir on the same device.
func mountPoint(dir string, dev uint64) string {
	for {
		parent := filepath.Dir(dir)
		var st syscall.Stat_t
		if parent == dir || syscall.Stat(parent, &st) != nil || st.Dev != dev {
			return dir
		}
		dir = parent
	}
}

// folderSize is the allocated size of every file under root (0 if absent
// or cut short by ctx); hard links are counted once.
func folderSize(ctx context.Context, root string) uint64 {
	var total uint64
	seen := map[[2]uint64]bool{}
	_ = filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file gone or unreadable mid-walk: skipped
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			key := [2]uint64{st.Dev, st.Ino}
			if st.Nlink > 1 && seen[key] {
				return nil
			}
			seen[key] = true
			total += uint64(st.Blocks) * 512
		}
		return nil
	})
	return total
}
