package release

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/ndfq/ndfq/internal/progress"
)

// Options say what a release is and where it goes.
type Options struct {
	Version     string
	Commit      string
	Created     time.Time // the archives' and image's time: the commit's, for reproducible bytes
	Dir         string    // the module's root
	Dist        string    // the output folder; emptied first
	ImageRepo   string    // the repository the Job's image is named in
	JobTemplate string    // config/job/probe-job.yaml
	Go          string
	Log         *progress.Logger
}

// Result names what Make wrote.
type Result struct {
	Files    []string // every artifact, relative to Dist, all in checksums.txt
	ImageRef string   // repo@sha256:... the Job runs
}

// KrewManifestName and JobManifestName are the release's manifests.
const (
	KrewManifestName = "ndfq.krew.yaml"
	JobManifestName  = "probe-job.yaml"
)

// RBACManifests are the probe's roles a release ships, by their names in
// the release and their files in the repository.
var RBACManifests = map[string]string{"rbac-probe.yaml": "config/rbac/probe.yaml", "rbac-kubelet.yaml": "config/rbac/kubelet.yaml",
	"rbac-node-writes.yaml": "config/rbac/node-writes.yaml", "rbac-synthetic-node.yaml": "config/rbac/synthetic-node.yaml"}

// Make builds a release into Dist: archives, the image archive, the krew
// and Job manifests, and checksums.txt over all of them. Last it runs the
// host's binary, which must say the version it was released as.
func Make(ctx context.Context, o Options) (Result, error) {
	var r Result
	if err := CheckVersion(o.Version); err != nil {
		return r, err
	}
	tmpl, err := os.ReadFile(o.JobTemplate)
	if err != nil {
		return r, fmt.Errorf("the Job template: %w", err)
	}
	if err := os.RemoveAll(o.Dist); err != nil {
		return r, err
	}
	b := Build{Go: o.Go, Dir: o.Dir, Version: o.Version, Commit: o.Commit}
	linux := map[Platform]string{}
	for _, p := range Platforms {
		bin := BinaryPath(o.Dist, p)
		done := o.Log.Step("go build %s", p)
		err := b.Binary(ctx, p, bin)
		done(err)
		if err != nil {
			return r, err
		}
		if p.OS == "linux" {
			linux[p] = bin
		}
		archive := ArchiveName(o.Version, p)
		files := []ArchiveFile{{Name: "ndfq", Src: bin, Mode: 0o755}}
		for _, doc := range []string{"LICENSE", "README.md", "CHANGELOG.md"} {
			files = append(files, ArchiveFile{Name: doc, Src: filepath.Join(o.Dir, doc), Mode: 0o644})
		}
		if err := WriteArchive(filepath.Join(o.Dist, archive), files, o.Created); err != nil {
			return r, err
		}
		r.Files = append(r.Files, archive)
	}
	done := o.Log.Step("image index for %d linux platforms", len(linux))
	idx, err := ImageIndex(ImageInput{Version: o.Version, Commit: o.Commit, Binaries: linux, Created: o.Created})
	if err == nil {
		r.ImageRef, err = WriteImageArchive(filepath.Join(o.Dist, ImageArchiveName(o.Version)), idx, o.ImageRepo, o.Version)
	}
	done(err)
	if err != nil {
		return r, err
	}
	job, err := JobManifest(tmpl, r.ImageRef, o.Version)
	if err != nil {
		return r, err
	}
	krew, err := KrewManifest(o.Dist, o.Version)
	if err != nil {
		return r, err
	}
	manifests := map[string][]byte{JobManifestName: job, KrewManifestName: krew}
	// The Job's roles ship beside it: a user without a checkout applies them by URL.
	for name, src := range RBACManifests {
		if manifests[name], err = os.ReadFile(filepath.Join(o.Dir, src)); err != nil {
			return r, err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(manifests)) {
		if err := os.WriteFile(filepath.Join(o.Dist, name), manifests[name], 0o644); err != nil {
			return r, err
		}
	}
	r.Files = append(r.Files, ImageArchiveName(o.Version))
	r.Files = append(r.Files, slices.Sorted(maps.Keys(manifests))...)
	if err := WriteChecksums(o.Dist, r.Files); err != nil {
		return r, err
	}
	return r, checkHostBinary(ctx, o)
}

// checkHostBinary runs the binary built for this machine, if any.
func checkHostBinary(ctx context.Context, o Options) error {
	host := Platform{runtime.GOOS, runtime.GOARCH}
	out, err := exec.CommandContext(ctx, BinaryPath(o.Dist, host), "version", "-o", "json").Output()
	if err != nil {
		return fmt.Errorf("the %s binary: ndfq version: %w", host, err)
	}
	var info struct{ Version string }
	if err := json.Unmarshal(out, &info); err != nil || info.Version != o.Version {
		return fmt.Errorf("the %s binary says %s, want version %s", host, out, o.Version)
	}
	o.Log.Printf("the %s binary says %s", host, info.Version)
	return nil
}
