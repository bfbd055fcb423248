// Command release writes a release of ndfq into a folder (`make release
// VERSION=v0.1.0` runs it): archives, checksums, the image's OCI archive,
// the krew manifest and the Job manifest by digest.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/ndfq/ndfq/internal/progress"
	"github.com/ndfq/ndfq/internal/release"
)

func main() {
	var o release.Options
	flag.StringVar(&o.Version, "version", "", "the release's semver tag, e.g. v0.1.0 (required)")
	flag.StringVar(&o.Dist, "dist", "_dist", "the folder to write (emptied first)")
	flag.StringVar(&o.ImageRepo, "image-repo", release.DefaultImageRepo, "the repository the image is named in, and the Job runs it from")
	flag.StringVar(&o.JobTemplate, "job-template", "config/job/probe-job.yaml", "the Job manifest whose image is replaced by the digest")
	flag.StringVar(&o.Go, "go", "go", "the go command")
	flag.Parse()
	if flag.NArg() > 0 {
		fail(fmt.Errorf("no arguments expected, got %q", flag.Args()))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	o.Dir, o.Log = ".", progress.New(os.Stderr)
	var err error
	if o.Commit, o.Created, err = commit(ctx); err != nil {
		fail(err)
	}
	r, err := release.Make(ctx, o)
	if err != nil {
		fail(err)
	}
	for _, f := range r.Files {
		fmt.Printf("%s/%s\n", o.Dist, f)
	}
	fmt.Printf("%s/checksums.txt\nimage %s\n", o.Dist, r.ImageRef)
}

// commit is HEAD (with -dirty for a changed tree) and its time, which
// SOURCE_DATE_EPOCH replaces as reproducible builds define it.
func commit(ctx context.Context) (string, time.Time, error) {
	out, err := exec.CommandContext(ctx, "git", "log", "-1", "--format=%H %ct").Output()
	if err != nil {
		return "", time.Time{}, fmt.Errorf("git log: %w (a release is made from a git checkout)", err)
	}
	hash, ct, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		ct = s
	}
	secs, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("commit time %q: %w", ct, err)
	}
	if dirty, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(dirty) > 0 {
		hash += "-dirty"
	}
	return hash, time.Unix(secs, 0).UTC(), nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "release:", err)
	os.Exit(2)
}
